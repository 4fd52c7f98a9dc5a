//go:build linux

package transport

import (
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/uring"
)

// RxReader reads a plain TCP or unix socket with recvmsg(2), asking the
// kernel for each read's receive time (SO_TIMESTAMPNS): the time the
// latest bytes read reached the machine. A response then ends when its
// last bytes arrived, not when hail got round to reading them — as on the
// io_uring engine — so time hail lost before reading (another process on
// its CPU, a stop) counts as hail's lateness, never as the target's, and
// a stream's read lag is measured. Reads go through the runtime's poller
// (deadlines work as on any connection); its buffers live in the reader
// (one per connection slot), so a read allocates nothing.
type RxReader struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // recv, bound once
	msg unix.Msghdr
	iov unix.Iovec
	oob [32]byte // one SCM_TIMESTAMPNS: unix.CmsgSpace(16)
	p   []byte   // the read's destination
	n   int
	err syscall.Errno
	// Rx is the receive time of the bytes last read, Unix ns; 0: none.
	Rx int64
}

// Attach sets r up for c, a *net.TCPConn or *net.UnixConn, or a TCP
// connection the dialer stamped (TLS, proxies and vsock are read as
// net.Conns, stamped by hail's clock, or through a connection under them
// the dialer stamped: RxTime). It reports whether r reads c.
func (r *RxReader) Attach(c net.Conn) bool {
	r.rc, r.Rx = nil, 0
	var sc syscall.Conn
	switch t := c.(type) {
	case *stampConn:
		sc = t.TCPConn
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

// Read reads into p as net.Conn.Read does (io.EOF at the peer's end; a
// deadline or a closed connection is the poller's error, a failed receive
// its errno) and keeps the bytes' receive time in r.Rx (0 when the kernel
// gave none).
func (r *RxReader) Read(p []byte) (int, error) {
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
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}

// recv is one recvmsg on fd; false (wait for the socket to be readable)
// when no bytes are there yet.
func (r *RxReader) recv(fd uintptr) bool {
	r.iov.Base = &r.p[0]
	r.iov.SetLen(len(r.p))
	r.msg.Iov = &r.iov
	r.msg.SetIovlen(1)
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	for {
		// A raw call: the socket is non-blocking (MSG_DONTWAIT too), so the
		// scheduler need not know of it (entering and leaving a system
		// call costs it a few hundred ns a read).
		n, _, e := unix.RawSyscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), unix.MSG_DONTWAIT)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		case 0:
			r.n = int(n)
			r.Rx = 0
			if n > 0 {
				r.Rx = uring.RxTime(r.oob[:r.msg.Controllen])
			}
		default:
			r.err = e
		}
		return true
	}
}

// stampConn is a TCP connection whose reads also take the kernel's receive
// time of the bytes read (an RxReader): for connections read through
// another layer (TLS, HTTP/2's framer), where RxTime finds it.
type stampConn struct {
	*net.TCPConn
	rx RxReader
}

// stamp turns c into a stampConn when the kernel gives receive times;
// otherwise c stays as it is.
func stamp(c *net.TCPConn) net.Conn {
	s := &stampConn{TCPConn: c}
	if !s.rx.Attach(c) {
		return c
	}
	return s
}

// Read reads as net.Conn's Read does, noting the bytes' receive time.
func (s *stampConn) Read(b []byte) (int, error) {
	n, err := s.rx.Read(b)
	if errno, ok := err.(syscall.Errno); ok {
		err = &net.OpError{Op: "read", Net: "tcp", Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: errno}
	}
	return n, err
}

// RxTime is the kernel's receive time (Unix ns) of the bytes c's last read
// returned, when c (or the connection under its TLS) takes receive times
// (Options.RxTimes); 0 otherwise. Bytes a TLS connection had buffered came
// with an earlier read: their time is that read's or earlier.
func RxTime(c net.Conn) int64 {
	for {
		switch x := c.(type) {
		case *stampConn:
			return x.rx.Rx
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return 0
		}
	}
}
