// Package listen binds and accepts for hail's built-in servers
// (internal/serve, internal/llmserve): an address "host:port" or
// "unix:/path", where a socket file a dead server left is replaced; an
// accept that rides out temporary errors and ends when the server closes;
// and Server, the bookkeeping both keep to start and stop (the listener
// bound once, each connection on a goroutine of its own, Close).
package listen

import (
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// Listen binds addr: "unix:/path" a unix socket at path, anything else a
// TCP address. A socket file at path that nobody accepts on (left by a
// server that died) is removed and the bind tried again; one a live server
// holds, or a file that is not a socket, is an error.
func Listen(addr string) (net.Listener, error) {
	network, address := "tcp", addr
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, address = "unix", path
	}
	ln, err := net.Listen(network, address)
	if err != nil && network == "unix" && errors.Is(err, syscall.EADDRINUSE) {
		if c, derr := net.DialTimeout("unix", address, time.Second); derr == nil {
			c.Close()
		} else if fi, serr := os.Lstat(address); serr == nil && fi.Mode()&os.ModeSocket != 0 && errors.Is(derr, syscall.ECONNREFUSED) {
			if os.Remove(address) == nil {
				ln, err = net.Listen(network, address)
			}
		}
	}
	return ln, err
}

// Accept returns ln's next connection. On a temporary error (out of file
// descriptors and the like) it waits, 5 ms doubling up to 1 s, and tries
// again. It returns nil, nil once done is closed (the server's Close, which
// closes ln too), and the error that ended accepting otherwise.
func Accept(ln net.Listener, done <-chan struct{}) (net.Conn, error) {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err == nil {
			return nc, nil
		}
		select {
		case <-done:
			return nil, nil
		default:
		}
		if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(backoff):
			case <-done:
				return nil, nil
			}
			continue
		}
		return nil, err
	}
}
