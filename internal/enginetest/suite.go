package enginetest

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/run/runtest"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/testtier"
	"github.com/hail-loadgen/hail/result"
)

// NewEngine makes the engine under test for one run of the suite, from the
// run's plan (its streams per connection, say).
type NewEngine func(p *plan.Plan) engine.Engine

// Options say what the engine under test speaks.
type Options struct {
	// Proto is the protocol the engine speaks; the suite's servers speak it
	// and its plans ask for it (HTTP/2 or HTTP/3).
	Proto Proto
}

// Run puts the engine newEngine makes through every case of the suite, one
// subtest each. A new engine gets every case from one line in its
// package's tests:
//
//	enginetest.Run(t, func(*plan.Plan) engine.Engine { return myengine.Engine{} }, enginetest.Options{Proto: enginetest.HTTP1})
//
// The cases run in parallel with each other, each on servers of its own
// (they wait on loopback servers and timers: a t marked parallel lets them
// run beside the package's other parallel tests too).
func Run(t *testing.T, newEngine NewEngine, o Options) {
	for _, c := range append(cases, streamCases...) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, &env{t: t, e: underTest{Proto: o.Proto, newEngine: newEngine}})
		})
	}
}

// underTest is the engine under test and the protocol it speaks.
type underTest struct {
	Proto     Proto
	newEngine NewEngine
}

// env runs plans of one engine for one case.
type env struct {
	t *testing.T
	e underTest
}

// truth starts a ground-truth server for the engine's protocol.
func (v *env) truth() *Truth { return StartTruth(v.t, v.e.Proto) }

// plan is a plan for rawURL on the engine: 4 connections, 10 redirects, a
// connect timeout of 10 s (the cases about it set their own; QUIC
// handshakes under the race detector on a loaded machine took over 2 s).
func (v *env) plan(s *Truth, rawURL string) *plan.Plan {
	v.t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		v.t.Fatal(err)
	}
	p := &plan.Plan{URL: u, Method: "GET", Connections: 4, KeepAlive: true, MaxRedirects: 10,
		ConnectTimeout: 10 * time.Second, Engine: plan.EngineAuto}
	p.HTTPVersion = map[Proto]plan.Proto{H2C: plan.HTTP2, H3: plan.HTTP3}[v.e.Proto]
	if s != nil {
		p.CACert = s.CAFile
	}
	return p
}

// run runs p on the engine under test, bounded at 30 s whatever it says.
func (v *env) run(p *plan.Plan, o run.Options) *result.Result {
	v.t.Helper()
	o.Engine = v.e.newEngine(p)
	return runtest.RunWith(v.t, p, o)
}

// runContext runs p on the engine under test until ctx ends.
func (v *env) runContext(ctx context.Context, p *plan.Plan, o run.Options) *result.Result {
	v.t.Helper()
	o.Engine = v.e.newEngine(p)
	return runtest.RunContext(v.t, ctx, p, o)
}

// exact checks that every intended request is accounted for and that the
// server's own count equals the requests sent.
func (v *env) exact(res *result.Result, arrivals int64) {
	v.t.Helper()
	c := res.Hail.Counts
	if c.Sent != arrivals {
		v.t.Errorf("sent %d, but the server received %d (errors %v)", c.Sent, arrivals, res.ErrorDistribution)
	}
	if c.Sent+c.NotSent != c.Requests || c.Requests != c.Responses+c.Errors+c.Truncated {
		v.t.Errorf("sent %d + not sent %d, requests %d, responses %d + errors %d + truncated %d do not add up", c.Sent, c.NotSent, c.Requests, c.Responses, c.Errors, c.Truncated)
	}
	if c.Intended != c.Sent+c.NotSent+c.Unsent+c.Skipped {
		v.t.Errorf("intended %d != sent %d + not sent %d + unsent %d + skipped %d", c.Intended, c.Sent, c.NotSent, c.Unsent, c.Skipped)
	}
	var perSecond int64
	for _, s := range res.Hail.Series {
		perSecond += s.Requests
	}
	if perSecond != c.Sent {
		v.t.Errorf("the per-second series counts %d requests, %d were sent", perSecond, c.Sent)
	}
}

// wantErrors checks that every request ended as kind.
func (v *env) wantErrors(res *result.Result, kind string, n int64) {
	v.t.Helper()
	if got := res.ErrorDistribution[kind]; got != n || res.Hail.Counts.Requests != n {
		v.t.Errorf("%q errors %d of %d requests, want %d (errors %v, statuses %v)", kind, got, res.Hail.Counts.Requests, n,
			res.ErrorDistribution, res.StatusCodeDistribution)
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, v *env)
}

// cases are the suite: the table below, then the families that have a
// file of their own (shared_body.go, wire_bytes.go, redirect_conn.go).
var cases = slices.Concat(table, sharedBodyCases, wireBytesCases, redirectConnCases)

var table = []testCase{
	{"exact/closed", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/")
		p.Requests, p.Connections = 500, 8
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		if res.StatusCodeDistribution["200"] != 500 || res.Hail.Counts.Intended != 500 {
			t.Errorf("200s %d, intended %d, want 500 each", res.StatusCodeDistribution["200"], res.Hail.Counts.Intended)
		}
	}},
	{"exact/open", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/")
		p.Requests, p.Connections, p.Rate = 600, 8, 3000
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		if res.StatusCodeDistribution["200"] != 600 || res.Hail.SendDelay.Own.Samples != 600 || res.Hail.SendDelay.ConnWait.Samples != 600 {
			t.Errorf("200s %d, own-lateness samples %d, connection-wait samples %d: want 600 each", res.StatusCodeDistribution["200"],
				res.Hail.SendDelay.Own.Samples, res.Hail.SendDelay.ConnWait.Samples)
		}
	}},
	{"overload", func(t *testing.T, v *env) {
		// A server that serves 10 at a time, 20 ms each (500/s), offered
		// 2000/s over 10 connections: requests wait for connections, those
		// still waiting at the deadline are unsent, and the target is named.
		s := v.truth()
		p := v.plan(s, s.URL+"/cap?d=20ms")
		p.Connections, p.Rate, p.Duration = Cap, 2000, 1500*time.Millisecond
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		c := res.Hail.Counts
		if c.Unsent < 1000 || c.Intended < 2990 || c.Intended > 3001 {
			t.Errorf("intended %d (want 3000), unsent %d (want most of the 2250 the server could not take)", c.Intended, c.Unsent)
		}
		if got := res.Summary.RequestsPerSec * res.Summary.Total.Seconds(); got < float64(c.Sent)-1 || got > float64(c.Sent)+1 {
			t.Errorf("requests/s × total = %.0f, want the %d sent (unsent requests are not requests)", got, c.Sent)
		}
		switch v, g := res.Hail.Verdict, res.Hail.Generator; {
		case v.Bottleneck == result.BottleneckOthers && g.OthersCPU+g.Steal >= 0.2:
			// A loaded machine (other test packages on hail's CPUs): the
			// verdict names that first, as it should.
			t.Logf("other processes used %.0f%% of hail's CPUs: %q", 100*g.OthersCPU, v.Reasons)
		case v.Bottleneck != result.BottleneckTarget || v.GeneratorLimited:
			t.Errorf("verdict %+v, want the target", v)
		}
		if s.Peak() > Cap {
			t.Errorf("the server served %d at once", s.Peak())
		}
	}},
	{"deadline-abort", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/delay?d=20s")
		p.Duration = 500 * time.Millisecond
		t0 := time.Now()
		res := v.run(p, run.Options{})
		if el := time.Since(t0); el > 3*time.Second {
			t.Errorf("the run took %v after a 500 ms deadline", el)
		}
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		v.wantErrors(res, stats.ErrAborted.String(), 4)
		if res.Hail.UnsentReason != "" && res.Hail.Counts.Unsent == 0 {
			t.Errorf("unsent reason %q without unsent requests", res.Hail.UnsentReason)
		}
	}},
	{"deadline-abort-mid-write", func(t *testing.T, v *env) {
		// The server reads nothing of the 32 MiB bodies: the writes block
		// until the deadline's abort cuts them; the run ends then (it once
		// waited a second more for a response that could not come). The
		// run is timed from the server's first arrival: building requests
		// of 32 MiB is slow under the race detector, and is not the run.
		s := v.truth()
		p := v.plan(s, s.URL+"/delay?d=20s")
		p.Method, p.Duration, p.Bodies = "POST", 300*time.Millisecond, [][]byte{make([]byte, 32<<20)}
		res := v.run(p, run.Options{})
		if first := s.FirstArrival(); first.IsZero() {
			t.Errorf("no request arrived")
		} else if el := time.Since(first); el > 1100*time.Millisecond {
			t.Errorf("the run ended %v after its first arrival, with a 300 ms deadline", el)
		}
		if c := res.Hail.Counts; c.Sent+c.Unsent != c.Intended || c.Errors != c.Sent {
			t.Errorf("counts %+v: every request sent should end aborted", c)
		}
	}},
	{"timeout", func(t *testing.T, v *env) {
		// The race tier gives the requests 600 ms: there, with every
		// package's tests beside it, a 150 ms timeout once cut each
		// connection's second HTTP/3 request before the QUIC stack's own
		// goroutine had put it on the wire (sent 8, the server saw 4, the
		// run took 3.1 s). A request handed to quic-go counts as sent
		// (docs/results.md).
		timeout, took := 150*time.Millisecond, 2*time.Second
		if testtier.Race {
			timeout, took = 600*time.Millisecond, 5*time.Second
		}
		s := v.truth()
		p := v.plan(s, s.URL+"/delay?d=2s")
		p.Requests, p.Timeout = 8, timeout
		t0 := time.Now()
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		v.wantErrors(res, stats.ErrTimeout.String(), 8)
		if el := time.Since(t0); el > took {
			t.Errorf("8 requests timing out at %v over 4 connections took %v", timeout, el)
		}
	}},
	{"redirects/same-origin", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/redirect?n=3")
		p.Requests = 40
		p.Headers = [][2]string{{"Authorization", "Bearer x"}, {"Cookie", "a=b"}}
		res := v.run(p, run.Options{})
		if res.StatusCodeDistribution["200"] != 40 || s.Arrivals() != 160 {
			t.Errorf("200s %d of 40, server arrivals %d of 160 (errors %v)", res.StatusCodeDistribution["200"], s.Arrivals(), res.ErrorDistribution)
		}
		if s.WithAuth() != 160 || s.WithCookie() != 160 {
			t.Errorf("credentials on %d/%d of 160 same-origin hops", s.WithAuth(), s.WithCookie())
		}
		if got := res.Summary.SizePerRequest; got != int64(len("landed")) {
			t.Errorf("body per request %d, want the last hop's %d", got, len("landed"))
		}
	}},
	{"redirects/cross-origin", func(t *testing.T, v *env) {
		s, other := v.truth(), v.truth()
		p := v.plan(s, s.URL+"/away?to="+url.QueryEscape(other.URL+"/redirect?n=1"))
		p.Requests = 30
		p.Headers = [][2]string{{"Authorization", "Bearer x"}, {"Cookie", "a=b"}}
		res := v.run(p, run.Options{})
		if res.StatusCodeDistribution["200"] != 30 || s.Arrivals() != 30 || other.Arrivals() != 60 {
			t.Errorf("200s %d of 30; arrivals here %d of 30, at the other origin %d of 60 (errors %v)", res.StatusCodeDistribution["200"],
				s.Arrivals(), other.Arrivals(), res.ErrorDistribution)
		}
		if other.WithAuth() != 0 || other.WithCookie() != 0 {
			t.Errorf("credentials crossed to another origin: Authorization %d, Cookie %d times", other.WithAuth(), other.WithCookie())
		}
		if res.Hail.Counts.Requests != 30 {
			t.Errorf("a chain is one request: %d requests", res.Hail.Counts.Requests)
		}
	}},
	{"redirects/method-and-body", func(t *testing.T, v *env) {
		// RFC 9110 §15.4: 307 and 308 resend the request's own body (each
		// request's, not the first one's); 303 turns POST into GET without
		// the body or its Content-Type; HEAD stays HEAD; --host stays on a
		// relative redirect.
		cases := []struct {
			method, code string
			bodies       []string
			want         Seen
			wantBody     bool
		}{
			{"POST", "307", []string{"alpha", "bravo-bravo"}, Seen{Method: "POST", Host: "api.test", ContentType: "text/plain"}, true},
			{"PUT", "308", []string{"x"}, Seen{Method: "PUT", Host: "api.test", ContentType: "text/plain"}, true},
			{"POST", "303", []string{"gone"}, Seen{Method: "GET", Host: "api.test"}, false},
			{"HEAD", "303", nil, Seen{Method: "HEAD", Host: "api.test", ContentType: "text/plain"}, false}, // HEAD stays HEAD, as it was sent
		}
		for _, c := range cases {
			s := v.truth()
			p := v.plan(s, s.URL+"/to?code="+c.code+"&loc=/seen")
			p.Method, p.Requests, p.Connections, p.Host = c.method, 8, 2, "api.test"
			p.Headers = [][2]string{{"Content-Type", "text/plain"}}
			if v.e.Proto == H3 {
				p.Host = "" // the TLS server name must match the test certificate
				c.want.Host = strings.TrimPrefix(s.URL, "https://")
			}
			for _, b := range c.bodies {
				p.Bodies = append(p.Bodies, []byte(b))
			}
			res := v.run(p, run.Options{})
			if res.Hail.Counts.Responses != 8 {
				t.Errorf("%s %s: %d responses of 8 (errors %v)", c.method, c.code, res.Hail.Counts.Responses, res.ErrorDistribution)
				continue
			}
			sent := s.RedirectedBodies()
			landed := map[string]int{}
			for _, r := range s.SeenRequests() {
				body := r.Body
				r.Body = ""
				if r != c.want {
					t.Errorf("%s %s: the redirected request was %+v, want %+v", c.method, c.code, r, c.want)
				}
				landed[body]++
			}
			if c.wantBody && fmt.Sprint(landed) != fmt.Sprint(sent) {
				t.Errorf("%s %s: bodies sent %v, resent after the redirect %v: each request must resend its own", c.method, c.code, sent, landed)
			}
			if !c.wantBody && (len(landed) != 1 || landed[""] != 8) {
				t.Errorf("%s %s: bodies after the redirect %v, want none", c.method, c.code, landed)
			}
		}
	}},
	{"redirects/too-many", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/loop")
		p.Requests, p.MaxRedirects = 10, 3
		res := v.run(p, run.Options{})
		v.wantErrors(res, stats.ErrTooManyRedirects.String(), 10)
		if s.Arrivals() != 40 {
			t.Errorf("server arrivals %d, want 10 × 4", s.Arrivals())
		}
	}},
	{"redirects/bad-location", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/badloc")
		p.Requests = 10
		res := v.run(p, run.Options{})
		v.wantErrors(res, stats.ErrRedirect.String(), 10)
	}},
	{"redirects/timeout-spans-chain", func(t *testing.T, v *env) {
		// Five 100 ms hops with -t 350ms: the chain times out; -t is not per hop.
		s := v.truth()
		p := v.plan(s, s.URL+"/redirect?n=4&d=100ms")
		p.Requests, p.Connections, p.Timeout = 4, 4, 350*time.Millisecond
		res := v.run(p, run.Options{})
		v.wantErrors(res, stats.ErrTimeout.String(), 4)
	}},
	{"errors/refused", func(t *testing.T, v *env) {
		p := v.plan(nil, DeadURL(t, v.e.Proto)+"/")
		p.Requests, p.ConnectTimeout = 6, 300*time.Millisecond
		if v.e.Proto == H3 {
			p.Insecure = true
		}
		res := v.run(p, run.Options{})
		got := res.ErrorDistribution[stats.ErrConnectRefused.String()] + res.ErrorDistribution[stats.ErrConnectTimeout.String()]
		if c := res.Hail.Counts; got != 6 || c.Requests != 6 || c.NotSent != 6 || c.Sent != 0 {
			t.Errorf("refused or connect timeouts %d of %d requests, %d not sent, %d sent: want 6, each not sent (errors %v)", got, c.Requests, c.NotSent, c.Sent, res.ErrorDistribution)
		}
	}},
	{"stops-accepting", func(t *testing.T, v *env) {
		// The target stops accepting connections after 30 requests and
		// closes each connection after its next response: every request
		// after that fails to connect. Those are errors of their own kind,
		// counted as not sent (never as sent, nor as requests in the
		// per-second series); the server's count equals sent exactly.
		s := v.truth()
		p := v.plan(s, s.URL+"/delay?d=1ms") // every connection gets to carry requests before the stop
		p.Requests, p.ConnectTimeout = 90, 200*time.Millisecond
		s.StopAccepting(30, int64(p.Connections))
		if v.e.Proto == H3 {
			s.StopAccepting(30, 0)
			// QUIC connections cannot be closed from a handler: a new
			// one per request, one at a time (none waits in a backlog).
			// quic-go's server still completes some handshakes after its
			// listener closed (and then fails those requests), so only
			// the accounting is checked.
			p.Requests, p.Connections, p.KeepAlive = 36, 1, false
		}
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		c := res.Hail.Counts
		connect := res.ErrorDistribution[stats.ErrConnectRefused.String()] + res.ErrorDistribution[stats.ErrConnectTimeout.String()] +
			res.ErrorDistribution[stats.ErrQUICHandshake.String()]
		if c.Sent < 30 || connect != c.NotSent || c.Sent+c.NotSent != int64(p.Requests) || (v.e.Proto != H3 && c.NotSent == 0) {
			t.Errorf("sent %d (want ≥ 30), not sent %d, connect errors %d (want all the rest, each not sent): errors %v, arrivals %d, statuses %v",
				c.Sent, c.NotSent, connect, res.ErrorDistribution, s.Arrivals(), res.StatusCodeDistribution)
		}
		if a := res.Hail.AllSent; a.NotSent != c.NotSent || a.Requests+a.CutOff != c.Sent {
			t.Errorf("all sent: %d requests, %d cut off, %d not sent; want the %d sent and %d not sent", a.Requests, a.CutOff, a.NotSent, c.Sent, c.NotSent)
		}
	}},
	{"errors/cut", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/close")
		p.Requests = 6
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		kind := map[Proto]stats.ErrorKind{HTTP1: stats.ErrClosedBeforeResponse, H2C: stats.ErrHTTP2StreamReset, H3: stats.ErrHTTP3}[v.e.Proto]
		v.wantErrors(res, kind.String(), 6)
	}},
	{"stale-keep-alive", func(t *testing.T, v *env) {
		// The server closes idle keep-alive connections after 100 ms without
		// saying so; requests 300 ms apart find them closed and go again on a
		// new connection: responses, not errors.
		s := StartTruth(t, v.e.Proto, 100*time.Millisecond)
		p := v.plan(s, s.URL+"/")
		p.Requests, p.Connections, p.Rate = 5, 1, 3.3
		res := v.run(p, run.Options{})
		if res.StatusCodeDistribution["200"] != 5 || res.Hail.Counts.Errors != 0 {
			t.Errorf("200s %d of 5, errors %v: a stale connection is not the server's failure", res.StatusCodeDistribution["200"], res.ErrorDistribution)
		}
		if s.Arrivals() != 5 {
			t.Errorf("the server saw %d requests, want 5", s.Arrivals())
		}
		t.Logf("reconnects %d", res.Hail.Counts.Reconnects)
	}},
	{"early-response", func(t *testing.T, v *env) {
		// A 413 sent before the server read the 32 MiB body, then the
		// connection closed: the result is the 413, as curl reports it.
		s := v.truth()
		p := v.plan(s, s.URL+"/early")
		p.Requests, p.Connections, p.Method = 6, 2, "POST"
		p.Bodies = [][]byte{make([]byte, 32<<20)}
		res := v.run(p, run.Options{})
		if res.StatusCodeDistribution["413"] != 6 {
			t.Errorf("413s %d of 6 (errors %v)", res.StatusCodeDistribution["413"], res.ErrorDistribution)
		}
	}},
	{"status", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/status?code=503")
		p.Requests = 20
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		if res.StatusCodeDistribution["503"] != 20 || res.Hail.Counts.Errors != 0 {
			t.Errorf("503s %d of 20, errors %v: a status is a response, not an error", res.StatusCodeDistribution["503"], res.ErrorDistribution)
		}
	}},
	{"trace", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/")
		p.Requests, p.Rate = 300, 2000
		tr := stats.NewTracer(0)
		var records, bad atomic.Int64
		var seen [300]bool // every record names its request's number (Hit), each once
		done := make(chan struct{})
		go func() {
			defer close(done)
			for b := range tr.Batches() {
				for _, r := range b {
					records.Add(1)
					if r.Status != 200 || r.End < r.Start || r.Start < r.Intended || r.Hit >= 300 || seen[r.Hit] {
						bad.Add(1)
					} else {
						seen[r.Hit] = true
					}
				}
				tr.Recycle(b)
			}
		}()
		res := v.run(p, run.Options{Tracer: tr})
		tr.Close()
		<-done
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		if records.Load() != 300 || bad.Load() != 0 {
			t.Errorf("%d trace records (%d inconsistent), want 300 for 300 requests", records.Load(), bad.Load())
		}
	}},
	{"interrupt", func(t *testing.T, v *env) {
		// The interrupt comes once the server has seen 20 requests (not at
		// a fixed time: a loaded machine, under the race detector, sent
		// fewer than 20 in 400 ms); the run ends within 2 s of it.
		s := v.truth()
		p := v.plan(s, s.URL+"/delay?d=5ms")
		p.Duration, p.Rate = 10*time.Second, 500
		intr := make(chan struct{})
		at := afterArrivals(s, 20, func() { close(intr) })
		res := v.run(p, run.Options{Interrupt: intr})
		if el := time.Since(<-at); el > 2*time.Second {
			t.Errorf("the run took %v after an interrupt", el)
		}
		if c := res.Hail.Counts; !res.Hail.Interrupted || c.Sent < 20 {
			t.Errorf("interrupted %v, sent %d of %d intended (unsent %d, own lateness p99 %.1f ms, verdict %v)", res.Hail.Interrupted, c.Sent, c.Intended, c.Unsent,
				res.Hail.SendDelay.Own.P99.Seconds()*1e3, res.Hail.Verdict)
		}
		v.exact(res, settled(s, res.Hail.Counts.Sent))
	}},
	{"context", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/delay?d=5ms")
		p.Duration = 10 * time.Second
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		at := afterArrivals(s, 20, cancel)
		res := v.runContext(ctx, p, run.Options{})
		if el := time.Since(<-at); el > 2*time.Second {
			t.Errorf("the run took %v after its context ended", el)
		}
		if !res.Hail.Interrupted || res.Hail.Counts.Sent < 20 {
			t.Errorf("interrupted %v, sent %d", res.Hail.Interrupted, res.Hail.Counts.Sent)
		}
		v.exact(res, settled(s, res.Hail.Counts.Sent))
	}},
}

// settled is s's arrivals once they reach n (what hail sent), or after 2 s: a request
// written just before the run's context ended is in the server's socket
// when the run returns, and its handler counts it a moment later.
func settled(s *Truth, n int64) int64 {
	for end := time.Now().Add(2 * time.Second); s.Arrivals() < n && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	return s.Arrivals()
}

// afterArrivals calls f once s has seen n requests, or after 20 s (the
// caller's check of what was sent fails then), and sends on the returned
// channel when it did.
func afterArrivals(s *Truth, n int64, f func()) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(20 * time.Second); s.Arrivals() < n && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		f()
		at <- time.Now()
	}()
	return at
}
