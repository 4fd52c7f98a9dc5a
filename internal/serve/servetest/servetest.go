// Package servetest starts the built-in target (internal/serve) for tests, the way
// net/http/httptest starts an http.Server: on a free loopback port, closed when the test ends.
package servetest

import (
	"testing"

	"hail/internal/serve"
)

// Start serves serve.Config{Addr: "127.0.0.1:0"} until tb ends and returns its base URL
// ("http://127.0.0.1:PORT") and the server, whose Stats the test can read.
func Start(tb testing.TB) (string, *serve.Server) {
	tb.Helper()
	s := serve.New(serve.Config{Addr: "127.0.0.1:0"})
	a, err := s.Listen()
	if err != nil {
		tb.Fatal(err)
	}
	go s.Serve()
	tb.Cleanup(func() { s.Close() })
	return "http://" + a.String(), s
}
