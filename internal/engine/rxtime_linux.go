//go:build linux

package engine

import (
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/uring"
)

// rxReader reads a plain TCP or unix socket with recvmsg(2), asking the
// kernel for each read's receive time (SO_TIMESTAMPNS): the time the
// latest bytes read reached the machine. A response then ends when its
// last bytes arrived, not when hail got round to reading them — as on the
// io_uring engine — so time hail lost before reading (another process on
// its CPU, a stop) counts as hail's lateness, never as the target's. Its
// buffers live in the reader (one per connection slot), so a read
// allocates nothing.
type rxReader struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // recv, bound once
	msg unix.Msghdr
	iov unix.Iovec
	oob [32]byte // one SCM_TIMESTAMPNS: unix.CmsgSpace(16)
	p   []byte   // the read's destination
	n   int
	err syscall.Errno
	rx  int64 // the receive time of the bytes last read, Unix ns; 0: none
}

// attach sets r up for c, a connection of the engines' own sockets: a
// *net.TCPConn or *net.UnixConn (TLS, proxies and vsock are read as
// net.Conns, stamped by hail's clock). It reports whether r reads c.
func (r *rxReader) attach(c net.Conn) bool {
	r.rc, r.rx = nil, 0
	var sc syscall.Conn
	switch t := c.(type) {
	case *net.TCPConn:
		sc = t
	case *net.UnixConn:
		sc = t
	default:
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return false
	}
	if r.fn == nil {
		r.fn = r.recv
	}
	r.rc = rc
	return true
}

// read reads into p as net.Conn.Read does (io.EOF at the peer's end; a
// deadline or a closed connection is the poller's error) and keeps the
// bytes' receive time in r.rx (0 when the kernel gave none).
func (r *rxReader) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.err = p, 0, 0
	if err := r.rc.Read(r.fn); err != nil {
		return 0, err
	}
	switch {
	case r.err != 0:
		return 0, r.err
	case r.n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return r.n, nil
}

// recv is one recvmsg on fd; false (wait for the socket to be readable)
// when no bytes are there yet.
func (r *rxReader) recv(fd uintptr) bool {
	r.iov.Base = &r.p[0]
	r.iov.SetLen(len(r.p))
	r.msg.Iov = &r.iov
	r.msg.SetIovlen(1)
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	for {
		n, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		case 0:
			r.n = int(n)
			r.rx = 0
			if n > 0 {
				r.rx = uring.RxTime(r.oob[:r.msg.Controllen])
			}
		default:
			r.err = e
		}
		return true
	}
}
