// Package plan holds the validated, immutable description of a run: what to
// send, where, how fast and for how long. The command line (and later
// scenario files) produce a Plan; engines and reports only read it.
package plan

import (
	"crypto/tls"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/transport"
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
	// ServerName, when set, is the TLS server name (SNI and the name the
	// certificate must match) in place of the URL's or Host's (hail grpc's
	// --cname).
	ServerName string

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
	// PacingGranularity is the shortest time between two of the open
	// model's wake-ups to send (--pacing-granularity): requests due in
	// between leave together, each at most that late (recorded as hail's
	// own lateness), so that high rates cost one wake-up per batch instead
	// of one per request. 0 is DefaultPacing; negative wakes for each.
	PacingGranularity time.Duration

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

	// Engine is EngineNet, EngineURing or EngineAuto.
	Engine EngineName

	// ShardIndex and ShardCount make this process one shard of a
	// distributed run (--shard I/N, I from 0): it does its 1/N share of the
	// requests, rate, connections and stages (run.ShardShare). ShardCount 0
	// means not sharded.
	ShardIndex, ShardCount int
	// StartAt, when set, is the wall-clock time the run starts (--start-at),
	// so that every shard starts together.
	StartAt time.Time
	// SQPoll gives the uring engine's rings a kernel thread that polls their
	// submission queues (--sqpoll).
	SQPoll bool

	// HTTPVersion is "2" (HTTP/2: TLS with ALPN h2 for https://, h2c with
	// prior knowledge for http://) or "3" (HTTP/3 over QUIC); "" means
	// HTTP/1.x (see HTTP10).
	HTTPVersion Proto
	// Streams is the number of concurrent streams per HTTP/2 or HTTP/3
	// connection (-p); 0 means 1.
	Streams int
	// Vsock connects over AF_VSOCK to VsockCID:VsockPort (--vsock-addr).
	Vsock     bool
	VsockCID  uint32
	VsockPort uint32
	// VsockUDS is a VMM's hybrid-vsock unix socket and VsockUDSPort the
	// guest port (--vsock-uds).
	VsockUDS     string
	VsockUDSPort uint32
	// Proxy is the HTTP(S) proxy (-x), its credentials in its user info;
	// ProxyHeaders are sent to it (--proxy-header).
	Proxy        *url.URL
	ProxyHeaders [][2]string
	// Cert and Key are the TLS client certificate and key files (--cert, --key).
	Cert, Key string

	// SSE treats the body of every 2xx response as a stream of server-sent
	// events (--sse); a response whose Content-Type is text/event-stream is
	// one anyway.
	SSE bool
	// IdleTimeout fails a stream that goes this long without an event
	// (--idle-timeout): 0 is DefaultIdleTimeout, negative none.
	IdleTimeout time.Duration
	// StreamDrain is how long streams still running when -z ends may go on
	// before they are cut and reported as truncated (--stream-drain): 0 is
	// DefaultStreamDrain, negative cuts them at once.
	StreamDrain time.Duration
}

// DefaultIdleTimeout is a stream's idle timeout between events when none
// is given.
const DefaultIdleTimeout = 30 * time.Second

// DefaultStreamDrain bounds how long streams run on after -z when no
// --stream-drain is given.
const DefaultStreamDrain = 2 * time.Second

// Idle is the plan's idle timeout between a stream's events, resolved (0:
// none).
func (p *Plan) Idle() time.Duration { return resolve(p.IdleTimeout, DefaultIdleTimeout) }

// Drain is how long streams run on after -z, resolved (0: cut at once).
func (p *Plan) Drain() time.Duration { return resolve(p.StreamDrain, DefaultStreamDrain) }

// resolve turns a setting where 0 means def and negative none into its
// value (0: none).
func resolve(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// DefaultPacing is the default PacingGranularity: at 50,000 requests/s it
// sends in batches of about five, each request at most 100 µs late.
const DefaultPacing = 100 * time.Microsecond

// Pacing is the plan's pacing granularity, resolved: DefaultPacing for 0,
// 0 (wake for each request) for a negative value.
func (p *Plan) Pacing() time.Duration {
	switch {
	case p.PacingGranularity == 0:
		return DefaultPacing
	case p.PacingGranularity < 0:
		return 0
	}
	return p.PacingGranularity
}

// Proto is a Plan's HTTP version beyond HTTP/1.x.
type Proto string

// The HTTP versions of Plan.HTTPVersion.
const (
	HTTP1 Proto = ""  // HTTP/1.1, or HTTP/1.0 with HTTP10
	HTTP2 Proto = "2" // h2 over TLS (ALPN), h2c with prior knowledge over http://
	HTTP3 Proto = "3" // HTTP/3 over QUIC
)

// DefaultConnectTimeout is the connect timeout (--connect-timeout) when
// none is given.
const DefaultConnectTimeout = 5 * time.Second

// EngineName names an engine in Plan.Engine.
type EngineName string

// The engines.
const (
	EngineAuto  EngineName = "auto"
	EngineNet   EngineName = "net"
	EngineURing EngineName = "uring"
)

// Protocol names the HTTP version the plan speaks as reports show it:
// "HTTP/1.0", "HTTP/1.1", "h2", "h2c" or "h3".
func (p *Plan) Protocol() string {
	switch p.HTTPVersion {
	case HTTP2:
		if p.URL != nil && p.URL.Scheme == "http" {
			return "h2c"
		}
		return "h2"
	case HTTP3:
		return "h3"
	}
	if p.HTTP10 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// StreamsPerConn is -p, at least 1.
func (p *Plan) StreamsPerConn() int { return max(p.Streams, 1) }

// validateTransport checks the HTTP version, streams, vsock, proxy and TLS
// client options against each other and the URL.
func (p *Plan) validateTransport() error {
	switch p.HTTPVersion {
	case HTTP1, HTTP2, HTTP3:
	default:
		return fieldErr("HTTPVersion", string(p.HTTPVersion), "choose 1.0, 1.1, 2 or 3")
	}
	switch {
	case p.Streams < 0 || p.Streams > 100_000:
		return fieldErr("Streams", p.Streams, "streams per connection must be from 1 to 100000")
	case p.Streams > 1 && p.HTTPVersion == HTTP1:
		return fieldErr("Streams", p.Streams, "several streams per connection need HTTP/2 or HTTP/3: give {HTTP2}")
	case p.Streams > 1 && !p.KeepAlive:
		return fieldErr("Streams", p.Streams, "a connection per request ({KeepAlive}) carries one stream; drop one of them")
	case p.HTTPVersion != HTTP1 && p.HTTP10:
		return fieldErr("HTTP10", nil, "HTTP/1.0 and HTTP/%s exclude each other: give one", p.HTTPVersion)
	case p.HTTPVersion == HTTP3 && p.URL.Scheme != "https":
		return fieldErr("HTTPVersion", 3, "needs an https:// URL: QUIC always uses TLS")
	case p.HTTPVersion == HTTP3 && (p.UnixSocket != "" || p.Vsock || p.VsockUDS != ""):
		return fieldErr("HTTPVersion", 3, "runs over UDP: it cannot use {UnixSocket}, {Vsock} or {VsockUDS}")
	case p.HTTPVersion == HTTP3 && p.Proxy != nil:
		return fieldErr("Proxy", nil, "carries TCP streams; HTTP/3 runs over UDP and cannot go through it")
	case p.Vsock && p.VsockUDS != "":
		return fieldErr("Vsock", nil, "{Vsock} and {VsockUDS} exclude each other: give one")
	case (p.Vsock || p.VsockUDS != "") && p.UnixSocket != "":
		return fieldErr("UnixSocket", nil, "{UnixSocket} and {Vsock}/{VsockUDS} each say where connections go: give one")
	case (p.Vsock || p.VsockUDS != "") && len(p.ConnectTo) > 0:
		return fieldErr("ConnectTo", nil, "has no effect with {Vsock}/{VsockUDS} (the URL only names the Host header): drop it")
	case p.Proxy != nil && (p.Vsock || p.VsockUDS != "" || p.UnixSocket != ""):
		return fieldErr("Proxy", nil, "{Proxy} and {UnixSocket}/{Vsock}/{VsockUDS} each say where connections go: give one")
	case (p.Cert != "" || p.Key != "") && p.URL.Scheme != "https":
		return fieldErr("Cert", nil, "{Cert}/{Key} are TLS client certificates: they need an https:// URL")
	case p.Key != "" && p.Cert == "":
		return fieldErr("Key", p.Key, "needs {Cert} (the client certificate it belongs to)")
	}
	if p.Proxy != nil && p.Proxy.Scheme != "http" && p.Proxy.Scheme != "https" {
		return fieldErr("Proxy", p.Proxy.Redacted(), "the scheme must be http or https")
	}
	return nil
}

// proxyForward reports whether requests go to the proxy in absolute form
// (an http:// target spoken in HTTP/1.x) rather than through a tunnel.
func (p *Plan) proxyForward(u *url.URL) bool {
	return p.Proxy != nil && u.Scheme == "http" && p.HTTPVersion == HTTP1 && u == p.URL
}

// proxyHeaders are the headers the proxy itself is sent: its credentials
// from the proxy URL, then --proxy-header.
func (p *Plan) proxyHeaders() [][2]string {
	var h [][2]string
	if a := transport.ProxyAuthorization(p.Proxy); a != "" && !hasHeader(p.ProxyHeaders, "Proxy-Authorization") {
		h = append(h, [2]string{"Proxy-Authorization", a})
	}
	return append(h, p.ProxyHeaders...)
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

// Validate checks the plan and returns the first problem as a *FieldError
// naming the field at fault.
func (p *Plan) Validate() error {
	switch {
	case p.URL == nil:
		return fieldErr("URL", nil, "none given: usage is hail [flags] URL, e.g. hail -n 1000 http://127.0.0.1:8080/")
	case p.Connections < 1:
		return fieldErr("Connections", p.Connections, "need at least one connection")
	case p.Connections > 1_000_000:
		return fieldErr("Connections", p.Connections, "at most 1000000 connections")
	case p.Requests == 0 && p.Duration == 0:
		return fieldErr("Requests", 0, "give a number of requests ({Requests}) or a duration ({Duration})")
	case p.Rate < 0:
		return fieldErr("Rate", p.Rate, "the rate must be positive")
	case p.BurstEvery < 0:
		return fieldErr("BurstEvery", nil, "must be positive")
	case p.Timeout < 0:
		return fieldErr("Timeout", nil, "must be positive")
	case p.ConnectTimeout < 0:
		return fieldErr("ConnectTimeout", nil, "must be positive")
	case p.MaxRedirects < 0:
		return fieldErr("MaxRedirects", p.MaxRedirects, "the redirect limit can't be negative")
	case p.IPv4 && p.IPv6:
		return fieldErr("IPv4", nil, "{IPv4} and {IPv6} exclude each other: give one")
	case p.Engine != EngineNet && p.Engine != EngineURing && p.Engine != EngineAuto:
		return fieldErr("Engine", string(p.Engine), "choose net, uring or auto")
	}
	if p.URL.Scheme != "http" && p.URL.Scheme != "https" {
		return fieldErr("URL", p.URL.String(), "the scheme must be http or https")
	}
	if p.URL.Host == "" {
		return fieldErr("URL", p.URL.String(), "has no host: write it like http://127.0.0.1:8080/path")
	}
	if port := p.URL.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fieldErr("URL", p.URL.String(), "port %q is not a number from 1 to 65535", port)
		}
	}
	if err := p.validateTransport(); err != nil {
		return err
	}
	if err := p.validateSchedule(); err != nil {
		return err
	}
	for _, s := range p.Specs() {
		if p.proxyForward(p.URL) {
			s.Target = p.URL.RequestURI() // checked in origin form; sent in absolute form
		}
		if err := s.Validate(); err != nil {
			msg := strings.TrimPrefix(err.Error(), "http1: ")
			field := "Headers"
			switch {
			case strings.HasPrefix(msg, "invalid method"):
				field = "Method"
			case strings.HasPrefix(msg, "invalid host"):
				field = "Host"
			case strings.HasPrefix(msg, "invalid request target"):
				field = "URL"
			}
			return &FieldError{Field: field, Problem: msg}
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
	target := p.URL.RequestURI()
	if p.proxyForward(p.URL) {
		// To a forward proxy: the absolute URL, and the proxy's own headers.
		target = p.URL.Scheme + "://" + p.URL.Host + target
		hdr = append(hdr[:len(hdr):len(hdr)], p.proxyHeaders()...)
	}
	specs := make([]http1.RequestSpec, len(bodies))
	for i, b := range bodies {
		specs[i] = http1.RequestSpec{
			Method: p.Method, Target: target, Host: host, Proto: proto,
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
		Vsock: p.Vsock, VsockCID: p.VsockCID, VsockPort: p.VsockPort, VsockUDS: p.VsockUDS, VsockUDSPort: p.VsockUDSPort,
		RxTimes: p.SSE, // a stream's read lag (net and h2 engines; the uring engine takes receive times itself)
	}
	if p.Proxy != nil {
		opt.Proxy, opt.ProxyTunnel, opt.ProxyHeader = p.Proxy, !p.proxyForward(u), p.proxyHeaders()
		if p.Proxy.Scheme == "https" {
			pc, err := transport.NewTLSConfig(transport.TLSOptions{Insecure: p.Insecure, CACert: p.CACert})
			if err != nil {
				return opt, err
			}
			opt.ProxyTLS = pc
		}
	}
	for _, ct := range p.ConnectTo {
		if strings.EqualFold(ct.Host, opt.Host) && ct.Port == port {
			opt.ConnectHost, opt.ConnectPort = ct.ToHost, ct.ToPort
			break
		}
	}
	if u.Scheme == "https" {
		// SNI follows --host; --connect-to changes only where connections go.
		name, _, _ := strings.Cut(u.Hostname(), "%") // an IPv6 zone is not part of the name
		to := transport.TLSOptions{ServerName: name, Insecure: p.Insecure, CACert: p.CACert,
			Cert: p.Cert, Key: p.Key, NextProtos: []string{"http/1.1"}, Sessions: tls.NewLRUClientSessionCache(transport.SessionCacheSize)}
		switch p.HTTPVersion {
		case HTTP2:
			to.NextProtos = []string{"h2"}
		case HTTP3:
			to.NextProtos = []string{"h3"}
		}
		if p.Host != "" && u == p.URL {
			if h, _, err := net.SplitHostPort(p.Host); err == nil {
				to.ServerName = h
			} else {
				to.ServerName = p.Host
			}
		}
		if p.ServerName != "" && u == p.URL {
			to.ServerName = p.ServerName
		}
		conf, err := transport.NewTLSConfig(to)
		if err != nil {
			return opt, err
		}
		opt.TLS = conf
	}
	return opt, nil
}
