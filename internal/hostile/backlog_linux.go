//go:build linux

package hostile

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// listenBacklog1 listens on 127.0.0.1 with a backlog of 1 and never accepts.
func listenBacklog1() (net.Listener, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Listen(fd, 0); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "backlog1")
	defer f.Close()
	return net.FileListener(f)
}
