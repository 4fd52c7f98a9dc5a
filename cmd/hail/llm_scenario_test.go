package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/llmserve"
)

// llmScenario writes a scenario whose flow GETs the mock's model list
// (an HTTP step capturing the model's id), asks the mock at base (an llm
// step whose prompt carries the captured id and whose model is it, with
// its output tokens captured), then sends them to an HTTP step; extra is
// appended.
func llmScenario(t *testing.T, base, extra string) string {
	t.Helper()
	src := fmt.Sprintf(`name: llm-flow
base: %s
connections: 2
requests: 12
steps:
  - name: models
    path: /v1/models
    capture:
      model: {json: "data[0].id"}
  - name: ask
    path: /v1/chat/completions
    llm:
      model: mock
      prompt: "count {{last model}} alpha beta gamma delta"
      output_tokens: 8
      slo: ttft=10s
    capture:
      out: {llm: output_tokens}
  - name: done
    path: /v1/models?n={{last out}}
flows:
  - {name: f, steps: [models, ask, done]}
%s`, base, extra)
	path := filepath.Join(t.TempDir(), "llm.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runLLMScenario runs hail run on path and returns its JSON result, exit
// code and standard error; the result renders in text, HTML and Markdown
// with a line per llm step.
func runLLMScenario(t *testing.T, path string, args ...string) (map[string]any, int, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run.json")
	_, errOut, code := hail(t, append([]string{"run", "--no-tui", "-j", "-o", out}, append(args, path)...)...)
	defer func() {
		for format, want := range map[string]string{"text": ": llm: ", "html": "LLM: ", "markdown": " (llm): "} {
			text, se, c := hailIn(t, "report", out, "--output-format", format)
			if c != 0 || !strings.Contains(text, want) {
				t.Errorf("hail report --output-format %s: exit %d (%s), no %q in it", format, c, se, want)
			}
		}
	}()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("hail run: exit %d: %s", code, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res, code, errOut
}

// stepLLM is hail.steps[name].llm of a result.
func stepLLM(t *testing.T, res map[string]any, name string) map[string]any {
	t.Helper()
	for _, s := range res["hail"].(map[string]any)["steps"].([]any) {
		if st := s.(map[string]any); st["name"] == name {
			l, _ := st["llm"].(map[string]any)
			return l
		}
	}
	t.Fatalf("no step %s", name)
	return nil
}

// A flow mixes HTTP and llm steps: the value an HTTP step captured is in
// the llm step's prompt (the mock counts its tokens: six), the stream's
// output tokens captured by the llm step let the next HTTP step run, and
// the llm step's TTFT is at least the mock's prefill (6 tokens × 2 ms).
func TestScenarioLLMStepAtTheMock(t *testing.T) {
	t.Parallel()
	base, logOf := startMock(t, llmserve.Config{Slots: 8, PrefillPerToken: 2 * time.Millisecond, ITL: fixedITL(t, "1ms")})
	res, code, errOut := runLLMScenario(t, llmScenario(t, base, ""))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	log := logOf()
	if len(log) != 4 {
		t.Fatalf("the mock saw %d streams, want 4 (12 requests, a third of them llm)", len(log))
	}
	for _, r := range log {
		if r.prompt != 6 || r.tokens != 8 {
			t.Errorf("mock logged %d prompt tokens and %d sent, want 6 (count, the captured id, 4 words) and 8", r.prompt, r.tokens)
		}
	}
	l := stepLLM(t, res, "ask")
	if l == nil {
		t.Fatal("step ask has no llm")
	}
	if c := l["completed"].(float64); int(c) != len(log) {
		t.Errorf("ask completed %v streams, the mock served %d", c, len(log))
	}
	ttft := dist(t, l, "ttft")
	if ttft["min"] < 0.012 {
		t.Errorf("ask's TTFT min %.4fs is below the mock's prefill of 12ms", ttft["min"])
	}
	if g := l["goodput"].(map[string]any)["requests"].(float64); int(g) != len(log) {
		t.Errorf("goodput %v, want all %d (slo ttft=10s)", g, len(log))
	}
	for _, st := range res["hail"].(map[string]any)["steps"].([]any) {
		if m := st.(map[string]any); m["name"] == "done" && m["counts"].(map[string]any)["requests"].(float64) < 3 {
			t.Errorf("step done ran %v times, want 3 or 4 (after each ask, with its captured tokens; the 12th request may end the run first)", m["counts"])
		}
		if m := st.(map[string]any); m["name"] == "ask" && m["captures"].(float64) != 4 {
			t.Errorf("step ask captured %v values, want 4", m["captures"])
		}
	}
	if stepLLM(t, res, "models") != nil {
		t.Error("an HTTP step has an llm entry")
	}
	run := res["hail"].(map[string]any)["llm"].(map[string]any)
	if int(run["completed"].(float64)) != len(log) || run["model"] != "mock" {
		t.Errorf("hail.llm: completed %v, model %v; want the llm step's %d, mock", run["completed"], run["model"], len(log))
	}
}

// A threshold on the llm step's p99 TTFT fails when the mock is slow
// (prefill 6 × 20 ms) and passes when it is not; exit 2 and 0.
func TestScenarioLLMThreshold(t *testing.T) {
	t.Parallel()
	th := "thresholds:\n  - {expr: p99_ttft < 150ms, step: ask}\n  - goodput >= 100%\n"
	for _, tc := range []struct {
		prefill time.Duration
		pass    bool
	}{{50 * time.Millisecond, false}, {100 * time.Microsecond, true}} { // ~6 prompt tokens: TTFT ≥ 300 ms, or ~1 ms (77 ms p99 once, on a loaded CI)
		base, logOf := startMock(t, llmserve.Config{Slots: 8, PrefillPerToken: tc.prefill, ITL: fixedITL(t, "1ms")})
		res, code, errOut := runLLMScenario(t, llmScenario(t, base, th))
		logOf()
		want := 0
		if !tc.pass {
			want = 2
		}
		if code != want {
			t.Errorf("prefill %v: exit %d, want %d: %s", tc.prefill, code, want, errOut)
		}
		ths := res["hail"].(map[string]any)["thresholds"].([]any)
		if p := ths[0].(map[string]any)["pass"].(bool); p != tc.pass {
			t.Errorf("prefill %v: p99_ttft threshold pass %v, want %v (%v)", tc.prefill, p, tc.pass, ths[0])
		}
		if p := ths[1].(map[string]any)["pass"].(bool); !p {
			t.Errorf("prefill %v: goodput threshold failed: %v", tc.prefill, ths[1])
		}
	}
}

// The turns of a conversation carry the turns before them: the mock's log
// shows each request's prompt grow by the last turn and its reply.
func TestScenarioLLMConversationGrows(t *testing.T) {
	t.Parallel()
	base, logOf := startMock(t, llmserve.Config{Slots: 8, ITL: fixedITL(t, "1ms")})
	src := fmt.Sprintf(`base: %s
connections: 1
requests: 3
steps:
  - name: t1
    path: /v1/chat/completions
    llm: {model: mock, prompt: one two three, output_tokens: 5, conversation: c}
  - name: t2
    path: /v1/chat/completions
    llm: {model: mock, prompt: four five, output_tokens: 4, conversation: c}
flows:
  - {name: f, steps: [t1, t2, t2]}
`, base)
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(src), 0o644)
	if _, code, errOut := runLLMScenario(t, path); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var prompts []int
	for _, r := range logOf() {
		prompts = append(prompts, r.prompt)
	}
	// 3; 3+5+2 = 10; 10+4+2 = 16
	if want := []int{3, 10, 16}; fmt.Sprint(prompts) != fmt.Sprint(want) {
		t.Errorf("prompt tokens turn by turn %v, want %v", prompts, want)
	}
}

// Two runs' llm steps merge exactly: hail merge adds each step's streams
// (completed, tokens, goodput, TTFT samples) and keeps what they asked.
func TestScenarioLLMStepsMerge(t *testing.T) {
	t.Parallel()
	base, logOf := startMock(t, llmserve.Config{Slots: 8, ITL: fixedITL(t, "1ms")})
	path := llmScenario(t, base, "")
	dir := t.TempDir()
	var parts []map[string]any
	for _, name := range []string{"a.json", "b.json"} {
		out := filepath.Join(dir, name)
		if _, se, code := hail(t, "run", "--no-tui", "-j", "-o", out, path); code != 0 {
			t.Fatalf("hail run: exit %d: %s", code, se)
		}
		parts = append(parts, readJSON(t, out))
	}
	logOf()
	merged := filepath.Join(dir, "m.json")
	if _, se, code := hailIn(t, "merge", "-o", merged, filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")); code != 0 {
		t.Fatalf("hail merge: exit %d: %s", code, se)
	}
	m := stepLLM(t, readJSON(t, merged), "ask")
	if m == nil {
		t.Fatal("the merged step ask has no llm")
	}
	sum := func(get func(map[string]any) float64) float64 {
		return get(stepLLM(t, parts[0], "ask")) + get(stepLLM(t, parts[1], "ask"))
	}
	for _, x := range []struct {
		name string
		get  func(map[string]any) float64
	}{
		{"completed", func(l map[string]any) float64 { return l["completed"].(float64) }},
		{"total_output_tokens", func(l map[string]any) float64 { return l["total_output_tokens"].(float64) }},
		{"goodput.requests", func(l map[string]any) float64 { return l["goodput"].(map[string]any)["requests"].(float64) }},
		{"ttft samples", func(l map[string]any) float64 { return l["ttft"].(map[string]any)["samples"].(float64) }},
		{"itl samples", func(l map[string]any) float64 { return l["itl"].(map[string]any)["samples"].(float64) }},
	} {
		if got, want := x.get(m), sum(x.get); got != want || want == 0 {
			t.Errorf("merged %s %v, want the parts' sum %v", x.name, got, want)
		}
	}
	if m["model"] != "mock" || m["slo"] == nil {
		t.Errorf("merged step's model %v, slo %v: want what it asked kept", m["model"], m["slo"])
	}
}

// readJSON reads a JSON result file.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}
