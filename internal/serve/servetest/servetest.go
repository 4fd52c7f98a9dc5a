// Package servetest starts the built-in targets for tests, the way net/http/httptest starts an
// http.Server: hail serve's HTTP/1 server (internal/serve) and the HTTP/3 one (internal/h3serve),
// on free loopback ports, closed when the test ends.
package servetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/serve"
	"github.com/hail-loadgen/hail/internal/testnet"
)

// Start serves serve.Config{Addr: "127.0.0.1:0"} until tb ends and returns its base URL
// ("http://127.0.0.1:PORT") and the server, whose Stats the test can read.
func Start(tb testing.TB) (string, *serve.Server) {
	tb.Helper()
	s := serve.New(serve.Config{Addr: "127.0.0.1:0"})
	return "http://" + testnet.Start(tb, s).String(), s
}

// StartH3 serves HTTP/3 with cfg (its Addr replaced by a free loopback UDP port) until tb ends,
// and returns the server, its base URL ("https://127.0.0.1:PORT") and a PEM file of the
// certificate to trust (for --cacert).
func StartH3(tb testing.TB, cfg h3serve.Config) (*h3serve.Server, string, string) {
	tb.Helper()
	cfg.Addr = "127.0.0.1:0"
	s := h3serve.New(cfg)
	a := testnet.Start(tb, s)
	ca := filepath.Join(tb.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, s.CertPEM(), 0o600); err != nil {
		tb.Fatal(err)
	}
	return s, "https://" + a.String(), ca
}
