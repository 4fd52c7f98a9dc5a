// Package testnet runs loopback servers in tests: a listener whose every
// connection a test's handler serves on a goroutine of its own, closed with
// the connections still open when the test ends, their goroutines waited
// for. It serves with internal/listen's Server, as the built-in servers do.
package testnet

import (
	"net"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/listen"
)

// Listen binds 127.0.0.1:0 and closes the listener when the test ends. The
// test fails if it cannot bind.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// Serve binds addr ("127.0.0.1:0", "[::1]:0", "unix:/path") and serves
// every connection with handle, on a goroutine of its own, until the test
// ends; the connection is closed when handle returns. When the test ends
// the listener and every connection still open are closed, and the test
// waits for every handle to return (a handle must end when its connection
// is closed). It returns the bound address; the test fails if addr cannot
// be bound, or if Close or Serve returns an error (see Start).
func Serve(t testing.TB, addr string, handle func(c net.Conn)) string {
	t.Helper()
	s := listen.NewServer(listen.Config{Name: "testnet", Addr: addr, Handle: func(c net.Conn) {
		defer c.Close()
		handle(c)
	}})
	return Start(t, waited{s}).String()
}

// waited is a listen.Server whose Close waits for its handlers too.
type waited struct{ *listen.Server }

func (w waited) Close() error {
	err := w.Server.Close()
	w.Wait()
	return err
}

// Server is a server Start runs: bound by Listen, serving in Serve until
// Close, as hail's built-in servers (serve, llmserve, h3serve) are.
type Server interface {
	Listen() (net.Addr, error)
	Serve() error
	Close() error
}

// Start binds s and serves it until the test ends, then closes it; the test
// fails if s cannot bind, if Close or Serve returns an error, or if Serve
// has not returned 10 s after Close. It returns the bound address.
func Start(t testing.TB, s Server) net.Addr {
	t.Helper()
	a, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after Close")
		}
	})
	return a
}
