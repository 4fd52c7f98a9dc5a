package testnet

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// A refused address refuses connects and cannot be listened on while its
// test runs; when the test ends its port is free again.
func TestRefusedAddr(t *testing.T) {
	t.Parallel()
	var addr string
	t.Run("held", func(t *testing.T) {
		addr = RefusedAddr(t)
		for range 3 {
			if c, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
				if c != nil {
					c.Close()
				}
				t.Fatalf("dial %s: %v, want connection refused", addr, err)
			}
		}
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Errorf("listened on %s while it was held", addr)
		}
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("after the test: %v, want the port free", err)
	}
	ln.Close()
}
