package h3engine_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/h3serve/certtest"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run/runtest"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
)

// hail rejecting the server's certificate is named by its cause, with the
// hint for it, over HTTP/3 as over TCP: without the server's CA, "tls
// unknown certificate authority" and --cacert (HTTP/3 said "tls client
// certificate rejected" and hinted --cert/--key); for another name, "tls
// certificate name mismatch" and a hint naming the names the certificate
// is issued for.
func TestTLSRejectionNamed(t *testing.T) {
	t.Parallel()
	pki := certtest.New(t, "test CA", "api.example.test", "www.example.test")
	_, h3base, _ := servetest.StartH3(t, h3serve.Config{Cert: pki.Server})
	tcp := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tcp.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Server}}
	tcp.StartTLS()
	t.Cleanup(tcp.Close)
	for _, tc := range []struct {
		name, base, version string
	}{{"h3", h3base, "3"}, {"tcp", tcp.URL, ""}} {
		for _, c := range []struct {
			name, ca, server, kind string
			hint                   []string
		}{
			{name: "unknown-authority", kind: "tls unknown certificate authority", hint: []string{"--cacert FILE"}},
			{name: "name-mismatch", ca: pki.CAFile, server: "other.test", kind: "tls certificate name mismatch",
				hint: []string{"not issued for the name hail checks, other.test", "it is issued for api.example.test, www.example.test, 127.0.0.1"}},
		} {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				u, _ := url.Parse(tc.base + "/")
				p := &plan.Plan{URL: u, Method: "GET", Connections: 2, Streams: 1, HTTPVersion: plan.Proto(tc.version), KeepAlive: true,
					ConnectTimeout: 3 * time.Second, Engine: "auto", Requests: 6, CACert: c.ca, ServerName: c.server}
				res := runtest.Run(t, p)
				if got := res.ErrorDistribution[c.kind]; got != 6 {
					t.Errorf("errors %v, want 6 × %q", res.ErrorDistribution, c.kind)
				}
				hints := strings.Join(res.Hail.Hints, "\n")
				for _, w := range c.hint {
					if !strings.Contains(hints, w) {
						t.Errorf("hints %q lack %q", res.Hail.Hints, w)
					}
				}
			})
		}
	}
}
