package main

// hail llm's results while it runs (--metrics-addr) and per stage
// (--stages), against the mock (internal/llmserve) and its request log.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/llmserve"
)

// metricValue is the value of the sample named exactly name (labels
// included) in a scrape; -1 when absent.
func metricValue(text, name string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// A scrape during a bounded hail llm run, taken once the mock's log shows
// first tokens sent, holds TTFT, ITL, TPOT and E2E histograms with samples
// while the run still goes (its elapsed time below the run's length), and
// token counters; the run, ended by Ctrl-C then, writes a final result that
// holds at least what the scrape showed.
func TestLLMPrometheusLive(t *testing.T) {
	t.Parallel()
	base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 64, ITL: fixedITL(t, "5ms")})
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(hailBin, "llm", "-z", "8s", "-q", "20", "-c", "16", "--input-tokens", "8", "--output-tokens", "20",
		"--slo", "ttft=1s", "--no-tui", "--metrics-addr", "127.0.0.1:0", "-j", "-o", out, base+"/v1/completions")
	addr, se := startMetrics(t, cmd)
	// The event: the mock has sent a first token (its log's lines are
	// written as requests end, so the first line is a finished stream).
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b := readFileOrNil(logPath); bytes.Count(b, []byte("\n")) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the mock logged no request in 20s: %s", se.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The collector drains once a second: scrape until the tick after it.
	var text string
	for {
		text = scrape(addr)
		if metricValue(text, "hail_llm_ttft_seconds_count") > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if el := metricValue(text, "hail_run_elapsed_seconds"); el < 0 || el >= 8 {
		cmd.Process.Kill()
		t.Fatalf("scraped at %v s into an 8 s run: not during it\n%s", el, text)
	}
	ttft := metricValue(text, "hail_llm_ttft_seconds_count")
	for _, name := range []string{"hail_llm_ttft_seconds_count", "hail_llm_ttft_from_send_seconds_count", "hail_llm_itl_seconds_count",
		"hail_llm_tpot_seconds_count", "hail_llm_e2e_seconds_count", `hail_llm_ttft_seconds_bucket{le="1.0"}`, "hail_output_tokens_total",
		"hail_llm_completed_requests_total", "hail_llm_input_tokens_total", "hail_llm_goodput_requests_total"} {
		if v := metricValue(text, name); v <= 0 {
			cmd.Process.Kill()
			t.Fatalf("%s is %v during the run, want samples\n%s", name, v, text)
		}
	}
	if v := metricValue(text, "hail_streams_in_flight"); v < 0 {
		t.Errorf("no hail_streams_in_flight gauge\n%s", text)
	}
	// 20 tokens a request: at least 19 ITL values per completed one.
	if itl, done := metricValue(text, "hail_llm_itl_seconds_count"), metricValue(text, "hail_llm_completed_requests_total"); itl < 19*done {
		t.Errorf("%v ITL values for %v completed requests of 20 tokens", itl, done)
	}
	// Ctrl-C ends the run (its streams drain): the result is written as
	// at -z's end.
	done := metricValue(text, "hail_llm_completed_requests_total")
	cmd.Process.Signal(syscall.SIGINT)
	waitExit(t, cmd, 0)
	stop()
	r := readResultFile(t, out)
	l := r.Hail.LLM
	if l == nil || float64(l.TTFT.Samples) < ttft || float64(l.Completed) < done {
		t.Fatalf("final result: %+v, after a scrape of %v TTFT samples and %v completed requests", l, ttft, done)
	}
	if n := len(readMockLog(t, logPath)); int64(n) < l.Completed {
		t.Errorf("the mock logged %d requests, hail completed %d", n, l.Completed)
	}
	if !strings.Contains(text, "# HELP hail_llm_ttft_seconds") {
		t.Errorf("no help for hail_llm_ttft_seconds")
	}
}

// readFileOrNil is path's content, nil when it cannot be read.
func readFileOrNil(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// Two rate stages against a mock of 4 slots (about 38 requests/s): 10/s,
// then 60/s, which fills the slots and queues the rest. Each stage has
// its own LLM block: the second's TTFT p99 holds the queue, the first's
// does not; each stage's TTFT from the send agrees with the mock's log
// (first token − arrival) over the same requests, the second stage's
// warm-up left out; the text report's stage table shows them.
func TestLLMStagesPerStage(t *testing.T) {
	t.Parallel()
	cfg, args := stagesLoad(t)
	var why string
	for range 3 { // the machine is shared: a run beside others may be late
		if why = stagesOnce(t, cfg, args); why == "" {
			break
		}
		t.Log(why)
	}
	if why != "" {
		t.Error(why)
	}
}

// stagesLoad is the mock and the arguments of TestLLMStagesPerStage's
// stages.
func stagesLoad(t *testing.T) (llmserve.Config, []string) {
	// -c 128: each shard gets 64, room for every request the mock's queue
	// holds at the stages' end on a slow machine (one waiting for a free
	// connection then is unsent, and its stage one short).
	return llmserve.Config{Slots: 4, ITL: fixedITL(t, "5ms")}, []string{"-c", "128", "--arrivals", "constant",
		"--stages", "2s:10,1500ms:60:500ms", "--stream-drain", "20s", "--input-tokens", "8", "--output-tokens", "20", "--slo", "ttft=50ms"}
}

// The stages of TestLLMStagesPerStage as two shards, sent at once to one
// mock and merged, hold the same requests per stage as one process.
func TestLLMStagesShardsMerge(t *testing.T) {
	t.Parallel()
	cfg, args := stagesLoad(t)
	base, _, stop := startLoggedMock(t, cfg)
	dir := t.TempDir()
	var files []string
	errs := make(chan string, 2)
	for i := range 2 {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		files = append(files, f)
		go func() {
			_, errOut, code := hail(t, append(append([]string{"llm", "--no-tui", "-j", "-o", f, "--shard", fmt.Sprintf("%d/2", i)}, args...), base+"/v1/completions")...)
			if code != 0 {
				errOut = fmt.Sprintf("shard %d: exit %d: %s", i, code, errOut)
			} else {
				errOut = ""
			}
			errs <- errOut
		}()
	}
	for range 2 {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
	stop()
	out, errOut, code := hailIn(t, append([]string{"merge", "--output-format", "json"}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	var merged map[string]any
	if err := json.Unmarshal([]byte(out), &merged); err != nil {
		t.Fatal(err)
	}
	ms := merged["hail"].(map[string]any)["stages"].([]any)
	for i, want := range []float64{20, 60} {
		l := ms[i].(map[string]any)["llm"].(map[string]any)
		if l["completed"] != want || samples(l, "ttft") != int(want) || samples(l, "itl") != int(want)*19 {
			t.Errorf("merged stage %d: completed %v, TTFT samples %d, ITL samples %d; one process: %v, %v, %v (the merged counts: %v)",
				i+1, l["completed"], samples(l, "ttft"), samples(l, "itl"), want, want, 19*want, merged["hail"].(map[string]any)["counts"])
		}
	}
}

// stagesOnce is one run of TestLLMStagesPerStage's stages: counts that do
// not add up fail t at once; it returns why the timings disagree ("" when
// they agree).
func stagesOnce(t *testing.T, cfg llmserve.Config, args []string) string {
	base, logPath, stop := startLoggedMock(t, cfg)
	res, text := llmMockRun(t, append(args, base+"/v1/completions")...)
	stop()
	log := readMockLog(t, logPath)
	slices.SortFunc(log, func(a, b mockRequest) int { return cmp.Compare(a.arrival, b.arrival) })
	if len(log) != 110 {
		t.Fatalf("the mock saw %d requests, the stages ask 20 + 90", len(log))
	}
	stages := res["hail"].(map[string]any)["stages"].([]any)
	if len(stages) != 2 {
		t.Fatalf("%d stages", len(stages))
	}
	llmOf := func(i int) map[string]any {
		l, ok := stages[i].(map[string]any)["llm"].(map[string]any)
		if !ok {
			t.Fatalf("stage %d has no llm block: %v", i+1, stages[i])
		}
		return l
	}
	s1, s2 := llmOf(0), llmOf(1)
	if s1["completed"] != 20.0 || s2["completed"] != 60.0 {
		t.Fatalf("stages completed %v and %v, want 20 and 60 (the second's 30 warm-up requests left out)", s1["completed"], s2["completed"])
	}
	for _, want := range []string{"TTFT p99", "TPOT p99", "goodput/s"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text report's stage table lacks %q:\n%s", want, text)
		}
	}
	mockQ := func(reqs []mockRequest, p float64) float64 {
		var ttft []int64
		for _, r := range reqs {
			ttft = append(ttft, r.first-r.arrival)
		}
		slices.Sort(ttft)
		return quantile(ttft, p)
	}
	for i, c := range []struct {
		l    map[string]any
		reqs []mockRequest
	}{{s1, log[:20]}, {s2, log[50:]}} {
		for _, p := range []float64{50, 99} {
			got, want := dist(t, c.l, "ttft_from_send")[map[float64]string{50: "p50", 99: "p99"}[p]], mockQ(c.reqs, p)
			if math.Abs(got-want) > 0.01+0.1*want {
				return fmt.Sprintf("stage %d: TTFT from send p%.0f %.1f ms, the mock's log %.1f ms over the same requests", i+1, p, 1e3*got, 1e3*want)
			}
		}
	}
	if p1, p2 := dist(t, s1, "ttft")["p99"], dist(t, s2, "ttft")["p99"]; p2 < 0.2 || p2 < p1+0.1 {
		return fmt.Sprintf("TTFT p99: stage 1 %.1f ms, stage 2 %.1f ms; want the second to hold the mock's queue", 1e3*p1, 1e3*p2)
	}
	return ""
}

// Without -n or -z, rate stages run to their end and a trace to its last
// line, past the load command's default of 200 requests.
func TestLLMRunsItsLength(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
	for i := range 230 {
		fmt.Fprintf(&b, "%.3f,8,2\n", float64(i)*0.01)
	}
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"stages", []string{"--arrivals", "constant", "--stages", "1s:120,1s:130"}, 250},
		{"trace", []string{"--dataset", "azure:" + trace, "--trace-speedup", "4"}, 230},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 256, ITL: fixedITL(t, "1ms")})
			res, _ := llmMockRun(t, append(append([]string{"-c", "32", "--input-tokens", "8", "--output-tokens", "2"}, c.args...), base+"/v1/completions")...)
			stop()
			if n := len(readMockLog(t, logPath)); n != c.want {
				t.Errorf("the mock saw %d requests, want %d", n, c.want)
			}
			if got := res["hail"].(map[string]any)["llm"].(map[string]any)["completed"]; got != float64(c.want) {
				t.Errorf("hail completed %v, want %d", got, c.want)
			}
		})
	}
}
