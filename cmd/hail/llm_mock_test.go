package main

// hail llm against hail serve --openai's server (internal/llmserve, in the
// test's process) and its request log, the ground truth: each request's
// kernel arrival, the slot it took, its first token's send time.

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine/uringengine"
	"github.com/hail-loadgen/hail/internal/llmserve"
	"github.com/hail-loadgen/hail/internal/llmserve/llmservetest"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// mockRequest is one line of the mock's request log, times in ns.
type mockRequest struct {
	arrival, admit, first int64
	kernel                bool // arrival is the kernel's receive time
	outcome               string
	tokens                int
	prompt                int // prompt_tokens
}

// startMock starts the mock with cfg and a request log; logOf closes it
// and reads the log.
func startMock(t *testing.T, cfg llmserve.Config) (base string, logOf func() []mockRequest) {
	t.Helper()
	base, path, stop := startLoggedMock(t, cfg)
	return base, func() []mockRequest {
		stop()
		return readMockLog(t, path)
	}
}

// readMockLog reads the mock's CSV request log.
func readMockLog(t *testing.T, path string) []mockRequest {
	var out []mockRequest
	for _, r := range llmservetest.ReadLog(t, path) {
		out = append(out, mockRequest{arrival: r.Arrival, admit: r.Admit, first: r.First, kernel: r.Kernel, outcome: r.Outcome, tokens: r.Tokens, prompt: r.Prompt})
	}
	return out
}

// quantile is the p-th percentile (0–100) of sorted values, nearest rank,
// in seconds.
func quantile(sorted []int64, p float64) float64 {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return float64(sorted[max(i, 0)]) / 1e9
}

// llmMockRun runs hail llm with args against base and returns its JSON
// result and its text report (hail report of the same file).
func llmMockRun(t *testing.T, args ...string) (res map[string]any, text string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run.json")
	_, errOut, code := hail(t, append([]string{"llm", "--no-tui", "-j", "-o", out}, args...)...)
	if code != 0 {
		t.Fatalf("hail llm %v: exit %d: %s", args, code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	text, errOut, code = hailIn(t, "report", out)
	if code != 0 {
		t.Fatalf("hail report: exit %d: %s", code, errOut)
	}
	return res, text
}

// dist is a Dist of a JSON result, in seconds.
func dist(t *testing.T, parent map[string]any, key string) map[string]float64 {
	t.Helper()
	m, ok := parent[key].(map[string]any)
	if !ok {
		t.Fatalf("no %s in %v", key, parent)
	}
	out := map[string]float64{}
	for k, v := range m {
		out[k], _ = v.(float64)
	}
	return out
}

// llmEngines are the HTTP/1.1 engines the mock tests run on.
func llmEngines(t *testing.T) []string {
	engines := []string{"net"}
	if uringengine.Available() == nil {
		engines = append(engines, "uring")
	}
	return engines
}

// In a quiet run each request's time to first token from the actual send
// agrees with the mock's own log (its kernel arrival to its first token's
// send, a loopback's few µs apart; on HTTP/2 the mock's read of the
// request, net/http's): the per-request log's first_token_ns − start_ns
// (less connect_ns, a connection's setup, for a request that opened one)
// against the log's first_token_ns − arrival_ns, request by request, on
// both HTTP/1 engines and HTTP/2. The timing tier holds the p90 of the
// differences within 0.5 ms on HTTP/1 (5 ms on HTTP/2) in every try, and
// their p99 within 0.5 ms on HTTP/1 in a quiet try (see ttftAgreement; six
// tries, and a skip that says so if none was quiet; the median lateness
// within 1 ms there too); the fast tier, which
// runs beside every other package's tests, their median only, within
// 0.5 ms (2 ms on HTTP/2; three tries). That still catches a TTFT taken at
// the wrong event or the wrong read (the response head comes at once, the
// first token after a prefill of 0.8 to 26 ms, the next ones 2 ms apart);
// a p90 there met the other packages' load (7 ms on HTTP/2 in CI with the
// median at 0.6 ms). Every request's tokens are counted, and TTFT from the
// intended send differs from it by hail's lateness only (its median within
// 1 ms in the timing tier, 10 ms in the fast one).
func TestLLMTTFTAgreesWithMockLog(t *testing.T) {
	t.Parallel()
	strict := testtier.On(testtier.Timing)
	var protos [][]string
	for _, e := range llmEngines(t) {
		protos = append(protos, []string{"--engine", e})
	}
	protos = append(protos, []string{"--http2", "-p", "1"})
	for _, proto := range protos {
		t.Run(strings.Join(proto, " "), func(t *testing.T) {
			t.Parallel()
			tries := 3 // the machine is shared: a run beside others may be late
			if strict {
				tries = 6 // a slow guest stalls now and then (p99 11.8, 2.3, 0.57 ms in three tries once in CI)
			}
			var why string
			counted := 0
			for range tries {
				var quiet bool
				if why, quiet = ttftAgreement(t, proto, strict); why == "" {
					return
				}
				t.Log(why)
				if quiet {
					counted++
				}
			}
			if counted == 0 {
				t.Skipf("the hypervisor stole %.0f%% or more of hail's CPU in all %d tries, and only the p99 failed: not the quiet run its bound needs", 100*quietSteal, tries)
			}
			t.Error(why)
		})
	}
}

// ttftAgreement runs the agreement check once: "" when it holds, else why
// not (a count that does not add up fails t at once), and whether the run
// was quiet. A run in which the hypervisor stole 2% or more of hail's CPU
// (quietSteal) is not, and its p99 is not judged, nor its lateness held to
// a quiet run's 1 ms: a read that comes later than the next
// token brings both, and carries the receive time of its last segment (TCP
// reports the last one's), so that request's first token is stamped an
// inter-token time late. One such read in 60 requests is the p99: on an
// evening when the guest lost 8–11% of its CPU the p99 was 1.4–8 ms in
// every try, each time one or two requests off by 2 or 4 ms (the mock's
// ITL is 2 ms), with the p90 at 0.08–0.14 ms. The p90 is judged in every
// try: within 0.5 ms on HTTP/1 in the timing tier.
func ttftAgreement(t *testing.T, proto []string, timing bool) (why string, quiet bool) {
	base, logOf := startMock(t, llmserve.Config{Slots: 64, PrefillPerToken: 50 * time.Microsecond, ITL: fixedITL(t, "2ms")})
	h2 := slices.Contains(proto, "--http2") // the mock's HTTP/2 (net/http's) logs its own read time, not the kernel's
	strict := timing && !h2                 // which may be late by a scheduling delay: the fast tier's bounds
	db := filepath.Join(t.TempDir(), "requests.db")
	res, _ := llmMockRun(t, append(slices.Clone(proto), "-q", "40", "--arrivals", "constant", "-n", "60", "-c", "4",
		"--input-tokens", "16-512", "--output-tokens", "8", "--db-url", db, base+"/v1/completions")...)
	log := logOf()
	slices.SortFunc(log, func(a, b mockRequest) int { return cmp.Compare(a.arrival, b.arrival) })
	mine := hailRequests(t, db)
	l := res["hail"].(map[string]any)["llm"].(map[string]any)
	tokens := 0
	for _, r := range log {
		tokens += r.tokens
	}
	if len(log) != 60 || len(mine) != 60 || l["total_output_tokens"] != float64(tokens) {
		t.Fatalf("the mock logged %d requests and sent %d tokens; hail logged %d, counted %v tokens", len(log), tokens, len(mine), l["total_output_tokens"])
	}
	var diffs []int64
	for i, r := range log {
		h := mine[i]
		if r.outcome != "complete" || !r.kernel && !h2 || h.firstToken == 0 {
			t.Fatalf("request %d: the mock's outcome %s (kernel arrival time %v), hail's first token at %d ns", i, r.outcome, r.kernel, h.firstToken)
		}
		d := (h.firstToken - h.start - h.connect) - (r.first - r.arrival)
		diffs = append(diffs, max(d, -d))
	}
	slices.Sort(diffs)
	p50, p90, p99 := quantile(diffs, 50), quantile(diffs, 90), quantile(diffs, 99)
	steal := res["hail"].(map[string]any)["generator"].(map[string]any)["steal"].(float64)
	quiet = steal < quietSteal
	t.Logf("TTFT from send against the mock's log, request by request: differences p50 %.3f ms, p90 %.3f ms, p99 %.3f ms (the hypervisor stole %.1f%% of hail's CPU)", 1e3*p50, 1e3*p90, 1e3*p99, 100*steal)
	// The median's bound: 0.5 ms, or on HTTP/2 2 ms — there the mock's own
	// time is net/http's read, a goroutine's wake-up after the bytes came
	// (0.7–0.8 ms at the median on a slow 2-core machine). A TTFT taken at
	// the wrong event is off by the prefill (0.8 to 26 ms, 13 ms at the
	// median) and still fails it.
	median := 0.0005
	if h2 {
		median = 0.002
	}
	switch {
	case strict && p90 > 0.0005:
		return fmt.Sprintf("differences p90 %.3f ms > 0.5 ms", 1e3*p90), true
	case strict && p99 > 0.0005:
		if !quiet {
			return fmt.Sprintf("differences p99 %.3f ms > 0.5 ms in a run that was not quiet (the hypervisor stole %.1f%% of hail's CPU)", 1e3*p99, 100*steal), false
		}
		return fmt.Sprintf("differences p99 %.3f ms > 0.5 ms (steal %.1f%%)", 1e3*p99, 100*steal), true
	case timing && p90 > 0.005:
		return fmt.Sprintf("differences p90 %.3f ms > 5 ms", 1e3*p90), true
	case p50 > median:
		return fmt.Sprintf("differences p50 %.3f ms > %.1f ms", 1e3*p50, 1e3*median), true
	}
	late := 0.001 // hail's lateness at the median: a quiet run's; a loaded machine's scheduler, or a hypervisor's steal, makes it ms
	if !strict || !quiet {
		late = 0.010
	}
	if tt, ts := dist(t, l, "ttft"), dist(t, l, "ttft_from_send"); tt["samples"] != 60 || tt["p50"] < ts["p50"] || tt["p50"]-ts["p50"] > late {
		return fmt.Sprintf("%v TTFTs; from the intended send p50 %.3f ms, from the actual send %.3f ms: more apart than %v (steal %.1f%%)",
			tt["samples"], 1e3*tt["p50"], 1e3*ts["p50"], time.Duration(late*float64(time.Second)), 100*steal), true
	}
	return "", true
}

// quietSteal is the hypervisor's share of hail's CPU under which a run is
// quiet enough for the timing tier's p99 and lateness bounds (and for
// TestVerdictOnThisMachine's comfortable case): a steal of a
// couple of milliseconds at a first token's read is the p99 of 60 requests
// (CI, 2026-12-03: p99 1.97 ms with 4.4% stolen, 0.22 ms in the try before).
const quietSteal = 0.02

// hailRequest is a row of hail's per-request log, ns since the run's start.
type hailRequest struct{ start, connect, firstToken int64 }

// hailRequests reads hail's per-request log (--db-url) in send order.
func hailRequests(t *testing.T, path string) []hailRequest {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT start_ns, coalesce(connect_ns, 0), coalesce(first_token_ns, 0) FROM requests ORDER BY start_ns")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []hailRequest
	for rows.Next() {
		var r hailRequest
		if err := rows.Scan(&r.start, &r.connect, &r.firstToken); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// fixedITL is the mock's inter-token time d.
func fixedITL(t *testing.T, d string) llmserve.Dist {
	t.Helper()
	itl, err := llmserve.ParseDist(d)
	if err != nil {
		t.Fatal(err)
	}
	return itl
}

// With the mock's 4 slots full, where the queue forms decides which TTFT
// holds it. Four connections (a client's pool the size of the server's
// batch) and twice the rate the slots serve: the requests queue in hail,
// waiting for a connection — the mock's log shows none waiting for a slot
// — and TTFT from the intended send holds that wait while TTFT from the
// actual send (the mock's first token − arrival) does not: the
// difference is what a client that starts its clock at the send misses.
// Thirty-two connections: the requests queue in the mock instead (its
// log's admission − arrival), and both TTFTs hold the queue. The text
// report shows both TTFTs, the one from the intended send first, and the
// verdict names the target. On both HTTP/1.1 engines and on HTTP/2 (h2c,
// one stream per connection: the pool is the connections).
func TestLLMQueueInTTFT(t *testing.T) {
	t.Parallel()
	var protos [][]string
	for _, e := range llmEngines(t) {
		protos = append(protos, []string{"--engine", e})
	}
	protos = append(protos, []string{"--http2", "-p", "1"})
	for _, proto := range protos {
		for _, c := range []struct {
			name        string
			connections int
			inHail      bool
		}{
			{"pool as large as the slots: the queue is hail's", 4, true},
			{"pool larger than the slots: the queue is the server's", 32, false},
		} {
			t.Run(strings.Join(proto, " ")+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				// Three tries: beside the other packages' tests, the
				// machine once woke hail 43 ms late and the mock's HTTP/2
				// reads 76 ms late; where the queue is holds every time.
				var why string
				for range 3 {
					if why = queueInTTFT(t, proto, c.connections, c.inHail); why == "" {
						return
					}
					t.Log(why)
				}
				t.Error(why)
			})
		}
	}
}

// queueInTTFT is one case of TestLLMQueueInTTFT: hail llm with proto's
// flags and connections against a mock of 4 slots. It returns why a bound
// of time did not hold ("" when all did); what is wrong whatever the
// machine's load fails t.
func queueInTTFT(t *testing.T, proto []string, connections int, inHail bool) string {
	base, logOf := startMock(t, llmserve.Config{Slots: 4, ITL: fixedITL(t, "5ms")})
	args := append(slices.Clone(proto), "-q", "160", "-n", "48", "-c", strconv.Itoa(connections), "--input-tokens", "8", "--output-tokens", "10",
		base+"/v1/chat/completions")
	res, text := llmMockRun(t, args...)
	log := logOf()
	var queue, ttft []int64
	for _, r := range log {
		if r.outcome == "complete" {
			queue, ttft = append(queue, r.admit-r.arrival), append(ttft, r.first-r.arrival)
		}
	}
	slices.Sort(queue)
	slices.Sort(ttft)
	h := res["hail"].(map[string]any)
	l := h["llm"].(map[string]any)
	intended, sent := dist(t, l, "ttft"), dist(t, l, "ttft_from_send")
	wait := h["send_delay"].(map[string]any)["conn_wait"].(map[string]any)["p50"].(float64)
	if len(ttft) != 48 || l["completed"] != 48.0 {
		t.Fatalf("the mock completed %d, hail %v", len(ttft), l["completed"])
	}
	// Each request holds a slot ~45 ms: 4 slots serve ~88/s, half the
	// rate asked, so the 48th request waits ~250 ms.
	serverQueue, hailQueue := quantile(queue, 50), wait
	tol := 0.020 // the fast tier's: beside other tests a loaded machine wakes hail and the mock late by ms
	if testtier.On(testtier.Timing) {
		tol = 0.005
	}
	if inHail {
		if serverQueue > tol || hailQueue < 0.05 {
			t.Errorf("queue p50: %.1f ms in the mock, %.1f ms for a connection in hail; want it in hail", 1e3*serverQueue, 1e3*hailQueue)
		}
	} else if hailQueue > tol || serverQueue < 0.05 {
		t.Errorf("queue p50: %.1f ms in the mock, %.1f ms for a connection in hail; want it in the mock", 1e3*serverQueue, 1e3*hailQueue)
	}
	var why []string
	// TTFT from the actual send is the mock's (first token − arrival),
	// with the server's queue and without hail's (~250 ms at the end). On
	// HTTP/2 the mock's arrival is net/http's read of the request, late by
	// its goroutines' wake-ups: in the fast tier, 50 ms there (22 ms seen
	// on a slow 2-core machine beside other tests).
	sendTol := tol
	if slices.Contains(proto, "--http2") && !testtier.On(testtier.Timing) {
		sendTol = 0.050
	}
	if d := sent["p50"] - quantile(ttft, 50); math.Abs(d) > sendTol {
		why = append(why, fmt.Sprintf("TTFT from send p50 %.2f ms, the mock's log %.2f ms", 1e3*sent["p50"], 1e3*quantile(ttft, 50)))
	}
	// TTFT from the intended send holds hail's queue too.
	if inHail && (intended["p50"] < sent["p50"]+0.8*hailQueue || intended["p50"] < 5*sent["p50"]) {
		t.Errorf("TTFT p50 from intended %.1f ms, from send %.1f ms, hail's connection wait p50 %.1f ms: the intended one must hold the wait",
			1e3*intended["p50"], 1e3*sent["p50"], 1e3*hailQueue)
	}
	if !inHail && intended["p50"]-sent["p50"] > 2*tol {
		why = append(why, fmt.Sprintf("TTFT p50 from intended %.1f ms, from send %.1f ms: with hail on time they differ by its lateness only",
			1e3*intended["p50"], 1e3*sent["p50"]))
	}
	i, s := strings.Index(text, "TTFT (from intended send)"), strings.Index(text, "TTFT (from actual send)")
	if i < 0 || s < i || !strings.Contains(text[i:s], fmtDur(intended["p50"])) || !strings.Contains(text, fmtDur(sent["p50"])) {
		t.Errorf("the text report does not show both TTFTs (p50 %s and %s), the intended one first:\n%s", fmtDur(intended["p50"]), fmtDur(sent["p50"]), text)
	}
	if v := h["verdict"].(map[string]any)["bottleneck"]; inHail && v != "target" {
		t.Errorf("verdict %v, want target (its slots held the connections)", h["verdict"])
	}
	return strings.Join(why, "; ")
}

// fmtDur writes seconds as the text report's table does.
func fmtDur(s float64) string {
	switch {
	case s < 1e-3:
		return fmt.Sprintf("%.1fµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.2fms", s*1e3)
	}
	return fmt.Sprintf("%.3fs", s)
}
