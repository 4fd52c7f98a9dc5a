package run

import (
	"slices"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/testtier"
	"github.com/hail-loadgen/hail/result"
)

// Each stage of a ramp gets the requests intended in it, its warmup's left
// out: with rate stages the schedule says exactly how many that is. The
// stages and their warmups add up to the run's counts, which are the
// server's, and their histograms merge into the run's exactly, in the open
// model and the closed one, on both engines.
func TestStagesAddUp(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	rate := schedule.Ramp{Stages: []schedule.Stage{
		{Duration: 800 * ms, Target: 500, Step: true, Warmup: 200 * ms, Name: "low"},
		{Duration: 800 * ms, Target: 1000},
		{Duration: 0, Target: 300}, // a jump: no time, no request
		{Duration: 400 * ms, Target: 300, Step: true, Warmup: 100 * ms},
	}}
	conns := schedule.Ramp{Stages: []schedule.Stage{
		{Duration: 700 * ms, Target: 2, Step: true, Warmup: 200 * ms},
		{Duration: 700 * ms, Target: 6, Step: true, Warmup: 200 * ms},
	}}
	forEngines(t, func(t *testing.T, engine string) {
		t.Run("rate", func(t *testing.T) {
			t.Parallel()
			base, srv := servetest.Start(t)
			p := newPlan(t, base+"/", engine)
			p.Duration, p.Connections, p.WaitOngoing, p.Timeout = rate.Total(), 16, true, 5*time.Second
			pacer := schedule.NewRampRate(rate)
			res := mustRun(t, p, Options{Workload: &Workload{Pacer: pacer, Stages: rate.Stages}})
			if res.Hail.Counts.Unsent != 0 {
				t.Skipf("%d requests unsent (a loaded machine): the schedule's counts cannot be compared", res.Hail.Counts.Unsent)
			}
			// The schedule's own count of the requests intended in each slot.
			clock := schedule.NewStageClock(rate.Stages, p.Duration)
			want := make([]int64, clock.Slots())
			for h := uint64(0); ; h++ {
				at, stop := pacer.Pace(h)
				if stop || at >= p.Duration {
					break
				}
				want[clock.Slot(at)]++
			}
			st := res.Hail.Stages
			if len(st) != 4 {
				t.Fatalf("%d stages, want 4", len(st))
			}
			for i, s := range st {
				got := []int64{s.Counts.Requests}
				exp := []int64{want[i]}
				if w := clock.WarmupSlot(i); w >= 0 {
					if s.Warmup == nil {
						t.Fatalf("stage %d: no warmup in the result", i+1)
					}
					got, exp = append(got, s.Warmup.Counts.Requests), append(exp, want[w])
				}
				if !slices.Equal(got, exp) {
					t.Errorf("stage %d: %v requests (stage, warmup), the schedule intended %v", i+1, got, exp)
				}
			}
			if st[0].Name != "low" || st[0].Measured.Seconds() != 0.6 || st[0].Rates.RequestsPerSec != float64(want[0])/0.6 {
				t.Errorf("stage 1: name %q, %v s, %v req/s; want low, 0.6 s, %v", st[0].Name, st[0].Measured.Seconds(), st[0].Rates.RequestsPerSec, float64(want[0])/0.6)
			}
			if st[2].Counts.Requests != 0 || st[2].Measured.Seconds() != 0 {
				t.Errorf("the zero-length stage holds %d requests over %v s", st[2].Counts.Requests, st[2].Measured.Seconds())
			}
			checkStagesAddUp(t, res, srv.Stats().Requests)
		})
		t.Run("connections", func(t *testing.T) {
			t.Parallel()
			base, srv := servetest.Start(t)
			p := newPlan(t, base+"/?delay=2ms", engine)
			p.Duration, p.Connections, p.WaitOngoing, p.Timeout = conns.Total(), 6, true, 5*time.Second
			res := mustRun(t, p, Options{Workload: &Workload{Connections: &conns, Stages: conns.Stages}})
			st := res.Hail.Stages
			if len(st) != 2 || st[0].Kind != "connections" || st[1].Target != 6 || st[1].From != 2 {
				t.Fatalf("stages %+v", st)
			}
			for _, s := range st {
				if s.Counts.Requests == 0 || s.Warmup == nil || s.Warmup.Counts.Requests == 0 {
					t.Errorf("%s: %d requests, warmup %+v: every part of each stage sent", s.Label(), s.Counts.Requests, s.Warmup)
				}
			}
			// The second stage opened the four connections the first did not
			// use...
			if c := res.Hail.Counts.Connects; c != 6 {
				t.Errorf("%d connections opened, want 2 then 4 more", c)
			}
			// ...and six connections of 2 ms requests send about three times
			// what two do: on a quiet machine (the timing tier; when the
			// machine is the limit, six send little more than two).
			if r := st[1].Rates.RequestsPerSec / st[0].Rates.RequestsPerSec; r < 1.5 && testtier.On(testtier.Timing) {
				t.Errorf("6 connections sent %.1f/s, 2 sent %.1f/s: the stages' rates do not follow their connections", st[1].Rates.RequestsPerSec, st[0].Rates.RequestsPerSec)
			}
			checkStagesAddUp(t, res, srv.Stats().Requests)
		})
	})
}

// checkStagesAddUp checks that res's stages and warmups hold every
// request of the run, as many as the server answered, and that their
// histograms merge into the run's exactly.
func checkStagesAddUp(t *testing.T, res *result.Result, served uint64) {
	t.Helper()
	var n, resp int64
	run := map[string]*hdr.Histogram{}
	sum := map[string]*hdr.Histogram{}
	get := func(h result.Histograms) map[string]string {
		return map[string]string{"latency_2xx": h.LatencyOK, "latency_other": h.LatencyBad, "first_byte": h.FirstByte, "schedule_lag": h.Lag, "failed": h.Failed}
	}
	add := func(into map[string]*hdr.Histogram, hs result.Histograms) {
		for k, enc := range get(hs) {
			if into[k] == nil {
				into[k] = stats.NewHist()
			}
			if enc == "" {
				continue
			}
			d, err := report.DecodeHist(enc)
			if err != nil {
				t.Fatal(err)
			}
			into[k].Merge(d)
		}
	}
	add(run, res.Hail.Histograms)
	for _, s := range res.Hail.Stages {
		n += s.Counts.Requests
		resp += s.Counts.Responses
		add(sum, s.Histograms)
		if w := s.Warmup; w != nil {
			n += w.Counts.Requests
			resp += w.Counts.Responses
			add(sum, w.Histograms)
		}
	}
	if c := res.Hail.Counts; n != c.Requests || resp != c.Responses || uint64(c.Sent) != served {
		t.Errorf("stages hold %d requests (%d responses); the run %d (%d), sent %d; the server answered %d", n, resp, c.Requests, c.Responses, c.Sent, served)
	}
	for k, h := range run {
		if !slices.Equal(h.Export().Counts, sum[k].Export().Counts) || h.TotalCount() != sum[k].TotalCount() {
			t.Errorf("histogram %s: the stages' merge holds %d values, the run's %d (or they differ by bucket)", k, sum[k].TotalCount(), h.TotalCount())
		}
	}
	if run["latency_2xx"].TotalCount() == 0 {
		t.Error("no latency recorded: the check compared nothing")
	}
}
