// Package hail runs HTTP load tests from Go: the same engines, models and
// measurements as the hail command, for a test that wants to load a service
// and assert on the result.
//
//	res, err := hail.Run(ctx, hail.Plan{URL: "http://127.0.0.1:8080/", Requests: 10_000, Connections: 64})
//	if err != nil { ... }                      // a *hail.FieldError for a bad plan
//	if res.Hail.Counts.Errors > 0 { ... }      // the same Result the JSON report holds
//
// Latency counts from each request's intended send time in the open model
// (Plan.Rate), so a stalled server cannot hide; Result.Hail.Verdict names
// the run's bottleneck. Cancelling ctx ends a run as Ctrl-C ends the
// command's: no new request starts, and the Result covers what was done.
package hail

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"time"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/stats"
)

// Plan describes one load test. The zero value of every field but URL is
// usable: 50 connections, 200 requests, GET, the closed model.
type Plan struct {
	// URL is the target, http:// or https://.
	URL string
	// Method is the request method; "" is GET.
	Method string
	// Header holds extra request headers (sent in name order).
	Header map[string][]string
	// Body is the request body.
	Body []byte
	// Host overrides the Host header (and the TLS server name).
	Host string

	// Requests is how many requests to send; with Duration, the run stops at
	// whichever comes first. Both zero: 200 requests.
	Requests uint64
	// Duration ends the run after this long.
	Duration time.Duration
	// Connections is how many connections send at once; 0 is 50.
	Connections int
	// Rate, if set, is the open model: this many requests per second in
	// total, at fixed intended times that do not wait for responses.
	Rate float64
	// WaitOngoing lets requests in flight at the deadline finish (bounded
	// by Timeout, else 30 s) instead of aborting them.
	WaitOngoing bool
	// PacingGranularity is the shortest time between two of the open
	// model's wake-ups to send: requests due in between leave together,
	// each at most that late (its own lateness, counted in its latency).
	// 0 is 100 µs; negative wakes for every request.
	PacingGranularity time.Duration

	// Timeout bounds each request, redirects included; 0 is none.
	Timeout time.Duration
	// ConnectTimeout bounds each connection setup; 0 is 5 s.
	ConnectTimeout time.Duration
	// MaxRedirects is how many redirects a request follows; 0 follows
	// none (3xx responses are results).
	MaxRedirects int
	// DisableKeepAlive opens a new connection for every request.
	DisableKeepAlive bool

	// HTTPVersion is "" or "1.1", "1.0", "2" (h2 over TLS, h2c over
	// http://) or "3" (QUIC).
	HTTPVersion string
	// Streams is the number of requests in flight per HTTP/2 or HTTP/3
	// connection; 0 is 1.
	Streams int
	// Engine is EngineAuto (""), EngineNet or EngineURing.
	Engine Engine
	// UnixSocket sends every request over this unix socket.
	UnixSocket string
	// Insecure skips TLS certificate verification; CACert adds a trusted
	// CA certificate file.
	Insecure bool
	CACert   string
}

// Engine chooses how requests are sent.
type Engine string

// The engines. EngineAuto picks io_uring where it can run (Linux, plain
// HTTP/1.x) and the portable engine otherwise; HTTP/2 and HTTP/3 have
// engines of their own.
const (
	EngineAuto  Engine = ""
	EngineNet   Engine = "net"
	EngineURing Engine = "uring"
)

// FieldError is a Plan that cannot run: Field names the Plan field at
// fault, and Error says what is wrong and what to do.
type FieldError = plan.FieldError

// Progress is the run so far, about once a second.
type Progress struct {
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Requests ended so far (responses and errors), Errors of them failed.
	Requests, Errors int64
	// RequestsPerSec is the rate of the last whole second.
	RequestsPerSec float64
	// P99 is the latency p99 over the run so far.
	P99 time.Duration
}

// Option adjusts a Run.
type Option func(*run.Options)

// WithProgress calls f about once a second during the run, off the hot
// path (f must return quickly).
func WithProgress(f func(Progress)) Option {
	return func(o *run.Options) {
		o.Progress = func(s stats.Snapshot) {
			p := Progress{Elapsed: s.Elapsed, Requests: s.Requests, Errors: s.Errors, P99: time.Duration(s.P99)}
			if s.Last.Span > 0 {
				p.RequestsPerSec = float64(s.Last.Requests) / s.Last.Span
			}
			f(p)
		}
	}
}

// WithSuccessBreakdown adds latency percentiles of 2xx and other responses
// to the Result.
func WithSuccessBreakdown() Option { return func(o *run.Options) { o.SuccessBreakdown = true } }

// Run carries out p and returns its Result. The error is a *FieldError when
// p is not valid, and says why when the run could not start (an engine that
// cannot run here, a name that does not resolve); nothing is sent then.
// Cancelling ctx ends the run early with a complete Result.
func Run(ctx context.Context, p Plan, opts ...Option) (*Result, error) {
	ip, err := p.internal()
	if err != nil {
		return nil, err
	}
	if err := ip.Validate(); err != nil {
		return nil, public(err)
	}
	var o run.Options
	for _, opt := range opts {
		opt(&o)
	}
	res, err := run.Run(ctx, ip, o)
	return fromReport(res), err
}

// Validate reports what is wrong with p, as a *FieldError, or nil.
func (p Plan) Validate() error {
	ip, err := p.internal()
	if err != nil {
		return err
	}
	return public(ip.Validate())
}

// internal turns p into the internal plan, with the command's defaults.
func (p Plan) internal() (*plan.Plan, error) {
	u, err := url.Parse(p.URL)
	if err != nil || p.URL == "" {
		return nil, &FieldError{Field: "URL", Value: quote(p.URL), Problem: "not a URL: write it like http://127.0.0.1:8080/path"}
	}
	ip := &plan.Plan{URL: u, Method: p.Method, Host: p.Host, Requests: p.Requests, Duration: p.Duration,
		Connections: p.Connections, Rate: p.Rate, WaitOngoing: p.WaitOngoing, PacingGranularity: p.PacingGranularity, Timeout: p.Timeout,
		ConnectTimeout: p.ConnectTimeout, MaxRedirects: p.MaxRedirects, KeepAlive: !p.DisableKeepAlive,
		Streams: p.Streams, Engine: plan.EngineName(p.Engine), UnixSocket: p.UnixSocket, Insecure: p.Insecure, CACert: p.CACert}
	if ip.Method == "" {
		ip.Method = "GET"
	}
	if ip.Connections == 0 {
		ip.Connections = 50
	}
	if ip.Requests == 0 && ip.Duration == 0 {
		ip.Requests = 200
	}
	if ip.ConnectTimeout == 0 {
		ip.ConnectTimeout = plan.DefaultConnectTimeout
	}
	if ip.Engine == "" {
		ip.Engine = plan.EngineAuto
	}
	switch p.HTTPVersion {
	case "", "1.1":
	case "1.0":
		ip.HTTP10 = true
	case "2", "3":
		ip.HTTPVersion = plan.Proto(p.HTTPVersion)
	default:
		return nil, &FieldError{Field: "HTTPVersion", Value: quote(p.HTTPVersion), Problem: `choose "1.0", "1.1", "2" or "3"`}
	}
	names := make([]string, 0, len(p.Header))
	for k := range p.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range p.Header[k] {
			ip.Headers = append(ip.Headers, [2]string{k, v})
		}
	}
	if len(p.Body) > 0 {
		ip.Bodies = [][]byte{p.Body}
	}
	return ip, nil
}

// publicNames are the internal plan's fields as Plan names them.
var publicNames = map[string]string{"Headers": "Header", "Bodies": "Body", "KeepAlive": "DisableKeepAlive",
	"HTTP10": "HTTPVersion", "HTTP2": `HTTPVersion "2" or "3"`}

// public renders an internal plan error with Plan's field names.
func public(err error) error {
	var fe *plan.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return fe.Renamed(func(f string) string {
		if n, ok := publicNames[f]; ok {
			return n
		}
		return f
	})
}

func quote(s string) string { return `"` + s + `"` }
