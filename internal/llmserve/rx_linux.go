package llmserve

import (
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/uring"
)

// rxState reads with recvmsg to get the kernel's receive time of each read
// (SO_TIMESTAMPNS, CLOCK_REALTIME), for the log.
type rxState struct {
	p      []byte
	oob    [64]byte
	n      int
	oobn   int
	err    error
	readFn func(fd uintptr) bool
}

// enableRxTime turns on receive timestamps on the socket.
func (c *conn) enableRxTime() bool {
	var err error
	if cerr := c.rc.Control(func(fd uintptr) {
		err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); cerr != nil || err != nil {
		return false
	}
	x := &c.rx
	x.readFn = func(fd uintptr) bool {
		x.n, x.oobn, _, _, x.err = unix.Recvmsg(int(fd), x.p, x.oob[:], 0)
		return x.err != unix.EAGAIN
	}
	return true
}

// readRx reads into p and notes the receive time in c.rxAt.
func (c *conn) readRx(p []byte) (int, error) {
	x := &c.rx
	x.p = p
	err := c.rc.Read(x.readFn)
	x.p = nil
	if err != nil {
		return 0, err
	}
	if x.err != nil {
		return 0, x.err
	}
	if x.n == 0 {
		return 0, io.EOF
	}
	if t := uring.RxTime(x.oob[:x.oobn]); t != 0 {
		c.rxAt = t
	}
	return x.n, nil
}

// enableListenerRx turns on receive timestamps on the listening socket, so
// that accepted connections have them from their first byte (a socket
// option set after accept misses the data that came with the handshake).
func enableListenerRx(ln net.Listener) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return
	}
	if rc, err := sc.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) })
	}
}
