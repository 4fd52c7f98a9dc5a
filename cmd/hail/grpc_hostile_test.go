package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// hail grpc against a server that accepts connections and never speaks:
// the call fails at --connect-timeout, saying it timed out waiting for the
// server's HTTP/2 settings (it failed after 7 s with --connect-timeout 2s,
// saying the server "closed the connection at the HTTP/2 preface").
func TestGRPCSilentServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	start := time.Now()
	_, errOut, code := hail(t, "grpc", "--no-tui", "--insecure", "--connect-timeout", "1s", "--call", "hail.v1.Target/Echo", "-n", "2", ln.Addr().String())
	took := time.Since(start)
	if code != 1 || !strings.Contains(errOut, "timed out after 1s waiting for them (--connect-timeout)") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if took < time.Second || took > 3*time.Second {
		t.Errorf("took %v with --connect-timeout 1s", took)
	}
}
