package h3engine_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/run/runtest"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/stats"
)

func h3plan(t *testing.T, rawURL, ca string) *plan.Plan {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return &plan.Plan{URL: u, Method: "GET", Connections: 2, Streams: 8, HTTPVersion: "3", KeepAlive: true,
		MaxRedirects: 10, ConnectTimeout: 3 * time.Second, Engine: "auto", Requests: 1000, CACert: ca}
}

// HTTP/3 against the in-repo quic-go server: every request counted once by
// both sides, c QUIC connections with their handshakes timed and counted.
func TestH3(t *testing.T) {
	t.Parallel()
	s, base, ca := servetest.StartH3(t, h3serve.Config{})
	res := runtest.Run(t, h3plan(t, base+"/", ca))
	c := res.Hail.Counts
	if c.Requests != 1000 || c.Responses != 1000 || res.StatusCodeDistribution["200"] != 1000 || s.Requests() != 1000 {
		t.Errorf("requests %d, responses %d, server %d, errors %v", c.Requests, c.Responses, s.Requests(), res.ErrorDistribution)
	}
	h := res.Hail
	if h.Engine != "h3" || h.Protocol != "h3" || h.Transport != "quic" || h.ALPN != "h3" || h.TLS == nil || h.TLS.Handshakes != 2 {
		t.Errorf("engine %q protocol %q transport %q alpn %q tls %+v", h.Engine, h.Protocol, h.Transport, h.ALPN, h.TLS)
	}
	if c.Connects != 2 || c.ConnectMin <= 0 || res.Details.DNSDialup.Average <= 0 {
		t.Errorf("connects %d, handshake min %dns, avg %v", c.Connects, c.ConnectMin, res.Details.DNSDialup.Average)
	}
	if c.BodyBytes != 12000 || c.WireBytes <= c.BodyBytes || c.SentBytes == 0 {
		t.Errorf("body %d wire %d sent %d", c.BodyBytes, c.WireBytes, c.SentBytes)
	}
}

// Reconnects resume the TLS session over QUIC too.
func TestH3Resumption(t *testing.T) {
	t.Parallel()
	s, base, ca := servetest.StartH3(t, h3serve.Config{})
	p := h3plan(t, base+"/", ca)
	p.KeepAlive, p.Streams, p.Connections, p.Requests = false, 1, 1, 20
	res := runtest.Run(t, p)
	if res.Hail.Counts.Responses != 20 {
		t.Fatalf("responses %d, errors %v", res.Hail.Counts.Responses, res.ErrorDistribution)
	}
	total, resumed := s.Connections()
	if tl := res.Hail.TLS; tl.Handshakes != 20 || tl.Resumptions < 15 || total != 20 || resumed != tl.Resumptions {
		t.Errorf("hail: %d handshakes, %d resumed; server: %d connections, %d resumed", tl.Handshakes, tl.Resumptions, total, resumed)
	}
}

// A server that requires a client certificate: without one every request
// is a named rejection.
func TestH3ClientCertRejected(t *testing.T) {
	t.Parallel()
	ca, caPEM, err := h3serve.Issue(nil, "client CA", nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	_ = ca
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	_, base, caFile := servetest.StartH3(t, h3serve.Config{ClientCAs: pool})
	p := h3plan(t, base+"/", caFile)
	p.Requests, p.Streams = 10, 1
	res := runtest.Run(t, p)
	if got := res.ErrorDistribution["tls client certificate rejected"]; got != 10 {
		t.Errorf("errors %v, want 10 client certificate rejections", res.ErrorDistribution)
	}
}

// A QUIC server that does not offer h3 ends the run with one clear error.
func TestH3NotOffered(t *testing.T) {
	t.Parallel()
	cert, _, err := h3serve.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listenQUIC(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"hq-interop"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := h3plan(t, "https://"+ln.Addr().String()+"/", "")
	p.Insecure = true
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	_, err = run.Run(context.Background(), p, run.Options{})
	if err == nil || !strings.Contains(err.Error(), "does not speak HTTP/3") {
		t.Fatalf("err = %v, want 'does not speak HTTP/3'", err)
	}
}

// A slow HTTP/3 server: -t ends each request as "request timeout" and the run ends soon after;
// a run whose server never answers ends at -z with its requests aborted, not hanging.
func TestH3Timeouts(t *testing.T) {
	t.Parallel()
	_, base, ca := servetest.StartH3(t, h3serve.Config{})
	p := h3plan(t, base+"/?delay=3s", ca)
	p.Requests, p.Streams, p.Timeout = 8, 2, 200*time.Millisecond
	start := time.Now()
	res := runtest.Run(t, p)
	if got := res.ErrorDistribution["request timeout"]; got != 8 {
		t.Errorf("errors %v, want 8 request timeouts", res.ErrorDistribution)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("8 requests, 4 in flight, -t 200ms took %v", el)
	}

	p = h3plan(t, base+"/?delay=3s", ca)
	p.Requests, p.Streams, p.Duration = 0, 2, 500*time.Millisecond
	start = time.Now()
	res = runtest.Run(t, p)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("-z 500ms took %v", el)
	}
	if got := res.ErrorDistribution["aborted due to deadline"]; got != 4 || res.Hail.Counts.Requests != 4 {
		t.Errorf("errors %v, requests %d: want the 4 in flight aborted at the deadline", res.ErrorDistribution, res.Hail.Counts.Requests)
	}
}

// Nothing listens on the UDP port: every connect fails within --connect-timeout as a named
// error, and the run ends.
func TestH3NoServer(t *testing.T) {
	t.Parallel()
	s, base, ca := servetest.StartH3(t, h3serve.Config{})
	s.Close() // a port that was just closed: nothing answers there
	p := h3plan(t, base+"/", ca)
	p.Requests, p.Connections, p.Streams, p.ConnectTimeout = 4, 2, 1, 300*time.Millisecond
	start := time.Now()
	res := runtest.Run(t, p)
	if res.Hail.Counts.Requests != 4 || res.Hail.Counts.Errors != 4 {
		t.Errorf("requests %d, errors %v: want 4 failed connects", res.Hail.Counts.Requests, res.ErrorDistribution)
	}
	t.Logf("errors %v", res.ErrorDistribution)
	for kind := range res.ErrorDistribution {
		if kind == "other i/o error" {
			t.Errorf("an unnamed error: %v", res.ErrorDistribution)
		}
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v with a 300ms connect timeout", el)
	}
}

// A redirect to an http:// origin, which HTTP/3 cannot reach, ends the
// request as a bad redirect, the kind every engine gives a redirect to an
// origin it cannot follow (engine.ErrOtherOrigin).
func TestH3RedirectToPlainOrigin(t *testing.T) {
	t.Parallel()
	_, base, ca := servetest.StartH3(t, h3serve.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
	})})
	p := h3plan(t, base+"/", ca)
	p.Requests, p.Streams = 10, 1
	res := runtest.Run(t, p)
	if got := res.ErrorDistribution[stats.ErrRedirect.String()]; got != 10 || res.Hail.Counts.Requests != 10 {
		t.Errorf("requests %d, errors %v: want 10 %q", res.Hail.Counts.Requests, res.ErrorDistribution, stats.ErrRedirect.String())
	}
}
