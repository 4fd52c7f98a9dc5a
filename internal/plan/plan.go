// Package plan holds the validated, immutable description of a run: what to
// send, where, how fast and for how long. The command line (and later
// scenario files) produce a Plan; engines and reports only read it.
package plan

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"hail/internal/http1"
	"hail/internal/transport"
)

// Plan describes one load test.
type Plan struct {
	// URL is the target; its host also names the Host header unless Host is set.
	URL *url.URL
	// Method is the request method.
	Method string
	// Headers are extra request headers in order (-H, -A, -T, -a, ...).
	Headers [][2]string
	// Bodies are the request bodies; request k uses Bodies[k % len]. One
	// empty body when there is none.
	Bodies [][]byte
	// HTTP10 sends HTTP/1.0 requests.
	HTTP10 bool
	// KeepAlive reuses connections (false: --disable-keepalive).
	KeepAlive bool
	// Compression sends Accept-Encoding: gzip, deflate, br (bodies are
	// counted as received, not decoded).
	Compression bool
	// Host overrides the Host header (--host).
	Host string

	// Connections is the number of concurrent connections (-c).
	Connections int
	// Requests is the total number of requests (-n); 0 with Duration set means no limit.
	Requests uint64
	// Duration ends the run after this long (-z); 0 means none.
	Duration time.Duration
	// Rate is the open model's total requests per second (-q); 0 for the closed model.
	Rate float64
	// BurstEvery and BurstSize send BurstSize requests every BurstEvery (ignored with Rate).
	BurstEvery time.Duration
	BurstSize  uint64
	// WaitOngoing lets in-flight requests finish after the deadline (-w).
	WaitOngoing bool

	// Timeout bounds each request (-t); ConnectTimeout each connection setup.
	Timeout        time.Duration
	ConnectTimeout time.Duration
	// MaxRedirects is how many redirects to follow (-r); 0 disables.
	MaxRedirects int

	// ConnectTo overrides where HOST:PORT connects (--connect-to).
	ConnectTo []ConnectTo
	// IPv4 and IPv6 restrict name resolution to one family.
	IPv4, IPv6 bool
	// NoPreLookup resolves the name at every connect instead of once.
	NoPreLookup bool
	// UnixSocket sends every request over this unix socket (--unix-socket).
	UnixSocket string
	// Insecure skips TLS certificate verification; CACert adds a trusted CA file.
	Insecure bool
	CACert   string

	// Engine is "net", "uring" or "auto".
	Engine string
}

// ConnectTo is one --connect-to override.
type ConnectTo struct {
	Host   string
	Port   int
	ToHost string
	ToPort int
}

// Open reports whether the plan is an open-model run (-q or a burst).
func (p *Plan) Open() bool { return p.Rate > 0 || p.BurstEvery > 0 }

// Port is the URL's port, or the scheme's default.
func (p *Plan) Port() int {
	if s := p.URL.Port(); s != "" {
		n, _ := strconv.Atoi(s)
		return n
	}
	if p.URL.Scheme == "https" {
		return 443
	}
	return 80
}

// Validate checks the plan and returns the first problem, phrased for the
// user with the flag that causes it.
func (p *Plan) Validate() error {
	switch {
	case p.URL == nil:
		return fmt.Errorf("no URL given: usage is hail [flags] URL, e.g. hail -n 1000 http://127.0.0.1:8080/")
	case p.Connections < 1:
		return fmt.Errorf("-c %d: need at least one connection", p.Connections)
	case p.Connections > 1_000_000:
		return fmt.Errorf("-c %d: at most 1000000 connections", p.Connections)
	case p.Requests == 0 && p.Duration == 0:
		return fmt.Errorf("-n 0: give a number of requests (-n) or a duration (-z)")
	case p.Rate < 0:
		return fmt.Errorf("-q %g: the rate must be positive", p.Rate)
	case p.BurstEvery < 0:
		return fmt.Errorf("--burst-delay must be positive")
	case p.Timeout < 0 || p.ConnectTimeout < 0:
		return fmt.Errorf("-t/--connect-timeout must be positive")
	case p.MaxRedirects < 0:
		return fmt.Errorf("-r %d: the redirect limit can't be negative", p.MaxRedirects)
	case p.IPv4 && p.IPv6:
		return fmt.Errorf("--ipv4 and --ipv6 exclude each other: give one")
	case p.Engine != "net" && p.Engine != "uring" && p.Engine != "auto":
		return fmt.Errorf("--engine %q: choose net, uring or auto", p.Engine)
	}
	if p.URL.Scheme != "http" && p.URL.Scheme != "https" {
		return fmt.Errorf("URL %q: the scheme must be http or https", p.URL.String())
	}
	if p.URL.Host == "" {
		return fmt.Errorf("URL %q has no host: write it like http://127.0.0.1:8080/path", p.URL.String())
	}
	if port := p.URL.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("URL %q: port %q is not a number from 1 to 65535", p.URL.String(), port)
		}
	}
	for _, s := range p.Specs() {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Specs returns the request variants, one per body.
func (p *Plan) Specs() []http1.RequestSpec {
	host := p.URL.Host
	if p.Host != "" {
		host = p.Host
	}
	proto := "HTTP/1.1"
	if p.HTTP10 {
		proto = "HTTP/1.0"
	}
	hdr := p.Headers
	if p.Compression && !hasHeader(hdr, "Accept-Encoding") {
		hdr = append(hdr[:len(hdr):len(hdr)], [2]string{"Accept-Encoding", "gzip, deflate, br"})
	}
	if !hasHeader(hdr, "User-Agent") {
		hdr = append(hdr[:len(hdr):len(hdr)], [2]string{"User-Agent", "hail/" + Version})
	}
	bodies := p.Bodies
	if len(bodies) == 0 {
		bodies = [][]byte{nil}
	}
	specs := make([]http1.RequestSpec, len(bodies))
	for i, b := range bodies {
		specs[i] = http1.RequestSpec{
			Method: p.Method, Target: p.URL.RequestURI(), Host: host, Proto: proto,
			Header: hdr, Body: b, Close: !p.KeepAlive && !p.HTTP10, KeepAlive10: p.HTTP10 && p.KeepAlive,
		}
	}
	return specs
}

// Version is hail's version, set by the build or left as the default.
var Version = "0.1.0"

func hasHeader(h [][2]string, name string) bool {
	for _, kv := range h {
		if strings.EqualFold(kv[0], name) {
			return true
		}
	}
	return false
}

// TransportOptions returns the dialer options for the plan's target u
// (the plan's URL, or another origin met in a redirect).
func (p *Plan) TransportOptions(u *url.URL) (transport.Options, error) {
	port := p.Port()
	if u != p.URL {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
		if s := u.Port(); s != "" {
			port, _ = strconv.Atoi(s)
		}
	}
	opt := transport.Options{
		Host: u.Hostname(), Port: port, UnixSocket: p.UnixSocket,
		IPv4: p.IPv4, IPv6: p.IPv6, PreLookup: !p.NoPreLookup, Timeout: p.ConnectTimeout,
	}
	for _, ct := range p.ConnectTo {
		if strings.EqualFold(ct.Host, opt.Host) && ct.Port == port {
			opt.ConnectHost, opt.ConnectPort = ct.ToHost, ct.ToPort
			break
		}
	}
	if u.Scheme == "https" {
		conf := &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: p.Insecure, NextProtos: []string{"http/1.1"}}
		if p.Host != "" && u == p.URL {
			if h, _, err := net.SplitHostPort(p.Host); err == nil {
				conf.ServerName = h
			} else {
				conf.ServerName = p.Host
			}
		}
		if p.CACert != "" {
			pem, err := os.ReadFile(p.CACert)
			if err != nil {
				return opt, fmt.Errorf("--cacert %s: %v", p.CACert, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return opt, fmt.Errorf("--cacert %s: no PEM certificate found in the file", p.CACert)
			}
			conf.RootCAs = pool
		}
		opt.TLS = conf
	}
	return opt, nil
}
