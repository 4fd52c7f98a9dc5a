//go:build unix

package llmserve

import (
	"syscall"
	"unsafe"
)

// sysConn writes to and peeks at an HTTP/1 connection's socket without
// blocking, through its RawConn. The functions handed to the RawConn are
// made once per connection, so that a write allocates nothing.
type sysConn struct {
	c       *conn
	wbuf    []byte
	wn      int
	werr    error
	writeFn func(fd uintptr)
	pn      int
	perr    error
	peek    [1]byte
	peekFn  func(fd uintptr)
}

func (y *sysConn) init(c *conn) {
	y.c = c
	// Raw system calls (see shardTimer): the socket is non-blocking, so
	// neither call can block.
	y.writeFn = func(fd uintptr) {
		for {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(y.wbuf))), uintptr(len(y.wbuf)))
			y.wn, y.werr = int(n), nil
			if e != 0 {
				y.wn, y.werr = 0, e
			}
			if e != syscall.EINTR {
				return
			}
		}
	}
	y.peekFn = func(fd uintptr) {
		n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&y.peek[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		y.pn, y.perr = int(n), nil
		if e != 0 {
			y.pn, y.perr = 0, e
		}
	}
}

// tryWrite writes what the socket takes now; an error means the client is
// gone.
func (y *sysConn) tryWrite(p []byte) (int, error) {
	if y.c.rc == nil {
		return 0, nil // the owner writes
	}
	y.wbuf = p
	err := y.c.rc.Control(y.writeFn) // Control: no poller preparation, which Write does each time
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
	if err := y.c.rc.Control(y.peekFn); err != nil {
		return true
	}
	return y.perr == nil && y.pn == 0 || y.perr != nil && y.perr != syscall.EAGAIN
}
