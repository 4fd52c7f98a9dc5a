package h2engine_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/h3serve/certtest"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/run/runtest"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/testnet"
	"github.com/hail-loadgen/hail/internal/testtier"
	"github.com/hail-loadgen/hail/result"
)

func h2plan(t *testing.T, rawURL string) *plan.Plan {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return &plan.Plan{URL: u, Method: "GET", Connections: 4, Streams: 8, HTTPVersion: "2", KeepAlive: true,
		MaxRedirects: 10, ConnectTimeout: 2 * time.Second, Engine: "auto", Requests: 2000}
}

func checkAll(t *testing.T, res *result.Result, n int64) {
	t.Helper()
	c := res.Hail.Counts
	if c.Requests != n || c.Responses != n || res.StatusCodeDistribution["200"] != n {
		t.Errorf("requests %d, responses %d, 200s %d, want %d each (errors %v)", c.Requests, c.Responses,
			res.StatusCodeDistribution["200"], n, res.ErrorDistribution)
	}
	if res.Hail.Engine != "h2" && res.Hail.Engine != "h3" {
		t.Errorf("engine %q", res.Hail.Engine)
	}
	if c.BodyBytes != n*12 {
		t.Errorf("body bytes %d, want %d", c.BodyBytes, n*12)
	}
	if c.WireBytes <= c.BodyBytes || c.SentBytes == 0 {
		t.Errorf("wire bytes %d, sent %d: not counted", c.WireBytes, c.SentBytes)
	}
}

// h2c with prior knowledge: c connections carry c × p streams; every request
// is counted once by the server and the report, and arrived as HTTP/2.
func TestH2C(t *testing.T) {
	t.Parallel()
	s := servetest.StartH2(t, testnet.Listen(t), nil, nil)
	p := h2plan(t, s.URL+"/")
	res := runtest.Run(t, p)
	checkAll(t, res, 2000)
	if s.Requests.Load() != 2000 || s.H2.Load() != 2000 {
		t.Errorf("server saw %d requests, %d over HTTP/2; want 2000", s.Requests.Load(), s.H2.Load())
	}
	if got := s.Conns.Load(); got != 4 {
		t.Errorf("server saw %d connections, want 4 (-c)", got)
	}
	h := res.Hail
	if h.Protocol != "h2c" || h.Transport != "tcp" || h.TLS != nil || h.Counts.Connects != 4 {
		t.Errorf("protocol %q, transport %q, tls %v, connects %d", h.Protocol, h.Transport, h.TLS, h.Counts.Connects)
	}
}

// The open model over h2: requests go out at their intended times, no
// matter the streams; latency counts from the intended time.
func TestH2OpenModel(t *testing.T) {
	t.Parallel()
	s := servetest.StartH2(t, testnet.Listen(t), nil, nil)
	p := h2plan(t, s.URL+"/?delay=2ms")
	p.Requests, p.Rate, p.Connections, p.Streams = 300, 600, 2, 4
	res := runtest.Run(t, p)
	checkAll(t, res, 300)
	if res.Hail.Model != "open" || res.Hail.Lag.Samples != 300 {
		t.Errorf("model %s, lag samples %d (queued %d), want 300: every sent request has its own lateness", res.Hail.Model, res.Hail.Lag.Samples, res.Hail.Counts.Queued)
	}
	if res.Summary.Fastest < 2*time.Millisecond {
		t.Errorf("fastest %v < the server's 2ms delay", res.Summary.Fastest)
	}
	// Never early; not much late, where timing is judged (a busy machine
	// can stall any run for a second).
	if el := res.Summary.Total; el < 450*time.Millisecond || el > 2*time.Second && testtier.On(testtier.Timing) {
		t.Errorf("300 requests at 600/s took %.2fs", el.Seconds())
	}
}

// h2 over TLS: ALPN negotiates h2, the connection count and handshakes
// match, and reconnects (--disable-keepalive) resume the TLS session.
func TestH2TLSResumption(t *testing.T) {
	t.Parallel()
	k := certtest.New(t, "hail test CA")
	s := servetest.StartH2(t, testnet.Listen(t), &tls.Config{Certificates: []tls.Certificate{k.Server}}, nil)
	p := h2plan(t, s.URL+"/")
	p.CACert = k.CAFile
	res := runtest.Run(t, p)
	checkAll(t, res, 2000)
	h := res.Hail
	if h.Protocol != "h2" || h.ALPN != "h2" || h.Transport != "tls" || h.TLS == nil || h.TLS.Handshakes != 4 {
		t.Fatalf("protocol %q alpn %q transport %q tls %+v", h.Protocol, h.ALPN, h.Transport, h.TLS)
	}

	p = h2plan(t, s.URL+"/")
	p.CACert, p.KeepAlive, p.Streams, p.Connections, p.Requests = k.CAFile, false, 1, 1, 30
	res = runtest.Run(t, p)
	checkAll(t, res, 30)
	if tl := res.Hail.TLS; tl.Handshakes != 30 || tl.Resumptions < 25 {
		t.Errorf("30 connections: %d handshakes, %d resumed; want 30 and nearly all resumed", tl.Handshakes, tl.Resumptions)
	}
}

// A TLS server that does not offer h2 ends the run with one clear error.
func TestH2NotNegotiated(t *testing.T) {
	t.Parallel()
	k := certtest.New(t, "hail test CA")
	ln := tls.NewListener(testnet.Listen(t), &tls.Config{Certificates: []tls.Certificate{k.Server}, NextProtos: []string{"http/1.1"}})
	srv := &http.Server{Handler: h3serve.Handler(), ErrorLog: quietLog()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	p := h2plan(t, "https://"+ln.Addr().String()+"/")
	p.CACert = k.CAFile
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	_, err := run.Run(context.Background(), p, run.Options{})
	if err == nil || !strings.Contains(err.Error(), "does not speak HTTP/2") {
		t.Fatalf("err = %v, want 'does not speak HTTP/2'", err)
	}
}

// Client certificates: accepted when signed by the server's CA; a missing
// or unknown one is counted as "tls client certificate rejected".
func TestH2ClientCert(t *testing.T) {
	t.Parallel()
	k := certtest.New(t, "hail test CA")
	s := servetest.StartH2(t, testnet.Listen(t), &tls.Config{Certificates: []tls.Certificate{k.Server}, ClientCAs: k.Pool,
		ClientAuth: tls.RequireAndVerifyClientCert}, nil)
	cert, key := certtest.ClientCert(t, &k.CA)
	p := h2plan(t, s.URL+"/")
	p.CACert, p.Cert, p.Key, p.Requests = k.CAFile, cert, key, 200
	checkAll(t, runtest.Run(t, p), 200)

	other, _, _ := h3serve.Issue(nil, "stranger CA", nil, nil, true)
	badCert, badKey := certtest.ClientCert(t, &other)
	for name, files := range map[string][2]string{"none": {"", ""}, "unknown-ca": {badCert, badKey}} {
		p := h2plan(t, s.URL+"/")
		p.CACert, p.Cert, p.Key, p.Requests, p.Connections, p.Streams = k.CAFile, files[0], files[1], 20, 2, 2
		res := runtest.Run(t, p)
		if got := res.ErrorDistribution["tls client certificate rejected"]; got != 20 {
			t.Errorf("%s: %d rejected, want 20 (errors %v)", name, got, res.ErrorDistribution)
		}
	}
}

// A server that resets streams: each reset is one "http2 stream reset".
func TestH2StreamReset(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			panic(http.ErrAbortHandler) // RST_STREAM
		}
		h3serve.Handler().ServeHTTP(w, r)
	})
	s := servetest.StartH2(t, testnet.Listen(t), nil, h)
	p := h2plan(t, s.URL+"/")
	p.Requests, p.Connections, p.Streams = 100, 1, 1
	res := runtest.Run(t, p)
	if res.Hail.Counts.Responses != 50 || res.ErrorDistribution["http2 stream reset"] != 50 {
		t.Errorf("responses %d, errors %v; want 50 and 50 stream resets", res.Hail.Counts.Responses, res.ErrorDistribution)
	}
}

// h2c over a unix socket.
func TestH2CUnixSocket(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h2.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := servetest.StartH2(t, ln, nil, nil)
	_ = s
	p := h2plan(t, "http://localhost/")
	p.UnixSocket, p.Requests = path, 500
	res := runtest.Run(t, p)
	checkAll(t, res, 500)
	if res.Hail.Transport != "unix" || s.H2.Load() != 500 {
		t.Errorf("transport %q, server saw %d h2 requests", res.Hail.Transport, s.H2.Load())
	}
}

// Redirects on the same connection, and the POST body carried over h2.
func TestH2RedirectAndBody(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo", http.StatusTemporaryRedirect)
	})
	mux.Handle("/", h3serve.Handler())
	s := servetest.StartH2(t, testnet.Listen(t), nil, mux)
	p := h2plan(t, s.URL+"/old")
	p.Method, p.Bodies, p.Requests = "POST", [][]byte{[]byte("0123456789ab")}, 100
	res := runtest.Run(t, p)
	checkAll(t, res, 100)
	if s.Requests.Load() != 200 {
		t.Errorf("server saw %d requests, want 200 (100 redirected)", s.Requests.Load())
	}
}

// -t over h2: a stream that outlives it is reset and counted as a timeout;
// the connection carries on.
func TestH2Timeout(t *testing.T) {
	t.Parallel()
	s := servetest.StartH2(t, testnet.Listen(t), nil, nil)
	p := h2plan(t, s.URL+"/?delay=400ms")
	p.Requests, p.Connections, p.Streams, p.Timeout = 8, 1, 4, 50*time.Millisecond
	res := runtest.Run(t, p)
	if got := res.ErrorDistribution["request timeout"]; got != 8 {
		t.Errorf("errors %v, want 8 request timeouts", res.ErrorDistribution)
	}
	if res.Summary.Total > time.Second {
		t.Errorf("took %.2fs: timeouts did not cut the waits", res.Summary.Total.Seconds())
	}
	if res.Hail.Counts.Connects != 1 {
		t.Errorf("%d connections: a stream timeout closed the connection", res.Hail.Counts.Connects)
	}
}

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// Every body variant (-Z, one body per line) is sent for its own requests:
// a request's variant is hit % len, so 2 × len requests send each body
// exactly twice — whether the variants are converted ahead and shared by
// the streams (a few) or in each stream's cache (more than a thousand).
func TestH2BodyVariants(t *testing.T) {
	t.Parallel()
	for _, n := range []int{5, 1100} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			s := servetest.StartH2(t, testnet.Listen(t), nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				seen[string(b)]++
				mu.Unlock()
				io.WriteString(w, "hello world\n")
			}))
			p := h2plan(t, s.URL+"/")
			p.Method, p.Requests = "POST", uint64(2*n)
			for i := range n {
				p.Bodies = append(p.Bodies, []byte(fmt.Sprintf("body %d", i)))
			}
			checkAll(t, runtest.Run(t, p), int64(2*n))
			mu.Lock()
			defer mu.Unlock()
			for i := range n {
				if got := seen[fmt.Sprintf("body %d", i)]; got != 2 {
					t.Fatalf("body %d arrived %d times, want 2 (%d distinct bodies arrived)", i, got, len(seen))
				}
			}
		})
	}
}
