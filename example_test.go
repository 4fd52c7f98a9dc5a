package hail_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/scenario"
)

// The closed model: each connection sends its next request when the
// previous one ends.
func ExampleRun() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Requests: 1000, Connections: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Hail.Counts
	fmt.Println("sent:", c.Sent, "responses:", c.Responses, "errors:", c.Errors)
	// Output: sent: 1000 responses: 1000 errors: 0
}

// The open model: requests at fixed intended times; latency counts from
// them, and the verdict names the bottleneck.
func ExampleRun_openModel() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Rate: 1000, Duration: 250 * time.Millisecond, Connections: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Hail.Counts
	fmt.Println("intended:", c.Intended, "sent + unsent:", c.Sent+c.Unsent, "model:", res.Hail.Model)
	// Output: intended: 250 sent + unsent: 250 model: open
}

// Rate stages ramp the open model's rate, as k6's ramping-arrival-rate:
// 0 → 400/s over a quarter of a second (50 requests), then 400/s for an
// eighth of a second.
func ExampleRun_rateStages() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Connections: 4, WaitOngoing: true,
		RateStages: []hail.Stage{{Duration: 250 * time.Millisecond, Target: 400}, {Duration: 125 * time.Millisecond, Target: 400}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("intended:", res.Hail.Counts.Intended, "model:", res.Hail.Model)
	// Output: intended: 100 model: open
}

// Connection stages ramp the closed model's connections, as k6's
// ramping-vus: 3 connections for an eighth of a second, then 1. The run's
// connections are the stages' peak. The stages end the run as -z does: a
// request in flight then is aborted (an error, "aborted due to deadline")
// unless WaitOngoing lets it finish, as k6's graceful stop does.
func ExampleRun_connectionStages() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?delay=1ms",
		ConnectionStages: []hail.Stage{{Duration: 125 * time.Millisecond, Target: 3, Step: true}, {Duration: 125 * time.Millisecond, Target: 1, Step: true}},
		WaitOngoing:      true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("model:", res.Hail.Model, "connections:", res.Hail.Config["connections"], "errors:", res.Hail.Counts.Errors)
	// Output: model: closed connections: 3 errors: 0
}

// Bursts: 10 requests at once every 100 ms.
func ExampleRun_bursts() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", BurstEvery: 100 * time.Millisecond, BurstSize: 10,
		Duration: 250 * time.Millisecond, Connections: 10, WaitOngoing: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A burst that a busy machine had not sent when the run ended is
	// unsent, not lost.
	c := res.Hail.Counts
	fmt.Println("intended:", c.Intended, "sent or unsent:", c.Sent+c.Unsent)
	// Output: intended: 30 sent or unsent: 30
}

// Thresholds judge the run; a failed one is a *ThresholdError, returned
// with the complete Result.
func ExampleRun_thresholds() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=500:30", Requests: 500, Connections: 4,
		Thresholds: []hail.Threshold{{Expr: "p99 < 10s"}, {Expr: "error_rate < 1%"}}})
	var te *hail.ThresholdError
	if errors.As(err, &te) {
		fmt.Println("failed:", te.Failed[0].Expr, "of", te.Total)
	}
	for _, t := range res.Hail.Thresholds {
		fmt.Println(t.Expr, "pass:", t.Pass)
	}
	// Output:
	// failed: error_rate < 1% of 2
	// p99 < 10s pass: true
	// error_rate < 1% pass: false
}

// A scenario file: setup, a weighted mix with captures and checks,
// teardown (docs/scenarios.md). LoadScenario reads one from a path.
func ExampleReadScenario() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	sc, err := hail.ReadScenario("items.yaml", strings.NewReader(`
base: http://127.0.0.1:8080
connections: 4
requests: 300
setup:
  - {name: seed, method: POST, path: /items, capture: {items: {json: id}}, expect: {status: 201}}
steps:
  - {name: create, method: POST, path: /items, body_json: {name: 'vm-{{counter}}'}, capture: {items: {json: id}}}
  - {name: get, weight: 2, path: '/items/{{pick items}}', expect: {status: 200}}
teardown:
  - {name: cleanup, method: DELETE, path: '/items/{{take items}}', repeat: all}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc, URL: srv.URL}) // URL replaces the base
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range res.Hail.Steps {
		fmt.Println(s.Name, "failed:", s.Counts.Failed)
	}
	fmt.Println("requests:", res.Hail.Counts.Requests, "items left:", srv.Stats().Items.Live)
	// Output:
	// create failed: 0
	// get failed: 0
	// requests: 300 items left: 0
}

// A scenario built in Go: package scenario's File is the file format as Go
// values.
func ExampleNewScenario() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	sc, err := hail.NewScenario(&scenario.File{
		Base: srv.URL,
		Steps: []scenario.Step{
			{Name: "echo", Method: "POST", Path: "/echo", BodyJSON: map[string]any{"id": "{{counter}}"},
				Expect: &scenario.Expect{Status: []string{"200"}, JSON: map[string]any{"id": "{{var.first}}"}}},
		},
		Variables: map[string]any{"first": 1},
		Requests:  1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("responses:", res.Hail.Counts.Responses, "check failures:", res.Hail.Steps[0].CheckFailures)
	// A problem is reported at its place in the File:
	_, err = hail.NewScenario(&scenario.File{Base: srv.URL, Requests: 1, Steps: []scenario.Step{{Name: "a", Path: "/", Expect: &scenario.Expect{Status: []string{"2zz"}}}}})
	fmt.Println(err)
	// Output:
	// responses: 1 check failures: map[]
	// steps[0].expect.status[0]: a.expect.status: expected status codes such as 201, [200, 204] or 2xx (gRPC: OK, NotFound, …), found "2zz"
}

// gRPC calls, as hail grpc makes them: the schema by server reflection
// here (GRPCCall.Protos or Protoset give it from files), 2 connections
// with 4 calls in flight on each. grpcTarget stands for a gRPC server
// (hail serve --grpc 127.0.0.1:9090 is one, with reflection).
func ExampleGRPCCall() {
	addr, stop := grpcTarget()
	defer stop()
	res, err := hail.Run(context.Background(), hail.Plan{URL: "http://" + addr, Requests: 200, Connections: 2, Streams: 4,
		GRPC: &hail.GRPCCall{Method: "hail.v1.Target/Echo", Data: `{"payload":"call {{counter}}"}`}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("OK:", res.StatusCodeDistribution["OK"], "calls:", res.Hail.GRPC.Calls, res.Hail.GRPC.Kind)
	// Output: OK: 200 calls: 200 unary
}

// An LLM inference load, as hail llm sends it, against the mock inference
// server hail serve --openai (here hailtest's, with 4 batch slots, a token
// every 2 ms): 12 streaming chat completions of 64 prompt tokens and 16
// output tokens each, from 6 connections. With the slots full, the
// requests beyond them queue in the server: the queue is in the time to
// first token from the intended send and from the actual send alike.
func ExampleLLMLoad() {
	srv := startOpenAI(hailtest.OpenAIConfig{Slots: 4, ITL: 2 * time.Millisecond})
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/v1/chat/completions", Requests: 12, Connections: 6,
		LLM: &hail.LLMLoad{InputTokens: "64", OutputTokens: "16", SLOTPOT: 50 * time.Millisecond}})
	if err != nil {
		fmt.Println(err)
		return
	}
	l := res.Hail.LLM
	fmt.Println("completed:", l.Completed, "output tokens:", l.TotalOutputTokens, "token source:", l.TokenSource)
	fmt.Println("ITL samples:", l.ITL.Samples, "TTFT ≥ TTFT from send:", l.TTFT.P50 >= l.TTFTFromSend.P50, "mock's tokens:", srv.Stats().Tokens)
	// Output:
	// completed: 12 output tokens: 192 token source: map[usage_spread:12]
	// ITL samples: 180 TTFT ≥ TTFT from send: true mock's tokens: 192
}

// An LLM load through rate stages, as hail llm --stages sends it: 40
// requests/s for a quarter of a second, then 80/s for a quarter of a
// second whose first half is a warm-up, evenly spaced (LLM.Arrivals; Poisson by default). Each stage
// has its own LLM results (Result.Hail.Stages[i].LLM), the warm-up's
// requests left out of them as from the stage's other figures; the
// warm-up has its own (Stages[i].Warmup.LLM), and with the stages' they
// add up to the run's.
func ExampleLLMLoad_rateStages() {
	srv := startOpenAI(hailtest.OpenAIConfig{Slots: 16, ITL: 2 * time.Millisecond})
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/v1/completions", Connections: 8,
		RateStages: []hail.Stage{{Duration: 250 * time.Millisecond, Target: 40, Step: true}, {Duration: 250 * time.Millisecond, Target: 80, Step: true, Warmup: 125 * time.Millisecond}},
		LLM:        &hail.LLMLoad{InputTokens: "16", OutputTokens: "8", Arrivals: "constant", SLOTTFT: time.Second}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range res.Hail.Stages {
		l := s.LLM
		warm := "none"
		if w := s.Warmup; w != nil {
			warm = fmt.Sprint(w.Counts.Requests, " requests, ", w.LLM.Completed, " completed")
		}
		fmt.Println("stage", s.Stage, s.Target, "req/s completed:", l.Completed, "tokens:", l.TotalOutputTokens, "TTFT samples:", l.TTFT.Samples,
			"met the SLO:", l.Goodput.Requests, "warm-up:", warm)
	}
	fmt.Println("the run's:", res.Hail.LLM.Completed)
	// Output:
	// stage 1 40 req/s completed: 10 tokens: 80 TTFT samples: 10 met the SLO: 10 warm-up: none
	// stage 2 80 req/s completed: 10 tokens: 80 TTFT samples: 10 met the SLO: 10 warm-up: 10 requests, 10 completed
	// the run's: 30
}

// startOpenAI starts hailtest's mock inference server (or exits: an
// example has no testing.T).
func startOpenAI(cfg hailtest.OpenAIConfig) *hailtest.OpenAIServer {
	srv, err := hailtest.StartOpenAI(cfg)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	return srv
}

// Cancelling the context ends the run early, with a complete result.
func ExampleRun_cancel() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := hail.Run(ctx, hail.Plan{URL: srv.URL + "/?delay=1ms", Duration: time.Minute, Connections: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("interrupted:", res.Hail.Interrupted, "took under a second:", res.Summary.Total < time.Second)
	// Output: interrupted: true took under a second: true
}

// A plan that cannot run names the field at fault.
func ExamplePlan_Validate() {
	err := hail.Plan{URL: "http://127.0.0.1:8080/", Streams: 4}.Validate()
	var fe *hail.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Field)
		fmt.Println(err)
	}
	// Output:
	// Streams
	// Streams 4: several streams per connection need HTTP/2 or HTTP/3: give HTTPVersion "2" or "3"
}

// Progress carries the live view's counters once a second; send it on to
// a channel without blocking the run.
func ExampleWithProgress() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	live := make(chan hail.Progress, 8)
	_, err = hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Duration: 1200 * time.Millisecond, Rate: 200},
		hail.WithProgress(func(p hail.Progress) {
			select {
			case live <- p:
			default: // nobody is reading: drop it
			}
		}))
	close(live)
	var last hail.Progress
	for p := range live {
		last = p
	}
	fmt.Println(err, last.Elapsed >= time.Second, last.Status["200"] == last.Responses)
	// Output: <nil> true true
}

// Results are written and read back as the JSON report (hail -j writes the
// same), and render as the text report.
func ExampleWriteJSON() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=503:50", Requests: 400, Connections: 4},
		hail.WithSuccessBreakdown())
	if err != nil {
		fmt.Println(err)
		return
	}
	var buf bytes.Buffer
	if err := hail.WriteJSON(&buf, res); err != nil {
		fmt.Println(err)
		return
	}
	back, err := hail.ReadJSON(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("requests:", back.Hail.Counts.Requests, "2xx breakdown:", back.LatencyPercentilesSuccessful != nil)
	var text bytes.Buffer
	_ = hail.WriteText(&text, back)
	fmt.Println("text mentions the summary:", strings.Contains(text.String(), "Summary:"))
	// Output:
	// requests: 400 2xx breakdown: true
	// text mentions the summary: true
}

// A file the command wrote (hail -j -o result.json), read with its times
// as time.Duration.
func ExampleReadJSON() {
	f, err := os.Open("testdata/cli-load.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	res, err := hail.ReadJSON(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("requests:", res.Hail.Counts.Requests, "p99:", res.LatencyPercentiles.P99, "mean:", res.Summary.Average)
	fmt.Println("503s:", res.StatusCodeDistribution["503"], "bottleneck:", res.Hail.Verdict.Bottleneck)
	// Output:
	// requests: 2000 p99: 2.355199ms mean: 1.08292ms
	// 503s: 107 bottleneck: none
}

// grpcTarget starts hail's built-in gRPC target (hail serve --grpc) on a
// free loopback port.
func grpcTarget() (addr string, stop func()) {
	g, err := grpcserve.New(grpcserve.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		panic(err)
	}
	a, err := g.Listen()
	if err != nil {
		panic(err)
	}
	go g.Serve()
	return a.String(), g.Close
}
