package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// openAI is a small OpenAI-compatible streaming server for hail llm's
// tests: it lists one model, streams k tokens per chunk after ttft (and
// gap between chunks) up to the request's max tokens, with usage at the
// end unless noUsage, and logs every request it got.
type openAI struct {
	ttft, gap time.Duration
	k         int
	noUsage   bool
	slots     chan struct{} // nil: no limit

	mu   sync.Mutex
	reqs []map[string]any
	urls []string
}

func startOpenAI(t *testing.T, o *openAI) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"test-model","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", o.serve)
	mux.HandleFunc("/v1/completions", o.serve)
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s.URL
}

func (o *openAI) serve(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	o.mu.Lock()
	o.reqs, o.urls = append(o.reqs, req), append(o.urls, r.URL.Path)
	o.mu.Unlock()
	if o.slots != nil {
		o.slots <- struct{}{}
		defer func() { <-o.slots }()
	}
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
	n := 0
	for _, key := range []string{"max_tokens", "max_completion_tokens"} {
		if v, ok := req[key].(float64); ok {
			n = int(v)
		}
	}
	prompt, _ := req["prompt"].(string)
	if m, ok := req["messages"].([]any); ok {
		prompt, _ = m[0].(map[string]any)["content"].(string)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	send := func(s string) { fmt.Fprint(w, s); rc.Flush() }
	time.Sleep(o.ttft)
	if chat {
		send(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n")
	}
	k := max(o.k, 1)
	for i := 0; i < n; i += k {
		if i > 0 {
			time.Sleep(o.gap)
		}
		text := strings.Repeat(" t", min(k, n-i))
		if chat {
			send(fmt.Sprintf(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q}}]}`+"\n\n", text))
		} else {
			send(fmt.Sprintf(`data: {"id":"x","object":"text_completion","choices":[{"index":0,"text":%q}]}`+"\n\n", text))
		}
	}
	if !o.noUsage {
		p := len(strings.Fields(prompt))
		send(fmt.Sprintf(`data: {"id":"x","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", p, n, n+p))
	}
	send("data: [DONE]\n\n")
}

func (o *openAI) requests() ([]map[string]any, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]map[string]any(nil), o.reqs...), append([]string(nil), o.urls...)
}

// llmJSON runs hail llm with args and returns its JSON result's hail.llm
// and hail.stream.
func llmJSON(t *testing.T, args ...string) (llm, stream map[string]any, res map[string]any) {
	t.Helper()
	out, errOut, code := hail(t, append([]string{"llm", "--no-tui", "-j"}, args...)...)
	if code != 0 {
		t.Fatalf("hail llm %v: exit %d: %s", args, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	h := res["hail"].(map[string]any)
	llm, _ = h["llm"].(map[string]any)
	stream, _ = h["stream"].(map[string]any)
	if llm == nil || stream == nil {
		t.Fatalf("no hail.llm or hail.stream in %s", out)
	}
	return llm, stream, res
}

// samples is a Dist's sample count.
func samples(m map[string]any, key string) int {
	return int(m[key].(map[string]any)["samples"].(float64))
}

// The server receives requests for exactly the lengths asked, and hail
// counts the tokens it sent: from usage spread over multi-token chunks
// (ITL per token), from usage in every chunk, or one per content delta.
func TestLLMCountsTokensExactly(t *testing.T) {
	t.Parallel()
	o := &openAI{k: 2, gap: time.Millisecond}
	base := startOpenAI(t, o)
	llm, st, _ := llmJSON(t, "-n", "12", "-c", "3", "--input-tokens", "40", "--output-tokens", "8", base+"/v1/chat/completions")
	if llm["completed"] != 12.0 || llm["failed"] != 0.0 || llm["total_output_tokens"] != 96.0 || llm["other_length"] != 0.0 {
		t.Errorf("completed %v failed %v output tokens %v other length %v", llm["completed"], llm["failed"], llm["total_output_tokens"], llm["other_length"])
	}
	if src := llm["token_source"].(map[string]any); src["usage_spread"] != 12.0 {
		t.Errorf("token source %v", src)
	}
	// 4 chunks of 2 tokens: 3 gaps, each 2 per-token latencies.
	if n, c := samples(llm, "itl"), samples(llm, "inter_chunk_gap"); n != 12*6 || c != 12*3 {
		t.Errorf("ITL samples %d, chunk gaps %d; want 72 and 36", n, c)
	}
	if llm["model"] != "test-model" || llm["api"] != "chat" || st["events"] != 12*7.0 {
		t.Errorf("model %v api %v events %v", llm["model"], llm["api"], st["events"])
	}
	reqs, urls := o.requests()
	if len(reqs) != 12 {
		t.Fatalf("the server got %d requests", len(reqs))
	}
	for i, r := range reqs {
		so, _ := r["stream_options"].(map[string]any)
		msg := r["messages"].([]any)[0].(map[string]any)["content"].(string)
		if r["model"] != "test-model" || r["max_completion_tokens"] != 8.0 || r["min_tokens"] != 8.0 || r["ignore_eos"] != true ||
			r["stream"] != true || so["include_usage"] != true || len(strings.Fields(msg)) != 40 || urls[i] != "/v1/chat/completions" {
			t.Errorf("request %d: %s %v", i, urls[i], r)
		}
	}
	// Input tokens are the server's (usage), here the prompt's words.
	if llm["total_input_tokens"] != 12*40.0 {
		t.Errorf("input tokens %v, want 480", llm["total_input_tokens"])
	}

	// No usage: one token per content delta, and the report says so.
	o2 := &openAI{k: 3, noUsage: true}
	base2 := startOpenAI(t, o2)
	llm, _, _ = llmJSON(t, "-n", "4", "-c", "2", "--output-tokens", "9", "--input-tokens", "10", "--exact=false", base2+"/v1/completions")
	if src := llm["token_source"].(map[string]any); src["content_deltas"] != 4.0 || llm["total_output_tokens"] != 12.0 || llm["other_length"] != 4.0 {
		t.Errorf("without usage: source %v, tokens %v, other length %v; want 3 deltas each, counted as 3 tokens of 9 asked", src, llm["total_output_tokens"], llm["other_length"])
	}
	reqs, urls = o2.requests()
	if r := reqs[0]; r["max_tokens"] != 9.0 || r["min_tokens"] != nil || r["ignore_eos"] != nil || r["prompt"] == nil || urls[0] != "/v1/completions" {
		t.Errorf("completions request without --exact: %s %v", urls[0], r)
	}
}

// TTFT counts from the intended send time: requests that wait in hail
// for the one connection (the open model outrunning a slow server) show
// the wait in TTFT, not in TTFT from the actual send — the difference the
// Python tools miss.
func TestLLMTTFTFromIntendedTime(t *testing.T) {
	t.Parallel()
	o := &openAI{ttft: 20 * time.Millisecond, gap: time.Millisecond}
	base := startOpenAI(t, o)
	// One connection, a request every 10 ms, each taking about 30 ms.
	llm, _, _ := llmJSON(t, "-q", "100", "--arrivals", "constant", "-c", "1", "-n", "12", "--output-tokens", "10",
		"--input-tokens", "5", "--model", "m", base+"/v1/chat/completions")
	ttft := llm["ttft"].(map[string]any)
	sent := llm["ttft_from_send"].(map[string]any)
	// Medians from the send, so that one request the loaded machine delays
	// (a stall also lengthens the queue behind it) fails nothing.
	if sent["p50"].(float64) > 0.1 || ttft["max"].(float64) < 0.15 || ttft["max"].(float64) < sent["max"].(float64)+0.1 {
		t.Errorf("TTFT max %v s from intended; from send median %v s, max %v s: the queue in hail (about 0.2 s at the end) belongs in the first only",
			ttft["max"], sent["p50"], sent["max"])
	}
	if llm["median_ttft_ms"].(float64) > 100 { // vLLM's key: from the actual send, as vLLM measures it
		t.Errorf("median_ttft_ms %v: vLLM's TTFT counts from the actual send", llm["median_ttft_ms"])
	}
}

// Goodput counts the requests that meet every objective.
func TestLLMGoodput(t *testing.T) {
	t.Parallel()
	// Tokens 10 ms apart: TPOT stays far above 1µs even when a loaded
	// machine reads some late.
	base := startOpenAI(t, &openAI{gap: 10 * time.Millisecond})
	llm, _, _ := llmJSON(t, "-n", "6", "-c", "2", "--output-tokens", "5", "--input-tokens", "5", "--slo", "ttft=5s,e2e=10000", base+"/v1/chat/completions")
	g := llm["goodput"].(map[string]any)
	if g["requests"] != 6.0 || g["tokens"] != 30.0 || llm["request_goodput"] == nil {
		t.Errorf("lenient objectives: goodput %v, request_goodput %v", g, llm["request_goodput"])
	}
	llm, _, _ = llmJSON(t, "-n", "6", "-c", "2", "--output-tokens", "5", "--input-tokens", "5", "--slo", "tpot=1us", base+"/v1/chat/completions")
	if g := llm["goodput"].(map[string]any); g["requests"] != 0.0 {
		t.Errorf("tpot ≤ 1µs met by %v requests", g["requests"])
	}
	llm, _, _ = llmJSON(t, "-n", "2", "--output-tokens", "5", "--input-tokens", "5", base+"/v1/chat/completions")
	if llm["request_goodput"] != nil || llm["slo"] != nil {
		t.Errorf("without --slo: request_goodput %v slo %v, want null and none (as vLLM)", llm["request_goodput"], llm["slo"])
	}
}

// --output-format vllm writes vLLM's result file, and hail merge of two
// shards adds their histograms exactly.
func TestLLMVLLMFileAndMerge(t *testing.T) {
	t.Parallel()
	base := startOpenAI(t, &openAI{k: 1})
	dir := t.TempDir()
	vf := filepath.Join(dir, "vllm.json")
	if _, errOut, code := hail(t, "llm", "--no-tui", "-n", "5", "-c", "2", "--output-tokens", "4", "--input-tokens", "3",
		"--output-format", "vllm", "-o", vf, base+"/v1/completions"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(vf)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	for _, k := range []string{"date", "backend", "model_id", "num_prompts", "request_rate", "burstiness", "max_concurrency", "duration",
		"completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput", "output_throughput",
		"total_token_throughput", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms",
		"mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms"} {
		if _, ok := v[k]; !ok {
			t.Errorf("vLLM file lacks %q", k)
		}
	}
	if v["backend"] != "openai" || v["completed"] != 5.0 || v["total_output_tokens"] != 20.0 || v["request_rate"] != "inf" ||
		v["max_concurrency"] != 2.0 || v["num_prompts"] != 5.0 || v["model_id"] != "test-model" {
		t.Errorf("vLLM file: %s", b)
	}

	var files []string
	for i := range 2 {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if _, errOut, code := hail(t, "llm", "--no-tui", "-j", "-o", f, "--shard", fmt.Sprintf("%d/2", i), "-n", "8", "-c", "2",
			"--output-tokens", "6", "--input-tokens", "3", base+"/v1/chat/completions"); code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, errOut)
		}
		files = append(files, f)
	}
	// A saved result renders as vLLM's file again.
	out, errOut, code := hailIn(t, "report", files[0], "--output-format", "vllm")
	if code != 0 || !strings.Contains(out, `"completed": 4`) || !strings.Contains(out, `"backend": "openai-chat"`) {
		t.Errorf("hail report --output-format vllm: exit %d %s\n%s", code, errOut, out)
	}
	out, errOut, code = hailIn(t, append([]string{"merge", "--output-format", "json"}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	var merged map[string]any
	if err := json.Unmarshal([]byte(out), &merged); err != nil {
		t.Fatal(err)
	}
	l := merged["hail"].(map[string]any)["llm"].(map[string]any)
	if l["completed"] != 8.0 || l["total_output_tokens"] != 48.0 || samples(l, "ttft") != 8 || samples(l, "itl") != 8*5 || l["model"] != "test-model" {
		t.Errorf("merged: completed %v tokens %v ttft samples %v itl samples %v model %v", l["completed"], l["total_output_tokens"], samples(l, "ttft"), samples(l, "itl"), l["model"])
	}
}

// Bad input is one line naming the flag, exit 1, nothing sent.
func TestLLMBadInput(t *testing.T) {
	t.Parallel()
	o := &openAI{}
	base := startOpenAI(t, o)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--input-tokens", "lots", base + "/v1/completions"}, "--input-tokens"},
		{[]string{"--output-tokens", "9-3", base + "/v1/completions"}, "--output-tokens"},
		{[]string{"--slo", "ttft", base + "/v1/completions"}, "--slo"},
		{[]string{"--slo", "speed=3", base + "/v1/completions"}, "unknown objective"},
		{[]string{"--arrivals", "gamma:1", base + "/v1/completions"}, "needs -q"},
		{[]string{"-q", "5", "--arrivals", "weibull", base + "/v1/completions"}, "--arrivals"},
		{[]string{"--api", "chat", base + "/v1/completions"}, "--api chat"},
		{[]string{base + "/generate"}, "names no API"},
		{[]string{"--extra-body", "[1]", base + "/v1/completions"}, "--extra-body"},
		{[]string{"http://127.0.0.1:1/v1/completions"}, "give --model"},
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

// The text report leads with the LLM numbers, TTFT from the intended send
// first.
func TestLLMText(t *testing.T) {
	t.Parallel()
	base := startOpenAI(t, &openAI{})
	out, errOut, code := hail(t, "llm", "--no-tui", "-n", "3", "-c", "1", "--output-tokens", "4", "--input-tokens", "4", base+"/v1/chat/completions")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	first, ttft := strings.Index(out, "LLM streams"), strings.Index(out, "TTFT (from intended send)")
	if first != 0 || ttft < 0 || ttft > strings.Index(out, "TTFT (from actual send)") || ttft > strings.Index(out, "Summary:") {
		t.Errorf("report:\n%s", out)
	}
}
