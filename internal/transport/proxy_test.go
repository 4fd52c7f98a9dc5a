package transport_test

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/h3serve/certtest"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run/runtest"
	"github.com/hail-loadgen/hail/internal/testnet"
	"github.com/hail-loadgen/hail/internal/transport"
)

// testProxy is an HTTP proxy in the test process. It counts CONNECTs (and
// tunnels them to loopback targets only), answers absolute-form requests
// itself ("proxied\n"), and wants Proxy-Authorization when auth is set.
type testProxy struct {
	addr     string
	auth     string // "user:pass", or "" for none
	connects atomic.Int64
	forwards atomic.Int64
	mu       sync.Mutex
	targets  map[string]bool // CONNECT authorities and absolute URLs seen
	headers  map[string]bool // X-Proxy-Note values seen
}

func startProxy(t *testing.T, auth string) *testProxy {
	t.Helper()
	p := &testProxy{auth: auth, targets: map[string]bool{}, headers: map[string]bool{}}
	p.addr = testnet.Serve(t, "127.0.0.1:0", p.serve)
	return p
}

func (p *testProxy) note(target, header string) {
	p.mu.Lock()
	p.targets[target] = true
	if header != "" {
		p.headers[header] = true
	}
	p.mu.Unlock()
}

// serve serves one client connection (testnet closes it).
func (p *testProxy) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if p.auth != "" && r.Header.Get("Proxy-Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(p.auth)) {
			io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n")
			continue
		}
		if r.Method == http.MethodConnect {
			p.connects.Add(1)
			p.note(r.Host, r.Header.Get("X-Proxy-Note"))
			host, _, _ := net.SplitHostPort(r.Host)
			if host != "127.0.0.1" {
				io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
				return
			}
			up, err := net.Dial("tcp", r.Host)
			if err != nil {
				io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
				return
			}
			io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
			go func() { io.Copy(up, br); up.Close() }()
			io.Copy(c, up)
			return
		}
		p.forwards.Add(1)
		p.note(r.RequestURI, r.Header.Get("X-Proxy-Note"))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nproxied\n")
	}
}

// tlsTarget is an HTTPS server (HTTP/1.1 and h2) with a CA file for --cacert.
func tlsTarget(t *testing.T) (string, string, *atomic.Int64) {
	t.Helper()
	k := certtest.New(t, "proxy test CA")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	h := h3serve.Handler()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1); h.ServeHTTP(w, r) }),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{k.Server}}}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String(), k.CAFile, &n
}

func proxyPlan(t *testing.T, target, proxy string) *plan.Plan {
	t.Helper()
	p := vsockPlan(t, &fakeVMM{}, 0)
	p.VsockUDS, p.VsockUDSPort = "", 0
	p.URL, _ = url.Parse(target)
	pu, err := transport.ParseProxy(proxy)
	if err != nil {
		t.Fatal(err)
	}
	p.Proxy, p.Requests, p.Connections = pu, 200, 2
	return p
}

// https:// targets go through a CONNECT tunnel per connection, in
// HTTP/1.1 and h2 alike; the proxy's credentials come from its URL and
// --proxy-header reaches the proxy only.
func TestProxyConnect(t *testing.T) {
	target, ca, served := tlsTarget(t)
	px := startProxy(t, "alice:s3cret")
	for _, version := range []string{"", "2"} {
		before := served.Load()
		c0 := px.connects.Load()
		p := proxyPlan(t, target+"/", "http://alice:s3cret@"+px.addr)
		p.CACert, p.HTTPVersion, p.ProxyHeaders = ca, plan.Proto(version), [][2]string{{"X-Proxy-Note", "hi"}}
		res := runtest.Run(t, p)
		if res.Hail.Counts.Responses != 200 || served.Load()-before != 200 {
			t.Fatalf("HTTP/%s: responses %d, served %d, errors %v", version, res.Hail.Counts.Responses, served.Load()-before, res.ErrorDistribution)
		}
		if got := px.connects.Load() - c0; got != 2 {
			t.Errorf("HTTP/%s: %d CONNECTs for 2 kept-alive connections", version, got)
		}
		if h := res.Hail; h.Transport != "proxy" || h.TLS == nil || h.TLS.Handshakes != 2 {
			t.Errorf("HTTP/%s: transport %q tls %+v", version, h.Transport, h.TLS)
		}
	}
	host := strings.TrimPrefix(target, "https://")
	if !px.targets[host] || !px.headers["hi"] {
		t.Errorf("proxy saw targets %v, headers %v", px.targets, px.headers)
	}
}

// http:// targets in HTTP/1.x go to the proxy in absolute form.
func TestProxyForward(t *testing.T) {
	px := startProxy(t, "")
	p := proxyPlan(t, "http://backend.test:8080/a?b=1", px.addr)
	res := runtest.Run(t, p)
	if res.Hail.Counts.Responses != 200 || px.forwards.Load() != 200 || px.connects.Load() != 0 {
		t.Fatalf("responses %d, forwarded %d, CONNECTs %d, errors %v", res.Hail.Counts.Responses, px.forwards.Load(), px.connects.Load(), res.ErrorDistribution)
	}
	if !px.targets["http://backend.test:8080/a?b=1"] {
		t.Errorf("proxy saw %v, want the absolute URL", px.targets)
	}
	if res.Hail.Counts.BodyBytes != 200*8 {
		t.Errorf("body bytes %d", res.Hail.Counts.BodyBytes)
	}
}

// A proxy that refuses the tunnel: every request is "proxy connect failed".
func TestProxyRefused(t *testing.T) {
	target, ca, _ := tlsTarget(t)
	px := startProxy(t, "alice:s3cret")
	p := proxyPlan(t, target+"/", "http://alice:wrong@"+px.addr)
	p.CACert, p.Requests = ca, 10
	res := runtest.Run(t, p)
	if got := res.ErrorDistribution["proxy connect failed"]; got != 10 {
		t.Errorf("errors %v, want 10 'proxy connect failed'", res.ErrorDistribution)
	}
}

// A proxy that answers CONNECT with header lines without end: each connect fails as "proxy
// connect failed" once the head passes 64 KiB, long before the connect timeout.
func TestProxyEndlessHead(t *testing.T) {
	var sent atomic.Int64
	addr := testnet.Serve(t, "127.0.0.1:0", func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		line := []byte("X-Flood: " + strings.Repeat("f", 100) + "\r\n")
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n")
		for {
			n, err := c.Write(line)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	p := proxyPlan(t, "https://127.0.0.1:1/", "http://"+addr)
	p.Requests, p.Connections, p.ConnectTimeout = 6, 2, 10*time.Second
	start := time.Now()
	res := runtest.Run(t, p)
	if got := res.ErrorDistribution["proxy connect failed"]; got != 6 {
		t.Errorf("errors %v, want 6 'proxy connect failed'", res.ErrorDistribution)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v: the head was read until the connect timeout", el)
	}
}

func TestParseProxy(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:3128": "", "127.0.0.1:3128": "", "https://u:p@proxy.example:8443": "",
		"socks5://127.0.0.1:1080": "SOCKS", "ftp://x": "scheme", "http://": "no host", "http://h:99999": "port",
		"http://h:1/path": "no path",
	} {
		_, err := transport.ParseProxy(in)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}
