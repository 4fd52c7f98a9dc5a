package testnet

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/listen"
)

// Serve answers on TCP and unix sockets, and at the test's end closes the
// connections still open and waits for their handlers.
func TestServe(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:0", "unix:" + filepath.Join(t.TempDir(), "s.sock")} {
		ended := make(chan error, 1)
		var client net.Conn
		if !t.Run(addr, func(t *testing.T) {
			bound := Serve(t, addr, func(c net.Conn) {
				io.WriteString(c, "hi")
				_, err := c.Read(make([]byte, 1)) // until the end closes c
				ended <- err
			})
			network := "tcp"
			if addr[0] == 'u' {
				network = "unix"
			}
			c, err := net.DialTimeout(network, bound, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			client = c
			b := make([]byte, 2)
			if _, err := io.ReadFull(c, b); err != nil || string(b) != "hi" {
				t.Fatalf("read %q, %v", b, err)
			}
		}) {
			continue
		}
		select {
		case err := <-ended:
			if err == nil {
				t.Errorf("%s: the handler's read ended without an error", addr)
			}
		default:
			t.Errorf("%s: the handler had not returned when the test ended", addr)
		}
		client.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := client.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("%s: the connection was open after the test ended: %d, %v", addr, n, err)
		}
		client.Close()
	}
}

func TestListen(t *testing.T) {
	t.Parallel()
	var ln net.Listener
	t.Run("bound", func(t *testing.T) {
		ln = Listen(t)
		if a := ln.Addr().(*net.TCPAddr); !a.IP.IsLoopback() || a.Port == 0 {
			t.Errorf("bound %v", a)
		}
	})
	if _, err := ln.Accept(); err == nil {
		t.Error("the listener was open after the test ended")
	}
}

// Start serves until the test ends, then closes the server and waits for
// Serve.
func TestStart(t *testing.T) {
	t.Parallel()
	s := listen.NewServer(listen.Config{Name: "test", Addr: "127.0.0.1:0", Handle: func(c net.Conn) {
		io.WriteString(c, "hi")
		c.Close()
	}})
	var bound net.Addr
	if !t.Run("serving", func(t *testing.T) {
		bound = Start(t, s)
		c, err := net.DialTimeout("tcp", bound.String(), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if b, err := io.ReadAll(c); err != nil || string(b) != "hi" {
			t.Errorf("read %q, %v", b, err)
		}
	}) {
		return
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("the server was not closed when the test ended")
	}
	if c, err := net.DialTimeout("tcp", bound.String(), 10*time.Second); err == nil {
		c.Close()
		t.Error("the server still accepts after the test ended")
	}
}

// Gate answers none of its first n requests before the n-th arrives.
func TestGate(t *testing.T) {
	t.Parallel()
	base, served := Gate(t, 3, "ok")
	bodies := make(chan string, 3)
	get := func() {
		r, err := http.Get(base + "/")
		if err != nil {
			bodies <- err.Error()
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		bodies <- string(b)
	}
	go get()
	go get()
	select {
	case b := <-bodies:
		t.Fatalf("answered %q before the third request", b)
	case <-time.After(100 * time.Millisecond):
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("%d answered before the third request", n)
	}
	go get()
	for range 3 {
		if b := <-bodies; b != "ok" {
			t.Errorf("body %q", b)
		}
	}
	if n := served.Load(); n != 3 {
		t.Errorf("served %d, want 3", n)
	}
}
