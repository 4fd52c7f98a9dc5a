package testnet

import (
	"fmt"
	"syscall"
	"testing"
)

// RefusedAddr is a 127.0.0.1 TCP address whose every connect is refused:
// its port stays bound, without listening, until t ends, so the kernel
// answers a SYN to it with a reset. It is bound without SO_REUSEADDR, so
// no other socket can be given the port meanwhile; a port merely freed
// (listen, close) was once taken by a parallel test's server, and the run
// meant to be refused succeeded.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
