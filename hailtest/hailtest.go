// Package hailtest starts hail serve, hail's built-in target, inside a Go
// test, as net/http/httptest starts an http.Server: a fast HTTP/1.1 server
// on a free loopback port with the same paths and faults as the command's
// (delay=, status=, size=, stall=, close=, chunked=, /echo, /items), and
// its own request counts to check a load test against.
package hailtest

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/serve"
)

// Server is a running built-in target.
type Server struct {
	// URL is its base URL, http://127.0.0.1:PORT.
	URL string
	s   *serve.Server
}

// Stats are the server's own counts.
type Stats = serve.Stats

// NewServer starts the target until tb ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s, err := Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Start starts the target; Close stops it.
func Start() (*Server, error) {
	s := serve.New(serve.Config{Addr: "127.0.0.1:0"})
	addr, err := s.Listen()
	if err != nil {
		return nil, err
	}
	go s.Serve()
	return &Server{URL: "http://" + addr.String(), s: s}, nil
}

// Close stops the server and closes its connections.
func (s *Server) Close() error { return s.s.Close() }

// Stats returns the server's counts so far: requests received, by status,
// connections, bytes, and the /items resource's.
func (s *Server) Stats() Stats { return s.s.Stats() }
