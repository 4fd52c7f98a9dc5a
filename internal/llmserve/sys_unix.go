//go:build unix

package llmserve

import "syscall"

// sysConn writes to and peeks at an HTTP/1 connection's socket without
// blocking, through its RawConn. The functions handed to the RawConn are
// made once per connection, so that a write allocates nothing.
type sysConn struct {
	c       *conn
	wbuf    []byte
	wn      int
	werr    error
	writeFn func(fd uintptr) bool
	pn      int
	perr    error
	peek    [1]byte
	peekFn  func(fd uintptr) bool
}

func (y *sysConn) init(c *conn) {
	y.c = c
	y.writeFn = func(fd uintptr) bool {
		for {
			y.wn, y.werr = syscall.Write(int(fd), y.wbuf)
			if y.werr != syscall.EINTR {
				return true
			}
		}
	}
	y.peekFn = func(fd uintptr) bool {
		y.pn, _, y.perr = syscall.Recvfrom(int(fd), y.peek[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}
}

// tryWrite writes what the socket takes now; an error means the client is
// gone.
func (y *sysConn) tryWrite(p []byte) (int, error) {
	if y.c.rc == nil {
		return 0, nil // the owner writes
	}
	y.wbuf = p
	err := y.c.rc.Write(y.writeFn)
	y.wbuf = nil
	switch {
	case err != nil:
		return 0, err
	case y.werr == syscall.EAGAIN:
		return 0, nil
	case y.werr != nil:
		return 0, y.werr
	}
	return y.wn, nil
}

// peerGone reports an end of file or an error waiting on the socket (data
// waiting, a pipelined request, is not gone).
func (y *sysConn) peerGone() bool {
	if y.c.rc == nil {
		return false
	}
	if err := y.c.rc.Read(y.peekFn); err != nil {
		return true
	}
	return y.perr == nil && y.pn == 0 || y.perr != nil && y.perr != syscall.EAGAIN
}
