package hail_test

// Every kind of run the command makes, from Go, against servers on
// loopback that count what they receive.

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/scenario"
)

func TestClosedModel(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=404:10", Requests: 1000, Connections: 8})
	if err != nil {
		t.Fatal(err)
	}
	hailtest.AssertExact(t, srv, res)
	if c := res.Hail.Counts; c.Sent != 1000 || c.Intended != 1000 || res.Hail.Model != "closed" {
		t.Errorf("counts %+v, model %s", c, res.Hail.Model)
	}
	if n := res.StatusCodeDistribution["404"]; n < 30 || n > 200 {
		t.Errorf("%d of 1000 were 404, want about 100", n)
	}
}

func TestOpenModel(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Rate: 400, Duration: time.Second, Connections: 4, WaitOngoing: true})
	if err != nil {
		t.Fatal(err)
	}
	hailtest.AssertExact(t, srv, res)
	if c := res.Hail.Counts; c.Intended != 400 || c.Sent+c.Unsent != 400 || res.Hail.Model != "open" {
		t.Errorf("counts %+v, model %s: want 400 intended at 400/s for 1 s", c, res.Hail.Model)
	}
}

// Rate stages ramp 0 → 200/s over a second and hold 200/s for half a
// second: 100 + 100 requests intended.
func TestRateStages(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Connections: 4, WaitOngoing: true,
		RateStages: []hail.Stage{{Duration: time.Second, Target: 200}, {Duration: 500 * time.Millisecond, Target: 200}}})
	if err != nil {
		t.Fatal(err)
	}
	hailtest.AssertExact(t, srv, res)
	c := res.Hail.Counts
	if c.Intended != 200 || c.Sent+c.Unsent != 200 || res.Hail.Model != "open" {
		t.Errorf("counts %+v, model %s: want 200 intended", c, res.Hail.Model)
	}
	if d := res.Summary.Total; d < 1400*time.Millisecond || d > 3*time.Second {
		t.Errorf("the run took %v, want the stages' 1.5 s", d)
	}
}

// Connection stages: 3 connections for 1.5 s, then 1 for a second; the
// server's own gauge of open connections says so at each second.
func TestConnectionStages(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	var open []int64
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?delay=1ms",
		ConnectionStages: []hail.Stage{{Duration: 1500 * time.Millisecond, Target: 3, Step: true}, {Duration: time.Second, Target: 1, Step: true}}},
		hail.WithProgress(func(hail.Progress) { open = append(open, srv.Stats().ConnectionsOpen) }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Hail.Model != "closed" || res.Hail.Config["connections"] != 3 {
		t.Errorf("model %s, connections %v: want closed, 3 (the peak)", res.Hail.Model, res.Hail.Config["connections"])
	}
	if len(open) < 2 || open[0] != 3 || open[1] != 1 {
		t.Errorf("the server had %v connections open at each second, want 3 then 1", open)
	}
}

// Each stage is reported on its own, its warmup left out: 200/s for a
// second (the first 250 ms a warmup), then 400/s for half a second. The
// schedule intends 150 + 50 requests in the first stage and its warmup, 200
// in the second; a threshold judges the second stage by its name. The
// requests due in the last moments that a loaded machine had not sent
// when the run stopped are unsent (the open model's accounting): they are
// the second stage's, which counts the rest (on CI's guest, with the fast
// tier's other tests and packages on both cores, 105 of its 200 once).
func TestStageResults(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Connections: 4, WaitOngoing: true,
		RateStages: []hail.Stage{{Duration: time.Second, Target: 200, Step: true, Warmup: 250 * time.Millisecond},
			{Duration: 500 * time.Millisecond, Target: 400, Step: true, Name: "peak"}},
		Thresholds: []hail.Threshold{{Expr: "rps > 300", Stage: "peak"}, {Expr: "rps > 300", Stage: "1"}}})
	var te *hail.ThresholdError
	if !errors.As(err, &te) {
		t.Fatalf("error %v, want a *hail.ThresholdError (stage 1 runs at 200/s)", err)
	}
	hailtest.AssertExact(t, srv, res)
	st := res.Hail.Stages
	unsent := res.Hail.Counts.Unsent
	if len(st) != 2 || res.Hail.Counts.Intended != 400 {
		t.Fatalf("%d stages, %d intended", len(st), res.Hail.Counts.Intended)
	}
	w := st[0].Warmup
	if st[0].Counts.Requests != 150 || w == nil || w.Counts.Requests != 50 || w.Duration != 250*time.Millisecond ||
		st[1].Counts.Requests+unsent != 200 || st[1].Counts.Requests < 40 {
		t.Errorf("stage 1: %d requests, warmup %+v; stage 2: %d and %d unsent; want 150, 50 over 250ms, 200 in all (at least 40 sent)",
			st[0].Counts.Requests, w, st[1].Counts.Requests, unsent)
	}
	peak := float64(st[1].Counts.Requests) / 0.5
	if st[0].Measured != 750*time.Millisecond || st[1].Name != "peak" || st[1].Start != time.Second || st[1].Rates.RequestsPerSec != peak {
		t.Errorf("stage 1 measured %v; stage 2 %q from %v at %v/s, want %v/s", st[0].Measured, st[1].Name, st[1].Start, st[1].Rates.RequestsPerSec, peak)
	}
	th := res.Hail.Thresholds
	if len(th) != 2 || th[0].Stage != "peak" || th[0].Value != peak || th[0].Pass != (peak > 300) || th[1].Pass || th[1].Value != 200 {
		t.Errorf("thresholds %+v: stage peak at %v/s is judged by rps > 300, stage 1 at 200/s fails", th, peak)
	}
}

// Bursts of 10 every 100 ms for a second: 100 requests, all answered.
func TestBursts(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", BurstEvery: 100 * time.Millisecond, BurstSize: 10,
		Duration: time.Second, Connections: 10, WaitOngoing: true})
	if err != nil {
		t.Fatal(err)
	}
	hailtest.AssertExact(t, srv, res)
	if c := res.Hail.Counts; c.Intended != 100 || c.Sent != 100 {
		t.Errorf("counts %+v: want 100 intended and sent", c)
	}
}

func TestThresholds(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=500:20", Requests: 500, Connections: 4,
		Thresholds: []hail.Threshold{{Expr: "p99 < 5s"}, {Expr: "error_rate < 1%"}}})
	var te *hail.ThresholdError
	if !errors.As(err, &te) {
		t.Fatalf("error %v, want a *hail.ThresholdError", err)
	}
	if te.Total != 2 || len(te.Failed) != 1 || te.Failed[0].Expr != "error_rate < 1%" || te.Failed[0].Pass {
		t.Errorf("threshold error %+v", te)
	}
	if len(res.Hail.Thresholds) != 2 || !res.Hail.Thresholds[0].Pass {
		t.Errorf("result thresholds %+v", res.Hail.Thresholds)
	}
	if !strings.Contains(err.Error(), "error_rate < 1%: measured") {
		t.Errorf("error %q", err)
	}
}

// A threshold with AbortOnFail stops a 30 s run once it has 100 requests
// and its second.
func TestThresholdAbortsTheRun(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=503:50", Duration: 30 * time.Second, Rate: 300,
		Connections: 4, Thresholds: []hail.Threshold{{Expr: "error_rate < 1%", AbortOnFail: true}}})
	var te *hail.ThresholdError
	if !errors.As(err, &te) || te.StoppedBy == "" {
		t.Fatalf("error %v, want a *hail.ThresholdError that stopped the run", err)
	}
	if res.Summary.Total > 10*time.Second || res.Hail.StoppedBy == "" {
		t.Errorf("ran %v, stopped by %q", res.Summary.Total, res.Hail.StoppedBy)
	}
}

func TestBadPlanField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p     hail.Plan
		field string
	}{
		{hail.Plan{URL: "http://127.0.0.1:1/", Connections: -1}, "Connections"},
		{hail.Plan{URL: "http://127.0.0.1:1/", Rate: 10, RateStages: []hail.Stage{{Duration: time.Second, Target: 5}}}, "Rate"},
		{hail.Plan{URL: "http://127.0.0.1:1/", RateStages: []hail.Stage{{Duration: -time.Second, Target: 5}}}, "RateStages[0].Duration"},
		{hail.Plan{URL: "http://127.0.0.1:1/", Thresholds: []hail.Threshold{{Expr: "p99 12ms"}}}, "Thresholds[0]"},
		{hail.Plan{URL: "http://127.0.0.1:1/", Thresholds: []hail.Threshold{{Expr: "p99 < 12ms", Step: "x"}}}, "Thresholds[0].Step"},
		{hail.Plan{URL: "http://127.0.0.1:1/", RateStages: []hail.Stage{{Duration: time.Second, Target: 5, Warmup: time.Second}}}, "RateStages[0].Warmup"},
		{hail.Plan{URL: "http://127.0.0.1:1/", RateStages: []hail.Stage{{Duration: time.Second, Target: 5, Name: "12"}}}, "RateStages[0].Name"},
		{hail.Plan{URL: "http://127.0.0.1:1/", RateStages: []hail.Stage{{Duration: time.Second, Target: 5, Name: "a"}, {Duration: time.Second, Name: "a"}}}, "RateStages[1].Name"},
		{hail.Plan{URL: "http://127.0.0.1:1/", RateStages: []hail.Stage{{Duration: time.Second, Target: 5}}, Thresholds: []hail.Threshold{{Expr: "p99 < 12ms", Stage: "2"}}}, "Thresholds[0].Stage"},
		{hail.Plan{URL: "http://127.0.0.1:1/", Thresholds: []hail.Threshold{{Expr: "p99 < 12ms", Stage: "1"}}}, "Thresholds[0].Stage"},
		{hail.Plan{URL: "http://127.0.0.1:1/", HTTPVersion: "4"}, "HTTPVersion"},
		{hail.Plan{URL: "http://127.0.0.1:1/", Streams: 4}, "Streams"},
		{hail.Plan{URL: "http://127.0.0.1:1/", ConnectTo: map[string]string{"a": "b"}}, "ConnectTo"},
		{hail.Plan{URL: "http://127.0.0.1:1/x", GRPC: &hail.GRPCCall{Method: "a.B/C"}}, "URL"},
		{hail.Plan{URL: "http://127.0.0.1:1", GRPC: &hail.GRPCCall{Method: "nomethod"}}, "GRPC.Method"},
		{hail.Plan{URL: "http://127.0.0.1:1", GRPC: &hail.GRPCCall{Method: "a.B/C", Metadata: map[string]string{"grpc-x": "1"}}}, "GRPC.Metadata"},
		{hail.Plan{URL: "http://127.0.0.1:1", GRPC: &hail.GRPCCall{Method: "a.B/C", Protos: []string{"/nonexistent/x.proto"}}}, "GRPC.Protos"},
	} {
		_, err := hail.Run(context.Background(), c.p)
		var fe *hail.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: error %v, want a *hail.FieldError for %s", c.p, err, c.field)
			continue
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("%s: %q names a flag of the command", c.field, err)
		}
	}
}

// Every connection refused: the Result says so, and the error is an
// *UnreachableError.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	res, err := hail.Run(context.Background(), hail.Plan{URL: "http://127.0.0.1:1/", Requests: 20, Connections: 2})
	var ue *hail.UnreachableError
	if !errors.As(err, &ue) || res == nil {
		t.Fatalf("error %v, result %v: want an *UnreachableError with the Result", err, res)
	}
	if ue.NotSent != 20 || ue.Errors["connection refused"] != 20 || ue.Addr != "127.0.0.1:1" || res.Hail.Counts.NotSent != 20 {
		t.Errorf("%+v", ue)
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("%q names a flag of the command", err)
	}
}

func TestNoSuccess(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=503", Requests: 50, Connections: 2})
	var ne *hail.NoSuccessError
	if !errors.As(err, &ne) || res == nil || res.StatusCodeDistribution["503"] != 50 {
		t.Fatalf("error %v: want a *NoSuccessError with the Result", err)
	}
}

// Cancelling the context ends the run with a complete Result; with
// WaitOngoing its counts are the server's exactly.
func TestCancelKeepsAllCounts(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	var ticks atomic.Int32
	res, err := hail.Run(ctx, hail.Plan{URL: srv.URL + "/?delay=2ms", Duration: time.Minute, Connections: 4, WaitOngoing: true},
		hail.WithProgress(func(hail.Progress) {
			if ticks.Add(1) == 1 {
				cancel()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Hail.Interrupted || res.Hail.UnsentReason != "" && res.Hail.UnsentReason != "interrupt" || res.Summary.Total > 10*time.Second {
		t.Errorf("interrupted %v (%q), total %v", res.Hail.Interrupted, res.Hail.UnsentReason, res.Summary.Total)
	}
	if res.Hail.Counts.Sent == 0 {
		t.Errorf("nothing sent: %+v", res.Hail.Counts)
	}
	hailtest.AssertExact(t, srv, res)
}

// Progress carries the live view's counters.
func TestProgress(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	var got []hail.Progress
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=404:50", Rate: 200, Duration: 2500 * time.Millisecond, Connections: 4},
		hail.WithProgress(func(p hail.Progress) { got = append(got, p) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 {
		t.Fatalf("%d progress calls in 2.5 s", len(got))
	}
	p := got[1]
	if p.Elapsed < 2*time.Second || p.Requests < 300 || p.Status["200"]+p.Status["404"] != p.Responses || p.Responses != p.Requests-p.Errors {
		t.Errorf("progress at 2 s: %+v", p)
	}
	if p.P99 <= 0 || p.AllSentMax < p.P50 || p.Last.Index != 1 || p.RequestsPerSec < 100 || p.Last.Span != time.Second {
		t.Errorf("progress latencies and last second: %+v", p)
	}
	if got[0].Requests > p.Requests || p.Requests > res.Hail.Counts.Requests {
		t.Errorf("requests went %d, %d, then %d at the end", got[0].Requests, p.Requests, res.Hail.Counts.Requests)
	}
}

const scenarioYAML = `
name: items
base: http://unused:1
connections: 4
requests: 400
setup:
  - {name: seed, method: POST, path: /items, body_json: {name: seed}, capture: {items: {json: id}}, expect: {status: 201}, repeat: 5}
steps:
  - {name: create, method: POST, path: /items, body_json: {name: 'vm-{{counter}}'}, capture: {items: {json: id}}, expect: {status: 201}}
  - {name: get, weight: 3, path: '/items/{{pick items}}', expect: {status: 200}}
teardown:
  - {name: cleanup, method: DELETE, path: '/items/{{take items}}', expect: {status: [204, 404]}, repeat: all}
thresholds:
  - {expr: error_rate < 1%, step: get}
`

// A scenario from YAML: setup, a mix, teardown and a threshold; the
// server's /items store is left as it was found.
func TestScenarioFromYAML(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	sc, err := hail.ReadScenario("items.yaml", strings.NewReader(scenarioYAML))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a Scenario runs again from scratch
		srv.ResetStats()
		res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc, URL: srv.URL, Thresholds: []hail.Threshold{{Expr: "p99 < 10s"}}})
		if err != nil {
			t.Fatal(err)
		}
		h := res.Hail
		if len(h.Steps) != 2 || h.Steps[0].Name != "create" || h.Setup == nil || h.Setup.Steps[0].Counts.Requests != 5 || h.Teardown == nil {
			t.Fatalf("steps %d, setup %+v, teardown %+v", len(h.Steps), h.Setup, h.Teardown)
		}
		if len(h.Thresholds) != 2 || h.Scenario == nil || h.Scenario.Name != "items" || h.Counts.Requests != 400 {
			t.Errorf("thresholds %+v, scenario %+v, counts %+v", h.Thresholds, h.Scenario, h.Counts)
		}
		if live := srv.Stats().Items.Live; live != 0 {
			t.Errorf("%d items left after the teardown", live)
		}
		hailtest.AssertExact(t, srv, res)
	}
}

// A scenario built in Go runs as its YAML would, and a problem in it is
// reported at its place in the File.
func TestScenarioBuiltInGo(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	f := &scenario.File{
		Base: srv.URL,
		Steps: []scenario.Step{
			{Name: "create", Method: "POST", Path: "/items", BodyJSON: map[string]any{"name": "vm-{{counter}}"},
				Capture: map[string]scenario.Capture{"items": {JSON: "id"}}, Expect: &scenario.Expect{Status: []string{"201"}}},
			{Name: "get", Weight: 2, Path: "/items/{{pick items}}", Expect: &scenario.Expect{Status: []string{"2xx"}}},
		},
		Setup:      []scenario.Step{{Name: "seed", Method: "POST", Path: "/items", Capture: map[string]scenario.Capture{"items": {JSON: "id"}}}},
		RateStages: []scenario.Stage{{Duration: 500 * time.Millisecond, Target: 200, Step: true}},
		Thresholds: []scenario.Threshold{{Expr: "error_rate < 1%"}},
	}
	sc, err := hail.NewScenario(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc, WaitOngoing: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Hail.Counts; c.Intended != 100 || res.Hail.Model != "open" || len(res.Hail.Steps) != 2 || len(res.Hail.Thresholds) != 1 {
		t.Errorf("counts %+v, model %s, steps %d", c, res.Hail.Model, len(res.Hail.Steps))
	}
	hailtest.AssertExact(t, srv, res) // the setup's request too
	f.Steps[1].Expect.Status = []string{"2zz"}
	_, err = hail.NewScenario(f)
	var se *hail.ScenarioError
	if !errors.As(err, &se) || se.Path != "steps[1].expect.status[0]" {
		t.Errorf("error %v (%+v), want a *ScenarioError at steps[1].expect.status[0]", err, se)
	}
}

// A problem in a YAML scenario is at its line and column.
func TestScenarioErrorAtLine(t *testing.T) {
	t.Parallel()
	_, err := hail.ReadScenario("bad.yaml", strings.NewReader("base: http://127.0.0.1:1\nrequests: 1\nsteps:\n  - {name: a, pth: /}\n"))
	var se *hail.ScenarioError
	if !errors.As(err, &se) || se.File != "bad.yaml" || se.Line != 4 || !strings.HasPrefix(err.Error(), "bad.yaml:4:") {
		t.Errorf("error %v, want a *ScenarioError at bad.yaml:4", err)
	}
}

// gRPC calls as hail grpc makes them, counted by the server too.
func TestGRPC(t *testing.T) {
	t.Parallel()
	g, err := grpcserve.New(grpcserve.Config{})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := g.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve()
	t.Cleanup(g.Close)
	url := "http://" + addr.String()
	res, err := hail.Run(context.Background(), hail.Plan{URL: url, Requests: 300, Connections: 2, Streams: 4,
		GRPC: &hail.GRPCCall{Method: "hail.v1.Target/Echo", Data: `{"payload":"p{{counter}}"}`, Metadata: map[string]string{"x-tenant": "blue"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCodeDistribution["OK"] != 300 || g.TotalCalls() != 300 || res.Hail.GRPC == nil || res.Hail.GRPC.Calls != 300 ||
		res.Hail.GRPC.Call != "hail.v1.Target/Echo" || res.Hail.GRPC.Kind != "unary" || g.Metadata("x-tenant")["blue"] != 300 {
		t.Errorf("statuses %v, server calls %d, grpc %+v", res.StatusCodeDistribution, g.TotalCalls(), res.Hail.GRPC)
	}
	_, err = hail.Run(context.Background(), hail.Plan{URL: url, Requests: 1, GRPC: &hail.GRPCCall{Method: "hail.v1.Target/Echo", Data: `[{"payload":"x"},{"payload":7}]`}})
	var fe *hail.FieldError
	if !errors.As(err, &fe) || fe.Field != "GRPC.Data" || fe.Value != "[1]" || !strings.Contains(fe.Problem, "payload") {
		t.Errorf("bad data: %v (%+v), want a *FieldError for GRPC.Data [1]", err, fe)
	}
	_, err = hail.Run(context.Background(), hail.Plan{URL: "http://127.0.0.1:1", Requests: 1, GRPC: &hail.GRPCCall{Method: "hail.v1.Target/Echo"}})
	var ue *hail.UnreachableError
	if !errors.As(err, &ue) || ue.Addr != "127.0.0.1:1" {
		t.Errorf("no gRPC server: %v, want an *UnreachableError", err)
	}
	_, err = hail.Run(context.Background(), hail.Plan{URL: "https://" + addr.String(), Requests: 1, GRPC: &hail.GRPCCall{Method: "hail.v1.Target/Echo"}})
	if err == nil || !strings.Contains(err.Error(), "http://"+addr.String()) || strings.Contains(err.Error(), "--") {
		t.Errorf("TLS to a plaintext server: %v, want advice to write an http:// URL", err)
	}
}

// time.Duration fields are whole nanoseconds of the JSON's seconds.
func TestDurationsAreExact(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Requests: 200, Connections: 2})
	if err != nil {
		t.Fatal(err)
	}
	mean := float64(res.Hail.Counts.LatencySum) / float64(res.Hail.Counts.Responses)
	if math.Abs(float64(res.Summary.Average)-mean) > 1 {
		t.Errorf("average %v, latency sum / responses %.1f ns", res.Summary.Average, mean)
	}
}

// LoadScenario reads a file; ScenarioVars, ScenarioEnv and ScenarioBase
// are hail run's --var, the environment and --base; ScenarioFileLimit
// bounds what it reads.
func TestLoadScenarioOptions(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	path := filepath.Join(t.TempDir(), "s.yaml")
	src := "requests: 20\nconnections: 2\nsteps:\n  - {name: a, path: '/?status={{var.code}}', headers: {X-Env: '{{env.HAIL_X}}'}}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(name string) (string, bool) { return "from-env", name == "HAIL_X" }
	sc, err := hail.LoadScenario(path, hail.ScenarioVars(map[string]string{"code": "404"}), hail.ScenarioEnv(env), hail.ScenarioBase(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc})
	var ne *hail.NoSuccessError
	if !errors.As(err, &ne) || res.StatusCodeDistribution["404"] != 20 {
		t.Errorf("error %v, statuses %v: want 20 of the variable's 404", err, res.StatusCodeDistribution)
	}
	if _, err := hail.LoadScenario(path); err == nil || !strings.Contains(err.Error(), "(or ScenarioBase, or Plan.URL)") {
		t.Errorf("without a base: %v", err)
	}
	if _, err := hail.LoadScenario(path, hail.ScenarioBase(srv.URL)); err == nil || !strings.Contains(err.Error(), `undefined variable "code"`) {
		t.Errorf("without the variable: %v", err)
	}
	if _, err := hail.LoadScenario(path, hail.ScenarioFileLimit(10)); err == nil || !strings.Contains(err.Error(), "raise it with ScenarioFileLimit") {
		t.Errorf("a file over the limit: %v", err)
	}
}

// WithTargetPID samples the target's process: here this one, which runs
// the built-in target.
func TestTargetPID(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Rate: 100, Duration: 1200 * time.Millisecond},
		hail.WithTargetPID(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	if tg := res.Hail.Target; tg == nil || tg.PID != os.Getpid() || tg.Samples < 1 || tg.PeakRSSBytes <= 0 {
		t.Errorf("target %+v, want this process sampled", tg)
	}
}

// WithTargetCmd and WithTargetCgroup name the target's processes too: one
// that is not there stops the run before anything is sent, in the API's
// words.
func TestTargetNotThere(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	for _, c := range []struct {
		opt  hail.Option
		want string
	}{
		{hail.WithTargetCmd("no-such-server-xyz"), "WithTargetCmd no-such-server-xyz: no process of that name"},
		{hail.WithTargetCgroup("/no/such/cgroup-xyz"), "WithTargetCgroup"},
		{hail.WithTargetPID(-1), "WithTargetPID -1"},
	} {
		res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Requests: 10}, c.opt)
		if err == nil || res != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: result %v, error %v", c.want, res != nil, err)
		}
	}
	if st := srv.Stats(); st.Requests != 0 {
		t.Errorf("the server saw %d requests, want none", st.Requests)
	}
}

// A setup step that fails stops the run before the load: a *SetupError
// naming the step, and the teardown has cleaned up.
func TestSetupError(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	sc, err := hail.ReadScenario("s.yaml", strings.NewReader(`
requests: 10
setup:
  - {name: make, method: POST, path: /items, capture: {items: {json: id}}, expect: {status: 201}}
  - {name: fail, path: '/?status=503', expect: {status: 200}}
steps:
  - {name: a, path: /}
teardown:
  - {name: cleanup, method: DELETE, path: '/items/{{take items}}', repeat: all}
`), hail.ScenarioBase(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc})
	var se *hail.SetupError
	if !errors.As(err, &se) || res != nil || se.Step != "fail" || se.Setup == nil || se.Teardown == nil || se.Teardown.Steps[0].Counts.Responses != 1 {
		t.Fatalf("error %v (%+v), result %v: want a *SetupError for step fail, the teardown run", err, se, res)
	}
	if st := srv.Stats(); st.Items.Live != 0 || st.ByStatus[200] != 0 {
		t.Errorf("after the failed setup: %+v (no load request, no item left)", st)
	}
}

// Progress has a scenario's steps.
func TestProgressSteps(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	sc, err := hail.NewScenario(&scenario.File{Base: srv.URL, Rate: 200, Duration: 1200 * time.Millisecond,
		Steps: []scenario.Step{{Name: "one", Path: "/"}, {Name: "two", Path: "/?status=404", Expect: &scenario.Expect{Status: []string{"200"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var steps []hail.StepProgress
	_, err = hail.Run(context.Background(), hail.Plan{Scenario: sc}, hail.WithProgress(func(p hail.Progress) {
		if steps == nil {
			steps = p.Steps
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	// two's responses fail its check: errors of the step
	if len(steps) != 2 || steps[0].Name != "one" || steps[1].Name != "two" || steps[0].Requests+steps[1].Requests < 150 ||
		steps[1].Errors != steps[1].Requests || steps[0].Errors != 0 || steps[0].P99 <= 0 {
		t.Errorf("steps at 1 s: %+v", steps)
	}
}
