package tui

// The live view's token-stream panels fed by a real run of hail llm's load
// (internal/llmload, internal/run) against the mock inference server
// (internal/llmserve) and checked against the mock's request log.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hail-loadgen/hail/internal/llmload"
	"github.com/hail-loadgen/hail/internal/llmserve"
	"github.com/hail-loadgen/hail/internal/llmserve/llmservetest"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/testnet"
	"github.com/hail-loadgen/hail/result"
)

// startMock starts the mock inference server with cfg, a token every
// 10 ms, on a free loopback port, until the test ends.
func startMock(t *testing.T, cfg llmserve.Config) (*llmserve.Server, string) {
	t.Helper()
	cfg.Addr, cfg.Seed = "127.0.0.1:0", 3
	cfg.ITL, _ = llmserve.ParseDist("10ms")
	srv, err := llmserve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, testnet.Start(t, srv).String()
}

// mockLine is one request of the mock's log: Unix ns, tokens sent.
type mockLine struct {
	arrival, first, end int64
	tokens              int
	outcome             string
}

func readMockLog(t *testing.T, path string) []mockLine {
	var out []mockLine
	for _, r := range llmservetest.ReadLog(t, path) {
		out = append(out, mockLine{arrival: r.Arrival, first: r.First, end: r.End, tokens: r.Tokens, outcome: r.Outcome})
	}
	return out
}

// Two seconds into a 4-second run of 20 streams/s (20 tokens each, a token
// every 10 ms), the view's token-stream numbers are the mock's: the
// streams completed by then (its log's ends, give or take the tick's
// moment), their tokens, the TTFT from the send (its first token −
// arrival), the streams in flight; each second's TTFT is charted; at the
// run's end every stream is counted.
func TestLLMPanelsAgainstMock(t *testing.T) {
	t.Parallel()
	var why string
	for range 3 { // the machine is shared: a run beside others may be late
		if why = panelsOnce(t); why == "" {
			return
		}
		t.Log(why)
	}
	t.Error(why)
}

// panelsOnce is one run of TestLLMPanelsAgainstMock: what must hold
// whatever the machine's load fails t; it returns why the view's numbers
// and the mock's log disagree in time ("" when they agree).
func panelsOnce(t *testing.T) string {
	logPath := filepath.Join(t.TempDir(), "mock.csv")
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	srv, addr := startMock(t, llmserve.Config{Slots: 64, Log: lf})
	u, _ := url.Parse("http://" + addr + "/v1/completions")
	p := &plan.Plan{URL: u, Method: "POST", Connections: 16, Rate: 20, Duration: 2500 * time.Millisecond, KeepAlive: true, Engine: plan.EngineNet}
	r, err := llmload.Prepare(p, llmload.Load{Model: "mock", InputTokens: "8", OutputTokens: "20", Exact: true, Arrivals: "constant", Seed: 1,
		SLO: stream.SLO{TTFT: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := r.Connect(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	colls := make(chan *stats.Collector, 1)
	done := make(chan *result.Result, 1)
	go func() {
		res, err := run.Run(context.Background(), p, run.Options{Workload: r.Workload, Observe: func(c *stats.Collector) { colls <- c }})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var c *stats.Collector
	select {
	case c = <-colls:
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not start")
	}
	cfg := baseConfig()
	cfg.Method, cfg.Target, cfg.SLO, cfg.Open, cfg.Rate, cfg.Connections, cfg.Duration = "POST", u.String(), "ttft=1s", true, 20, 16, p.Duration
	m := newTestModel(t, cfg, c, 160, 60, time.Now())
	// The event: the collector's second tick (two seconds of the run).
	for deadline := time.Now().Add(20 * time.Second); len(c.Series()) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no second tick in 20 s")
		}
	}
	tick := c.Start().Add(2 * time.Second).UnixNano()
	m.Update(tickMsg(time.Now()))
	l := m.data.LLM
	if l == nil {
		t.Fatal("no LLM numbers in the view after two seconds of token streams")
	}
	got := *l
	screen := checkScreen(t, m.View(), 160, 60)
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 18})
	compact := checkScreen(t, m.View(), 60, 18)

	res := <-done
	srv.Close()
	lf.Close()
	log := readMockLog(t, logPath)
	if len(log) != 50 {
		t.Fatalf("the mock logged %d requests, 50 sent", len(log))
	}
	endedBy := func(at int64) (n int) {
		for _, x := range log {
			if x.outcome == "complete" && x.end <= at {
				n++
			}
		}
		return n
	}
	const slack = int64(150 * time.Millisecond) // the tick's moment, on a busy machine: 3 streams either way
	if got.Completed == 0 {
		t.Fatal("no stream done after 2 s")
	}
	if lo, hi := endedBy(tick-slack), endedBy(tick+slack); got.Completed < int64(lo) || got.Completed > int64(hi) {
		return fmt.Sprintf("after 2 s the view counts %d streams done; the mock's log ended %d to %d by then", got.Completed, lo, hi)
	}
	if got.OutTokens != 20*got.Completed || got.TTFT.Total != got.Completed || got.ITL.Total != 19*got.Completed || got.Good != got.Completed {
		t.Errorf("after 2 s: %d done, %d tokens, %d TTFT and %d ITL samples, %d good; want 20, 1, 19 and 1 per stream",
			got.Completed, got.OutTokens, got.TTFT.Total, got.ITL.Total, got.Good)
	}
	// TTFT from the send: the mock's first token − arrival, over the
	// streams that had ended by then.
	slices.SortFunc(log, func(a, b mockLine) int { return int(a.end - b.end) })
	var ttft []int64
	for _, x := range log[:got.Completed] {
		ttft = append(ttft, x.first-x.arrival)
	}
	slices.Sort(ttft)
	want := ttft[len(ttft)/2]
	if d := got.TTFTSentP50 - want; d < -int64(5*time.Millisecond) || d > int64(5*time.Millisecond)+want/10 {
		return fmt.Sprintf("TTFT from send p50 in the view %v, the mock's log %v", time.Duration(got.TTFTSentP50), time.Duration(want))
	}
	inFlight := 0
	for _, x := range log {
		if x.arrival <= tick && x.end > tick {
			inFlight++
		}
	}
	if d := got.InFlight - int64(inFlight); d < -3 || d > 3 {
		return fmt.Sprintf("%d streams in flight in the view, %d in the mock's log at the tick", got.InFlight, inFlight)
	}
	if s, ok := got.Seconds[1]; !ok || s.TTFTP99 <= 0 || s.ITLP50 <= 0 {
		t.Errorf("second 1's TTFT and ITL: %+v (ok %v); want samples", s, ok)
	} else if s.ITLP50 < int64(5*time.Millisecond) || s.ITLP50 > int64(20*time.Millisecond) {
		return fmt.Sprintf("second 1's ITL p50 %v, the mock's 10ms", time.Duration(s.ITLP50))
	}
	for _, want := range []string{"Time to first token", "Inter-token latency", "Output tokens/s & streams", "in flight", "truncated", "goodput", "met ttft=1s"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	for _, want := range []string{"TTFT p50", "ITL p99", "tok/s", "streams"} {
		if !strings.Contains(compact, want) {
			t.Errorf("the compact screen lacks %q:\n%s", want, compact)
		}
	}
	// The run's end: every stream in.
	m.Update(tickMsg(time.Now()))
	if l := m.data.LLM; l.Completed != 50 || res.Hail.LLM.Completed != 50 || l.InFlight != 0 {
		t.Errorf("at the end: the view %d done and %d in flight, the result %d; want 50 and 0", l.Completed, l.InFlight, res.Hail.LLM.Completed)
	}
	return ""
}

var doneRe = regexp.MustCompile(`done (\d+)`)

// hail llm's live view in a real terminal, through rate stages: the title
// names the stage in progress and the progress bar the stages' length; the
// token panels appear with streams done and goodput against --slo; q stops
// the run and its report prints.
func TestLLMTUIInTmux(t *testing.T) {
	t.Parallel()
	x := newTmux(t)
	_, addr := startMock(t, llmserve.Config{Slots: 16})
	x.start("llm", 120, 40, hailLine("llm", "--stages", "10s:10,10s:20", "-c", "8", "--slo", "ttft=1s", "--input-tokens", "8",
		"--output-tokens", "20", "http://"+addr+"/v1/completions"))
	screen := x.waitFor("llm", false, 20*time.Second, "Time to first token (", "Inter-token latency (", "Output tokens/s & streams",
		"from send p99", "TPOT p99", "in flight", "truncated", "met ttft=1s", "stage 1/2: 10 / 10 req/s", "/ 20.0s")
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if m := doneRe.FindStringSubmatch(screen); m != nil && m[1] != "0" || time.Now().After(end) {
			break
		}
		screen = x.capture("llm", false)
	}
	if m := doneRe.FindStringSubmatch(screen); m == nil || m[1] == "0" {
		t.Errorf("no stream done on the screen:\n%s", screen)
	}
	if testing.Verbose() {
		t.Logf("screen:\n%s", screen)
	}
	x.run("send-keys", "-t", "llm", "q")
	out := x.waitFor("llm", true, 15*time.Second, "HAIL-EXIT=")
	for _, want := range []string{"LLM streams", "TTFT (from intended send)", "HAIL-EXIT=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("after q: %q missing:\n%s", want, out)
		}
	}
}
