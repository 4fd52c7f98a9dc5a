package hail_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/result"
	"github.com/hail-loadgen/hail/scenario"
)

// A scenario.File with every field set compiles (each writes a key the
// loader knows, in the form it wants), and runs against the built-in
// target with the file's numbers: 2 connections, think times, flows,
// feeds, pools, setup and teardown.
func TestScenarioFileEveryField(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := &scenario.File{
		Name:      "every-field",
		Base:      srv.URL,
		Headers:   map[string]string{"X-Run": "{{var.run}}"},
		Variables: map[string]any{"run": "r1", "sizes": []string{"1", "2"}, "n": 3},
		Pools:     map[string]scenario.Pool{"seeded": {Max: 100, Values: []string{"a", "b"}, File: write("pool.txt", "c\nd\n")}},
		Feeds:     map[string]scenario.Feed{"users": {File: write("users.csv", "id,name\n1,ann\n2,bob\n"), Order: "random", Format: "csv"}},
		Steps: []scenario.Step{
			{Name: "create", Weight: 2, Method: "POST", Path: "/items", Headers: map[string]string{"X-User": "{{feed.users.name}}"},
				BodyJSON: map[string]any{"n": "{{int 1 9}}"}, Capture: map[string]scenario.Capture{"items": {JSON: "id"}, "where": {Header: "Location"},
					"code": {Status: true}}, Expect: &scenario.Expect{Status: []string{"201"}, BodyContains: []string{`"id"`},
					Header: map[string]string{"Content-Type": "application/json"}}, Think: scenario.Think{Min: time.Millisecond, Max: 2 * time.Millisecond}},
			{Name: "get", URL: srv.URL + "/items/{{pick items}}", Expect: &scenario.Expect{JSON: map[string]any{"data.n": 0}}}, // fails
			{Name: "echo", Method: "POST", Path: "/echo", Body: "{{choice var.sizes}}-{{pick seeded}}",
				Capture: map[string]scenario.Capture{"echoed": {Regex: "([0-9])-"}}},
			{Name: "file", Method: "POST", Path: "/echo", BodyFile: write("body.bin", "abc")},
			{Name: "lines", Method: "POST", Path: "/echo", BodyLines: write("lines.txt", "x\ny\n")},
			{Name: "again", Path: "/?n={{last echoed}}"},
		},
		Flows:            []scenario.Flow{{Name: "session", Weight: 1, Steps: []string{"echo", "again"}, Think: scenario.Think{Min: time.Millisecond}}},
		Setup:            []scenario.Step{{Name: "seed", Method: "POST", Path: "/items", Capture: map[string]scenario.Capture{"items": {JSON: "id"}}, Repeat: 3}},
		Teardown:         []scenario.Step{{Name: "cleanup", Method: "DELETE", Path: "/items/{{take items}}", Repeat: scenario.RepeatAll}},
		ConnectionStages: []scenario.Stage{{Duration: 300 * time.Millisecond, Target: 2, Step: true}, {Duration: 200 * time.Millisecond, Target: 1}},
		Thresholds:       []scenario.Threshold{{Expr: "p99 < 10s"}, {Expr: "error_rate < 50%", Step: "echo", AbortOnFail: true, AbortAfter: time.Second}},
		Requests:         5000,
		Timeout:          5 * time.Second,
		ConnectTimeout:   2 * time.Second,
		DisableKeepAlive: true,
		Redirects:        1,
		Engine:           "net",
		Insecure:         true,
		Seed:             7,
		MaxRepeat:        2,
		BodyLimit:        4096,
		Think:            scenario.Think{Min: time.Millisecond},
	}
	// The stages last 0.5 s, which gives each step ~50 requests here. A
	// machine that stalls through most of them leaves a step with none, and
	// the echo step's threshold then rightly fails ("measured no
	// requests"): such a run cannot check what this test checks, so it is
	// run again, up to three times in all, on a fresh server.
	var res *result.Result
	for try := 1; ; try++ {
		if try > 1 {
			srv = hailtest.NewServer(t)
			f.Base, f.Steps[1].URL = srv.URL, srv.URL+"/items/{{pick items}}"
		}
		sc, err := hail.NewScenario(f)
		if err != nil {
			t.Fatal(err)
		}
		// WaitOngoing: the requests in flight when the stages end finish, so
		// the server's counts and items are exactly the run's (a request cut
		// off there had created an item that no capture, and no teardown,
		// knew of).
		res, err = hail.Run(context.Background(), hail.Plan{Scenario: sc, WaitOngoing: true})
		if err == nil {
			break
		}
		var te *hail.ThresholdError
		if !errors.As(err, &te) || res == nil || len(res.Hail.Steps) != 6 {
			t.Fatal(err)
		}
		if res.Hail.Steps[2].Counts.Requests > 0 || try == 3 {
			t.Fatal(err)
		}
		t.Logf("try %d: the echo step got no request in the stages' 0.5 s (%d in all): %v", try, res.Hail.Counts.Requests, err)
	}
	h := res.Hail
	if h.Engine != "net" || h.Scenario == nil || h.Scenario.Name != "every-field" || len(h.Steps) != 6 || h.Setup.Steps[0].Counts.Requests != 3 {
		t.Errorf("engine %s, scenario %+v, steps %d, setup %+v", h.Engine, h.Scenario, len(h.Steps), h.Setup)
	}
	if h.Config["keepalive"] != false || len(h.Thresholds) != 2 || srv.Stats().Items.Live != 0 {
		t.Errorf("keepalive %v, thresholds %+v, items left %d", h.Config["keepalive"], h.Thresholds, srv.Stats().Items.Live)
	}
	if h.Steps[1].CheckFailures[`json data.n = 0`] == 0 {
		t.Errorf("the get step's check failures: %v", h.Steps[1].CheckFailures)
	}
	hailtest.AssertExact(t, srv, res) // the failed checks' responses too
}

// A gRPC step and the file's schema (a .proto beside it).
func TestScenarioFileGRPC(t *testing.T) {
	t.Parallel()
	addr, stop := grpcTarget()
	defer stop()
	dir := t.TempDir()
	proto := filepath.Join(dir, "hail", "v1", "hail.proto")
	if err := os.MkdirAll(filepath.Dir(proto), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proto, grpcserve.Proto(), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := hail.NewScenario(&scenario.File{
		Base:     "http://" + addr,
		Requests: 50,
		GRPC:     &scenario.Schema{Proto: []string{proto}, ImportPaths: []string{dir}},
		Steps: []scenario.Step{{Name: "echo", GRPC: &scenario.Call{Method: "hail.v1.Target/Echo", Data: map[string]any{"payload": "p{{counter}}"},
			Metadata: map[string]string{"x-tenant": "blue"}}, Expect: &scenario.Expect{Status: []string{"OK"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCodeDistribution["OK"] != 50 || res.Hail.Protocol != "h2c" {
		t.Errorf("statuses %v, protocol %s", res.StatusCodeDistribution, res.Hail.Protocol)
	}
	if cfg, _ := res.Hail.Config["scenario"].(map[string]any); cfg == nil || !strings.Contains(fmt.Sprint(cfg["steps"]), "echo") {
		t.Errorf("configuration %v", res.Hail.Config)
	}
}

// Targets: a scenario.File whose steps go to two servers (the built-in
// REST target and a gRPC server, the first named by ScenarioTargets) runs
// both in one Run; Result.Hail.Origins gives each its own counts, rates,
// all-sent latency and verdict, adding up to the run's, and the REST
// server saw exactly its origin's responses (setup and teardown, each
// step a run with its concurrency, apart). The target's processes (here
// this one, which serves both) are sampled for the run and its origins.
func TestScenarioFileTargets(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	addr, stop := grpcTarget()
	defer stop()
	sc, err := hail.NewScenario(&scenario.File{
		Targets:  map[string]scenario.Target{"rest": {URL: "http://127.0.0.1:1"}, "rpc": {URL: "grpc://" + addr, Streams: 4}},
		Requests: 400,
		Steps: []scenario.Step{
			{Name: "create", Target: "rest", Method: "POST", Path: "/items", Capture: map[string]scenario.Capture{"items": {JSON: "id"}},
				Expect: &scenario.Expect{Status: []string{"201"}}},
			{Name: "echo", Target: "rpc", GRPC: &scenario.Call{Method: "hail.v1.Target/Echo", Data: map[string]any{"payload": "p{{counter}}"}},
				Expect: &scenario.Expect{Status: []string{"OK"}}},
		},
		Setup: []scenario.Step{{Name: "seed", Target: "rest", Method: "POST", Path: "/items", Capture: map[string]scenario.Capture{"items": {JSON: "id"}},
			Repeat: 20, Concurrency: 4}},
		Teardown: []scenario.Step{{Name: "cleanup", Target: "rest", Method: "DELETE", Path: "/items/{{take items}}", Repeat: scenario.RepeatAll, Concurrency: 4}},
	}, hail.ScenarioTargets(map[string]string{"rest": srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc, Connections: 4}, hail.WithTargetPID(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hail
	if len(h.Origins) != 2 {
		t.Fatalf("origins %+v, want rest and rpc", h.Origins)
	}
	var requests int64
	for _, o := range h.Origins {
		requests += o.Counts.Requests
		if o.Counts.Requests == 0 || o.AllSent.Requests != o.Counts.Requests || o.Rates.SuccessfulPerSec <= 0 || o.Verdict.Bottleneck == "" {
			t.Errorf("origin %s: counts %+v, all sent %+v, rates %+v, verdict %q", o.Name, o.Counts, o.AllSent, o.Rates, o.Verdict.Bottleneck)
		}
	}
	if requests != h.Counts.Requests || requests != 400 {
		t.Errorf("the origins' requests add up to %d, the run's are %d, want 400", requests, h.Counts.Requests)
	}
	if h.Origins[1].Name != "rpc" || h.Origins[1].Streams != 4 || h.Origins[0].Streams != 0 {
		t.Errorf("streams per connection: %s %d, %s %d; want rest 0 (HTTP/1.1: one), rpc 4", h.Origins[0].Name, h.Origins[0].Streams, h.Origins[1].Name, h.Origins[1].Streams)
	}
	rest := h.Origins[0]
	if rest.Name != "rest" {
		rest = h.Origins[1]
	}
	st := srv.Stats()
	if created := rest.StatusCodeDistribution["201"]; st.Items.Created != uint64(created)+20 || st.Items.Live != 0 ||
		st.Items.Deleted != uint64(created)+20 || h.Teardown.Steps[0].Counts.Requests != created+20 {
		t.Errorf("the REST server created %d and deleted %d items (%d live); the load created %d, the setup 20, the teardown deleted %d",
			st.Items.Created, st.Items.Deleted, st.Items.Live, created, h.Teardown.Steps[0].Counts.Requests)
	}
	if tg := h.Target; tg == nil || tg.PID != os.Getpid() || tg.Source != "--target-pid" || tg.Samples < 1 {
		t.Errorf("target %+v, want this process, given by --target-pid", tg)
	}
	// Each origin's verdict knows the target's processes, as the run's does.
	note := fmt.Sprintf("the target (pid %d", os.Getpid())
	for _, o := range h.Origins {
		if !strings.Contains(strings.Join(o.Verdict.Reasons, "; "), note) {
			t.Errorf("origin %s's verdict does not name the target: %q", o.Name, o.Verdict.Reasons)
		}
	}
}

// Plan.Streams with a Scenario whose targets all speak HTTP/1.1 is a
// *FieldError naming Streams; with an HTTP/2 target it is taken.
func TestScenarioStreamsField(t *testing.T) {
	t.Parallel()
	sc, err := hail.NewScenario(&scenario.File{Base: "http://127.0.0.1:1", Requests: 1, Steps: []scenario.Step{{Name: "a", Path: "/"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hail.Run(context.Background(), hail.Plan{Scenario: sc, Streams: 4})
	var fe *hail.FieldError
	if !errors.As(err, &fe) || fe.Field != "Streams" || !strings.Contains(fe.Problem, "HTTP/2") {
		t.Errorf("Streams on HTTP/1.1 targets: %v, want a *hail.FieldError for Streams", err)
	}
}

// An llm step written as Go values runs through the Go API: its streams
// are measured per step (StepResult.LLM, the mock's counts) and summed in
// Hail.LLM; its captured output tokens reach the next step.
func TestScenarioFileLLM(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewOpenAIServer(t, hailtest.OpenAIConfig{Model: "m", ITL: time.Millisecond})
	sc, err := hail.NewScenario(&scenario.File{
		Base:        srv.URL,
		Requests:    6,
		Connections: 1,
		Steps: []scenario.Step{
			{Name: "ask", Path: "/v1/chat/completions", LLM: &scenario.LLM{Model: "m", Prompt: "hello {{counter}}", OutputTokens: "5",
				SLO: "ttft=5s", Conversation: "c"}, Capture: map[string]scenario.Capture{"n": {LLM: "output_tokens"}}},
			{Name: "more", Path: "/v1/chat/completions", LLM: &scenario.LLM{Model: "m", Prompt: "{{last n}} more", OutputTokens: "3", Conversation: "c"}},
		},
		Flows: []scenario.Flow{{Name: "f", Steps: []string{"ask", "more"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	st := srv.Stats()
	ask, more := res.Hail.Steps[0].LLM, res.Hail.Steps[1].LLM
	if ask == nil || more == nil || ask.Completed != 3 || more.Completed != 3 || ask.TotalOutputTokens != 15 || more.TotalOutputTokens != 9 {
		t.Fatalf("steps' llm: %+v, %+v", ask, more)
	}
	if l := res.Hail.LLM; l == nil || uint64(l.Completed) != st.Completed || uint64(l.TotalOutputTokens) != st.Tokens || ask.SLO == nil || ask.Model != "m" {
		t.Errorf("hail.llm %+v; the mock completed %d, sent %d tokens", l, st.Completed, st.Tokens)
	}
	if res.Hail.Steps[0].Captures != 3 {
		t.Errorf("ask captured %d values, want 3", res.Hail.Steps[0].Captures)
	}
}
