package main

// hail llm's datasets against hail serve --openai's request log: what
// each request asked, and when it arrived.

import (
	"database/sql"
	"encoding/csv"
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

	"github.com/hail-loadgen/hail/internal/llmserve"
	"github.com/hail-loadgen/hail/internal/llmserve/llmservetest"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// mockAsks reads the mock's request log: each request's arrival (ns),
// prompt tokens and max_tokens, in the log's order.
func mockAsks(t *testing.T, path string) (arrivals []int64, asks [][2]int) {
	t.Helper()
	for _, r := range llmservetest.ReadLog(t, path) {
		arrivals = append(arrivals, r.Arrival)
		asks = append(asks, [2]int{r.Prompt, r.MaxTokens})
	}
	return arrivals, asks
}

// startLoggedMock starts the mock with a request log at a path of its
// own; stop closes the mock (the log complete).
func startLoggedMock(t *testing.T, cfg llmserve.Config) (base, logPath string, stop func()) {
	t.Helper()
	logPath = filepath.Join(t.TempDir(), "mock.csv")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.Log, cfg.Seed = "127.0.0.1:0", f, 7
	s, err := llmserve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			if err := s.Close(); err != nil {
				t.Error(err)
			}
			f.Close()
		}
	}
	t.Cleanup(stop)
	return "http://" + addr.String(), logPath, stop
}

// A trace is replayed as written: every request asks its line's lengths,
// and arrives at its line's time (sped up) after the first, at the mock
// (within 20 ms in the timing tier, 150 ms in the fast one).
func TestLLMTraceReplay(t *testing.T) {
	t.Parallel()
	bound := 150 * time.Millisecond // a loaded machine starts requests late; the replay spans 0.6 s, so a trace sent at once or not sped up is off by more
	tries := 1
	if testtier.On(testtier.Timing) {
		// The worst of 30 arrivals against the first's, a connection's
		// setup among them: 12 ms on a slow 2-core guest whose system
		// calls cost 3× a faster machine's (there 10 ms held). That guest
		// also stalls now and then (30 ms once in CI): up to three tries,
		// while a replay that ignores the trace's times fails them all.
		bound, tries = 20*time.Millisecond, 3
	}
	var worst float64
	for try := 1; try <= tries; try++ {
		if worst = traceReplayOnce(t); worst <= float64(bound) {
			break
		}
		t.Logf("try %d: arrivals off the trace's times by up to %.1f ms", try, worst/1e6)
	}
	if worst > float64(bound) {
		t.Errorf("arrivals off the trace's times by up to %.1f ms", worst/1e6)
	}
	t.Logf("arrivals within %.2f ms of the trace's times", worst/1e6)
}

// traceReplayOnce replays TestLLMTraceReplay's trace against a logged mock
// of its own, checks what each request asked, and returns the worst
// arrival's distance from its time in the trace, in ns.
func traceReplayOnce(t *testing.T) float64 {
	base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 64, PrefillPerToken: time.Microsecond, ITL: fixedITL(t, "1ms")})
	var b strings.Builder
	b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
	start := time.Date(2023, 11, 16, 18, 15, 46, 680590000, time.UTC)
	var want [][2]int
	var offsets []int64
	at := time.Duration(0)
	for i := range 30 {
		at += time.Duration(i%7) * 13 * time.Millisecond // bunched and spread, several at once
		in, out := 20+i*7, 1+i%5
		fmt.Fprintf(&b, "%s,%d,%d\n", start.Add(at).Format("2006-01-02 15:04:05.0000000"), in, out)
		want = append(want, [2]int{in, out})
		offsets = append(offsets, int64(at/2))
	}
	trace := filepath.Join(t.TempDir(), "trace.csv")
	os.WriteFile(trace, []byte(b.String()), 0o644)
	res, _ := llmMockRun(t, "-c", "16", "--dataset", "azure:"+trace, "--trace-speedup", "2", base+"/v1/completions")
	stop()
	arrivals, asks := mockAsks(t, logPath)
	if len(asks) != 30 {
		t.Fatalf("the mock saw %d requests, the trace holds 30", len(asks))
	}
	slices.SortFunc(asks, func(a, b [2]int) int { return a[0] - b[0] })
	if !slices.Equal(asks, want) {
		t.Errorf("asked (prompt tokens, max_tokens) %v, the trace %v", asks, want)
	}
	if llm := res["hail"].(map[string]any)["llm"].(map[string]any); llm["arrivals"] != "trace" {
		t.Errorf("hail.llm arrivals %v", llm["arrivals"])
	}
	slices.Sort(arrivals)
	var worst float64
	for i, a := range arrivals {
		got := a - arrivals[0]
		worst = max(worst, math.Abs(float64(got-offsets[i])))
	}
	return worst
}

// A ShareGPT file's conversations are each sent once per pass (sampled
// without replacement), asking for the first human turn with the reply's
// length; the mock's count of each prompt is the dataset's.
func TestLLMShareGPTWithoutReplacement(t *testing.T) {
	t.Parallel()
	base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 64, PrefillPerToken: time.Microsecond, ITL: fixedITL(t, "1ms")})
	type turn struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	type conv struct {
		Conversations []turn `json:"conversations"`
	}
	var convs []conv
	var want [][2]int
	for i := range 25 {
		q := strings.Repeat("word ", 3+i) + "\"quoted\"\nand more"
		a := strings.TrimSpace(strings.Repeat("reply ", 1+i%9))
		convs = append(convs, conv{[]turn{{"human", q}, {"gpt", a}}})
		want = append(want, [2]int{len(strings.Fields(q)), len(strings.Fields(a))})
	}
	convs = append(convs, conv{[]turn{{"gpt", "no question"}}})
	js, _ := json.Marshal(convs)
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	os.WriteFile(path, js, 0o644)
	res, _ := llmMockRun(t, "-c", "4", "-n", "25", "--seed", "3", "--dataset", "sharegpt:"+path, base+"/v1/chat/completions")
	stop()
	_, asks := mockAsks(t, logPath)
	slices.SortFunc(asks, func(a, b [2]int) int { return a[0] - b[0] })
	if !slices.Equal(asks, want) {
		t.Errorf("asked %v, the dataset's conversations %v", asks, want)
	}
	cfg := res["hail"].(map[string]any)["config"].(map[string]any)["llm"].(map[string]any)
	if cfg["dataset_records"] != 25.0 || cfg["dataset_skipped"] != 1.0 || cfg["dataset_order"] != "shuffle" {
		t.Errorf("config %v", cfg)
	}
}

// Bad dataset input is one line naming the flag.
func TestLLMDatasetBadInput(t *testing.T) {
	t.Parallel()
	o := &openAI{}
	base := startOpenAI(t, o)
	dir := t.TempDir()
	chats := filepath.Join(dir, "chats.jsonl")
	os.WriteFile(chats, []byte(`{"messages": [{"role": "user", "content": "hi"}]}`+"\n"), 0o644)
	badTok := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(badTok, []byte(`{"model": {"type": "WordPiece", "vocab": {}}}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset", "parquet:x", base + "/v1/completions"}, "--dataset \"parquet:x\": unknown dataset"},
		{[]string{"--dataset", "jsonl:" + filepath.Join(dir, "none"), base + "/v1/completions"}, "no such file"},
		{[]string{"--dataset", "jsonl:" + chats, base + "/v1/completions"}, "use the chat API"},
		{[]string{"--trace-speedup", "0", base + "/v1/completions"}, "--trace-speedup 0"},
		{[]string{"--trace-speedup", "2", base + "/v1/completions"}, "only an azure trace"},
		{[]string{"--dataset-order", "sequential", base + "/v1/completions"}, "--dataset-order"},
		{[]string{"--tokenizer", badTok, base + "/v1/completions"}, `--tokenizer ` + badTok + `: its model "WordPiece"`},
		{[]string{"--input-tokens", "lognormal:5", base + "/v1/completions"}, "lognormal needs"},
		{[]string{"--multi-turn", base + "/v1/completions"}, "--multi-turn holds conversations: use the chat API"},
		{[]string{"--multi-turn", "-q", "3", base + "/v1/chat/completions"}, "is the closed model"},
		{[]string{"--turns", "3", base + "/v1/chat/completions"}, "--turns shapes --multi-turn"},
		{[]string{"--think-time", "1s", base + "/v1/chat/completions"}, "--think-time is --multi-turn's pause"},
		{[]string{"--multi-turn", "--dataset", "jsonl:" + chats, base + "/v1/chat/completions"}, "not from jsonl:"},
		{[]string{"--multi-turn", "--sweep", "--slo", "ttft=1s", base + "/v1/chat/completions"}, "--multi-turn users are the closed model"},
	} {
		_, errOut, code := hailIn(t, append([]string{"llm", "--no-tui", "-n", "1"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, code, errOut, c.want)
		}
	}
	if reqs, _ := o.requests(); len(reqs) != 0 {
		t.Errorf("%d requests sent by rejected commands", len(reqs))
	}
}

// A shared-prefix load, seen at the mock's prefix cache: one request at a
// time, the first of each group finds nothing cached, every other finds
// its group's prefix (its whole 16-token blocks); without the dataset,
// nothing is ever cached.
func TestLLMSharedPrefixAtTheMock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dataset string
		first   int // requests with nothing cached
		cached  int // tokens the others find
	}{
		{"shared-prefix:groups=3,prefix=50", 3, 48},
		{"random", 30, 0},
	} {
		base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 4, PrefixCacheTokens: 1 << 16, ITL: fixedITL(t, "1ms")})
		llmMockRun(t, "-c", "1", "-n", "30", "--dataset", c.dataset, "--input-tokens", "20", "--output-tokens", "2", base+"/v1/completions")
		stop()
		rows := readCSV(t, logPath)
		first := 0
		for _, r := range rows {
			switch r["cached_tokens"] {
			case "0":
				first++
			case strconv.Itoa(c.cached):
			default:
				t.Errorf("%s: request %s found %s tokens cached, want 0 or %d", c.dataset, r["request"], r["cached_tokens"], c.cached)
			}
			if want := strconv.Itoa(20 + 50*min(c.cached, 1)); r["prompt_tokens"] != want {
				t.Errorf("%s: request %s has %s prompt tokens, want %s", c.dataset, r["request"], r["prompt_tokens"], want)
			}
		}
		if len(rows) != 30 || first != c.first {
			t.Errorf("%s: %d of %d requests found nothing cached, want %d", c.dataset, first, len(rows), c.first)
		}
	}
}

// readCSV reads a CSV file's rows by its header's names.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, name := range recs[0] {
			m[name] = rec[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// Rate stages: the open model steps from one rate to the next, each stage
// with results of its own; the mock sees each stage's rate.
func TestLLMStages(t *testing.T) {
	t.Parallel()
	base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 64, ITL: fixedITL(t, "1ms")})
	res, _ := llmMockRun(t, "-c", "16", "--arrivals", "constant", "--stages", "1s:20,1s:60:200ms", "--input-tokens", "5", "--output-tokens", "2", base+"/v1/completions")
	stop()
	arrivals, _ := mockAsks(t, logPath)
	slices.Sort(arrivals)
	if len(arrivals) != 80 {
		t.Fatalf("the mock saw %d requests, the stages ask 20 + 60", len(arrivals))
	}
	// The gaps between arrivals: 50 ms in the first stage (20/s), 16.7 ms
	// in the second (60/s). Medians, so that one late arrival on a busy
	// machine does not move a request across the stages' boundary.
	medianGap := func(a []int64) time.Duration {
		var gaps []int64
		for i := 1; i < len(a); i++ {
			gaps = append(gaps, a[i]-a[i-1])
		}
		slices.Sort(gaps)
		return time.Duration(gaps[len(gaps)/2])
	}
	if g := medianGap(arrivals[:20]); g < 40*time.Millisecond || g > 60*time.Millisecond {
		t.Errorf("the first stage's requests arrived %v apart (median), 50ms asked (20/s)", g)
	}
	if g := medianGap(arrivals[20:]); g < 12*time.Millisecond || g > 22*time.Millisecond {
		t.Errorf("the second stage's requests arrived %v apart (median), 16.7ms asked (60/s)", g)
	}
	h := res["hail"].(map[string]any)
	stages, _ := h["stages"].([]any)
	if len(stages) != 2 || h["config"].(map[string]any)["llm"].(map[string]any)["stages"] != "1s:20,1s:60:200ms" {
		t.Errorf("hail.stages %v", h["stages"])
	}
	for _, c := range []struct{ spec, want string }{
		{"1s", "is not DURATION:RATE"}, {"0s:5", "positive duration"}, {"1s:0", "rate above 0"}, {"1s:5:2s", "warm-up"},
	} {
		_, errOut, code := hail(t, "llm", "--no-tui", "--stages", c.spec, base+"/v1/completions")
		if code != 1 || !strings.Contains(errOut, "--stages") || !strings.Contains(errOut, c.want) {
			t.Errorf("--stages %s: exit %d, %q", c.spec, code, errOut)
		}
	}
	if _, errOut, code := hail(t, "llm", "--no-tui", "-q", "3", "--stages", "1s:5", base+"/v1/completions"); code != 1 || !strings.Contains(errOut, "drop -q") {
		t.Errorf("-q with --stages: exit %d, %q", code, errOut)
	}
}

// Multi-turn conversations seen at the mock: each turn carries the
// conversation so far (the mock counts every message's tokens), its
// oldest turns dropped beyond --max-context-tokens, the next turn sent a
// think time after the last reply ended.
func TestLLMMultiTurn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args    []string
		prompts []int
	}{
		{[]string{"--turns", "4"}, []int{10, 25, 40, 55, 10, 25, 40, 55}},
		{[]string{"--turns", "4", "--max-context-tokens", "30"}, []int{10, 25, 25, 25, 10, 25, 25, 25}},
	} {
		base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 4, ITL: fixedITL(t, "1ms")})
		args := append([]string{"-c", "1", "-n", "8", "--multi-turn", "--think-time", "50ms", "--input-tokens", "10", "--output-tokens", "5"}, c.args...)
		llmMockRun(t, append(args, base+"/v1/chat/completions")...)
		stop()
		rows := readCSV(t, logPath)
		var prompts []int
		for i, r := range rows {
			n, _ := strconv.Atoi(r["prompt_tokens"])
			prompts = append(prompts, n)
			if r["max_tokens"] != "5" {
				t.Errorf("%v: turn %d asks %s tokens", c.args, i, r["max_tokens"])
			}
			if i > 0 {
				prevEnd, _ := strconv.ParseInt(rows[i-1]["end_ns"], 10, 64)
				arrival, _ := strconv.ParseInt(r["arrival_ns"], 10, 64)
				if gap := time.Duration(arrival - prevEnd); gap < 50*time.Millisecond {
					t.Errorf("%v: turn %d arrived %v after the last reply ended (think time 50ms)", c.args, i, gap)
				}
			}
		}
		if !slices.Equal(prompts, c.prompts) {
			t.Errorf("%v: prompt tokens by turn %v, want %v", c.args, prompts, c.prompts)
		}
	}
}

// ShareGPT conversations, turn by turn: the history is the conversation's
// own turns, each turn asks for its reply's length, and two users begin
// with different conversations.
func TestLLMMultiTurnShareGPT(t *testing.T) {
	t.Parallel()
	base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 4, ITL: fixedITL(t, "1ms")})
	conv := func(k int) map[string]any {
		w := func(n int) string { return strings.TrimSpace(strings.Repeat(fmt.Sprintf("c%d ", k), n)) }
		return map[string]any{"conversations": []map[string]string{
			{"from": "human", "value": w(k + 1)}, {"from": "gpt", "value": w(k + 2)}, {"from": "human", "value": w(k + 3)}, {"from": "gpt", "value": w(k + 4)}}}
	}
	js, _ := json.Marshal([]any{conv(1), conv(2)})
	path := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(path, js, 0o644)
	llmMockRun(t, "-c", "2", "-n", "4", "--multi-turn", "--dataset", "sharegpt:"+path, base+"/v1/chat/completions")
	stop()
	// Conversation k's turns are k+1, k+2, k+3 and k+4 tokens long: its
	// first request asks (k+1)/(k+2), its second (3k+6)/(k+4). A user's
	// first conversation is its own (sessions 0 and 1 take the two
	// records); which user sends the run's last requests is the closed
	// model's race, so a user may begin a second conversation.
	asks := map[string]int{}
	for _, r := range readCSV(t, logPath) {
		asks[r["prompt_tokens"]+"/"+r["max_tokens"]]++
	}
	total := 0
	for ask, n := range asks {
		total += n
		if ask != "2/3" && ask != "3/4" && ask != "9/5" && ask != "12/6" {
			t.Errorf("a request asking %s: no turn of the conversations", ask)
		}
	}
	if total != 4 || asks["2/3"] == 0 || asks["3/4"] == 0 || asks["9/5"] > asks["2/3"] || asks["12/6"] > asks["3/4"] || asks["9/5"]+asks["12/6"] == 0 {
		t.Errorf("prompt tokens/max_tokens %v: want both conversations begun, no second turn without its first", asks)
	}
}

// The per-request log holds each completed stream's tokens and TPOT: the
// SQLite file's output tokens are the mock's tokens sent (multiset), its
// input tokens the prompts' counts, its TPOT the span from the first
// token to the last over the tokens less one; the CSV the same.
func TestLLMPerRequestTokens(t *testing.T) {
	t.Parallel()
	base, logPath, stop := startLoggedMock(t, llmserve.Config{Slots: 16, ITL: fixedITL(t, "2ms"), Stagger: true})
	db := filepath.Join(t.TempDir(), "run.db")
	llmMockRun(t, "-c", "4", "-n", "40", "--db-url", db, "--input-tokens", "10-30", "--output-tokens", "3-12", base+"/v1/completions")
	stop()
	var mock, logged []string
	for _, r := range readCSV(t, logPath) {
		mock = append(mock, r["prompt_tokens"]+"/"+r["tokens_sent"])
	}
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query("SELECT input_tokens, output_tokens, tpot_ns, last_token_ns - first_token_ns FROM requests")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var in, out, tpot, span int64
		if err := rows.Scan(&in, &out, &tpot, &span); err != nil {
			t.Fatal(err)
		}
		logged = append(logged, fmt.Sprintf("%d/%d", in, out))
		if want := span / (out - 1); tpot != want || span < 0 {
			t.Errorf("tpot %v for %d tokens over %v", time.Duration(tpot), out, time.Duration(span))
		}
	}
	slices.Sort(mock)
	slices.Sort(logged)
	if len(logged) != 40 || !slices.Equal(mock, logged) {
		t.Errorf("hail's log (input/output tokens) %v, the mock's %v", logged, mock)
	}
	base2, _, _ := startLoggedMock(t, llmserve.Config{Slots: 16, ITL: fixedITL(t, "1ms")})
	out, errOut, code := hail(t, "llm", "--no-tui", "--output-format", "csv", "-c", "2", "-n", "4", "--output-tokens", "5", "--input-tokens", "7", base2+"/v1/completions")
	if code != 0 {
		t.Fatalf("csv: exit %d: %s", code, errOut)
	}
	rowsCSV, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rowsCSV) != 5 || rowsCSV[0][12] != "output-tokens" {
		t.Fatalf("csv %v: %s", err, out)
	}
	for _, r := range rowsCSV[1:] {
		if r[12] != "5" || r[13] != "7" || r[14] == "" {
			t.Errorf("csv row %v", r)
		}
	}
}

// hail compare puts two LLM runs' TTFT, TPOT, ITL, tokens/s and goodput
// side by side: against a mock twice as slow between tokens, TPOT
// doubles.
func TestLLMCompare(t *testing.T) {
	t.Parallel()
	var files []string
	for _, itl := range []string{"5ms", "10ms"} { // gaps a loaded machine's late timers (~1 ms) do not hide
		base, _, _ := startLoggedMock(t, llmserve.Config{Slots: 8, ITL: fixedITL(t, itl)})
		out := filepath.Join(t.TempDir(), "run.json")
		if _, errOut, code := hail(t, "llm", "--no-tui", "-j", "-o", out, "-c", "4", "-n", "20", "--input-tokens", "8", "--output-tokens", "10",
			"--slo", "ttft=1s", base+"/v1/completions"); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		files = append(files, out)
	}
	text, errOut, code := hailIn(t, "compare", files[0], files[1])
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	for _, row := range []string{"TTFT p50", "TTFT p99", "TTFT p99, from send", "TPOT p50", "TPOT p99", "ITL p99", "output tokens/s", "goodput/s"} {
		if !strings.Contains(text, row) {
			t.Errorf("no %q row:\n%s", row, text)
		}
	}
	found := false
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "TPOT" && f[1] == "p50" {
			found = true
			a, _ := time.ParseDuration(f[2])
			b, _ := time.ParseDuration(f[3])
			// Within 1.3–3 ×: on a loaded machine the mock's late token
			// timers catch up (CI's fast tier: 3.89 ms against 5 ms asked,
			// then 10.08 ms: 2.6 ×).
			if a == 0 || b < a*13/10 || b > a*3 {
				t.Errorf("TPOT p50 %v then %v: want about twice:\n%s", a, b, line)
			}
		}
	}
	if !found {
		t.Errorf("no TPOT p50 row to read:\n%s", text)
	}
}

// The HTML report of an LLM run has its section: the percentiles table,
// the TTFT and ITL histograms, drawn from the run's histograms, and the
// output tokens/s over time.
func TestLLMHTML(t *testing.T) {
	t.Parallel()
	base, _, _ := startLoggedMock(t, llmserve.Config{Slots: 8, ITL: fixedITL(t, "1ms")})
	out := filepath.Join(t.TempDir(), "run.json")
	if _, errOut, code := hail(t, "llm", "--no-tui", "-j", "-o", out, "-c", "4", "-n", "20", "--input-tokens", "8", "--output-tokens", "10", base+"/v1/completions"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page, errOut, code := hailIn(t, "report", out, "--output-format", "html")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"LLM streams", "20 completed, 0 failed", "TTFT (from intended send)", `id="chart-llm-ttft"`, `id="chart-llm-itl"`, `id="chart-llm-tokens"`, "Output tokens/s", "streams (", "tokens ("} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if strings.Contains(page, "no streams") || strings.Contains(page, "no tokens") {
		t.Error("an LLM histogram is empty")
	}
}
