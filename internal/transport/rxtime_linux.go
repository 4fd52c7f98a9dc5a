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

// stampConn is a TCP connection whose reads also take the kernel's receive
// time of the bytes read (SO_TIMESTAMPNS): hail's read lag of a stream's
// events is the time from then to its reading them. Reads are recvmsg
// calls through the runtime's poller (deadlines work as on any TCP
// connection), allocating nothing.
type stampConn struct {
	*net.TCPConn
	rc   syscall.RawConn
	read func(fd uintptr) bool // recvmsg into buf, made once
	buf  []byte
	n    int
	err  error
	last int64 // the last read's receive time, Unix ns; 0: unknown
	msg  unix.Msghdr
	iov  unix.Iovec
	oob  [64]byte
}

// stamp turns c into a stampConn when the kernel gives receive times;
// otherwise c stays as it is.
func stamp(c *net.TCPConn) net.Conn {
	rc, err := c.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	s := &stampConn{TCPConn: c, rc: rc}
	s.read = s.recvmsg
	return s
}

// Read reads as net.Conn's Read does, noting the bytes' receive time.
func (s *stampConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	s.buf, s.n, s.err = b, 0, nil
	if err := s.rc.Read(s.read); err != nil {
		return 0, err
	}
	switch {
	case s.err != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: s.err}
	case s.n == 0:
		return 0, io.EOF
	}
	return s.n, nil
}

// recvmsg is one non-blocking recvmsg into s.buf; false asks the poller to
// wait until the socket is readable.
func (s *stampConn) recvmsg(fd uintptr) bool {
	s.iov.Base = &s.buf[0]
	s.iov.SetLen(len(s.buf))
	s.msg.Iov, s.msg.Iovlen = &s.iov, 1
	s.msg.Control = &s.oob[0]
	s.msg.SetControllen(len(s.oob))
	for {
		n, _, errno := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&s.msg)), unix.MSG_DONTWAIT)
		switch errno {
		case 0:
			s.n = int(n)
			if rx := uring.RxTime(s.oob[:s.msg.Controllen]); rx > 0 {
				s.last = rx
			}
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		s.err = errno
		return true
	}
}

// RxTime is the kernel's receive time (Unix ns) of the bytes c's last read
// returned, when c (or the connection under its TLS) takes receive times
// (Options.RxTimes); 0 otherwise. Bytes a TLS connection had buffered came
// with an earlier read: their time is that read's or earlier.
func RxTime(c net.Conn) int64 {
	for {
		switch x := c.(type) {
		case *stampConn:
			return x.last
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return 0
		}
	}
}
