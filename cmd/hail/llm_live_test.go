package main

// hail llm's results while it runs (--metrics-addr) and per stage
// (--stages), against the mock (internal/llmserve) and its request log.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
// token counters; the run's final result holds at least what the scrape
// showed.
func TestLLMPrometheusLive(t *testing.T) {
	t.Parallel()
	base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 64, ITL: fixedITL(t, "5ms")})
	addr := freePort(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(hailBin, "llm", "-z", "8s", "-q", "20", "-c", "16", "--input-tokens", "8", "--output-tokens", "20",
		"--slo", "ttft=1s", "--no-tui", "--metrics-addr", addr, "-j", "-o", out, base+"/v1/completions")
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
	waitExit(t, cmd, 0)
	stop()
	r := readResultFile(t, out)
	l := r.Hail.LLM
	if l == nil || float64(l.TTFT.Samples) < ttft || l.Completed < 100 {
		t.Fatalf("final result: %+v, after a scrape of %v TTFT samples", l, ttft)
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
