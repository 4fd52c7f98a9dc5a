package run_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine/uringengine"
	"github.com/hail-loadgen/hail/internal/enginetest"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/stats"
)

// A server that never answers one request in 20, with -t 1s: oha's
// latency keys keep oha's meaning (the responses, all fast), while the
// latency of every sent request holds the 5% that timed out at their
// elapsed time (≥ -t): its p99 and max show them, and the thresholds'
// measure judges it (p99) unless asked for the responses only (p99_ok).
// Ground truth: the server counts what it left unanswered.
func TestFailuresInTheLatency(t *testing.T) {
	t.Parallel()
	for _, engine := range []plan.EngineName{plan.EngineNet, "uring"} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			if engine == "uring" && uringengine.Available() != nil {
				t.Skip("io_uring is not available here")
			}
			// The timeout is far above a response's time on a busy machine
			// (at 200 ms a loaded one timed out answered requests too).
			const timeout = time.Second
			s := enginetest.StartTruth(t, enginetest.HTTP1)
			u, _ := url.Parse(s.URL + "/drop?every=20")
			p := &plan.Plan{URL: u, Method: "GET", Requests: 400, Connections: 20, Timeout: timeout, KeepAlive: true,
				ConnectTimeout: 2 * time.Second, Engine: engine}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			res, err := run.Run(context.Background(), p, run.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, a := res.Hail.Counts, res.Hail.AllSent
			timeouts := res.ErrorDistribution[stats.ErrTimeout.String()]
			if s.Dropped() != 20 || timeouts != 20 || c.Sent != s.Arrivals() || c.Sent != 400 {
				t.Fatalf("the server left %d unanswered, %d timeouts reported; sent %d, arrivals %d", s.Dropped(), timeouts, c.Sent, s.Arrivals())
			}
			if a.Requests != 400 || a.Failed != 20 || a.Responses != 380 || a.CutOff != 0 || a.NotSent != 0 {
				t.Errorf("all sent %+v: want 400 = 380 responses + 20 failed", a)
			}
			if res.LatencyPercentiles.P99 >= timeout || res.Summary.Slowest >= timeout {
				t.Errorf("responses only: p99 %.1f ms, slowest %.1f ms: the timeouts are not responses", 1e3*res.LatencyPercentiles.P99.Seconds(), 1e3*res.Summary.Slowest.Seconds())
			}
			if a.P99 < timeout || a.Max < timeout || a.Max > 3*timeout || a.P90 >= timeout {
				t.Errorf("all sent: p90 %.1f ms, p99 %.1f ms, max %.1f ms: want the 5%% timeouts from p95 on, at ≥ %v", 1e3*a.P90.Seconds(), 1e3*a.P99.Seconds(), 1e3*a.Max.Seconds(), timeout)
			}
			m := report.MeasureRun(res)
			if v := m.Value("p", 99); v < timeout.Seconds() {
				t.Errorf("a threshold's p99 is %.1f ms: it must judge every sent request", 1e3*v)
			}
			if v := m.Value("p_ok", 99); v >= timeout.Seconds() {
				t.Errorf("p99_ok is %.1f ms: it judges the responses only", 1e3*v)
			}
			var series int64
			for _, sec := range res.Hail.Series {
				series += sec.Requests
			}
			if series != 400 {
				t.Errorf("the per-second series counts %d requests, want the 400 sent", series)
			}
		})
	}
}

// With -w, the requests that end after -z are counted and marked: how
// many, over how long a drain, and that the rates include them.
func TestDrainIsMarked(t *testing.T) {
	t.Parallel()
	s := enginetest.StartTruth(t, enginetest.HTTP1)
	u, _ := url.Parse(s.URL + "/delay?d=300ms")
	p := &plan.Plan{URL: u, Method: "GET", Duration: 500 * time.Millisecond, Connections: 4, KeepAlive: true, WaitOngoing: true,
		ConnectTimeout: 2 * time.Second, Engine: plan.EngineNet}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := run.Run(context.Background(), p, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, c := res.Hail.Drain, res.Hail.Counts
	if d == nil || d.Requests != 4 || !d.InRates || d.Duration.Seconds() < 0.05 || d.Duration.Seconds() > 0.35 {
		t.Fatalf("drain %+v: want the 4 requests in flight at -z, ended within its 300 ms", d)
	}
	if c.Responses != 8 || c.Aborted != 0 || res.Hail.Rates.RequestsPerSec != res.Summary.RequestsPerSec {
		t.Errorf("responses %d (want 4 before -z and 4 in the drain), aborted %d; rates %+v", c.Responses, c.Aborted, res.Hail.Rates)
	}
}
