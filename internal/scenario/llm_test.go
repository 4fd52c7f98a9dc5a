package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
)

const llmHead = "base: http://127.0.0.1:8000\nrequests: 10\n"

// Bad llm steps and thresholds are one line naming the file and line.
func TestLLMStepErrors(t *testing.T) {
	t.Parallel()
	ask := "steps:\n  - name: ask\n    path: /v1/chat/completions\n    llm: {model: m, slo: ttft=1s}\n"
	for _, tc := range []struct{ name, src, want string }{
		{"no endpoint", llmHead + "steps:\n  - name: ask\n    llm: {model: m}\n", `t.yaml:4:5: ask: expected a path (under base) or a url, found neither`},
		{"no model", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {prompt: hi}\n", `t.yaml:6:10: ask.llm: expected a model`},
		{"unknown key", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m, promt: hi}\n", `t.yaml:6:21: ask.llm: unknown key "promt": did you mean "prompt"?`},
		{"no api", llmHead + "steps:\n  - name: ask\n    path: /generate\n    llm: {model: m}\n", `t.yaml:5:5: ask: the path "/generate" names no API`},
		{"api contradicts", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m, api: chat}\n", `t.yaml:6:26: ask.llm.api: chat, but the step's path /v1/completions is the completions API`},
		{"body", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    body: x\n    llm: {model: m}\n", `t.yaml:6:5: ask: an llm step's request is its prompt, a streaming POST: expected no body`},
		{"bad lengths", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m, output_tokens: lots}\n", `t.yaml:6:36: ask.llm.output_tokens:`},
		{"bad slo", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m, slo: fast}\n", `t.yaml:6:26: ask.llm.slo: "fast": "fast" is not NAME=DURATION`},
		{"prompt and input", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m, prompt: hi, input_tokens: 5}\n", `t.yaml:6:47: ask.llm: input_tokens is the length of a made-up prompt`},
		{"conversation on completions", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m, conversation: c}\n", `t.yaml:6:35: ask.llm.conversation: a conversation's turns are chat messages`},
		{"context without conversation", llmHead + "steps:\n  - name: ask\n    path: /v1/chat/completions\n    llm: {model: m, max_context_tokens: 9}\n", `t.yaml:6:41: ask.llm.max_context_tokens bounds a conversation's history`},
		{"accept header", llmHead + "steps:\n  - name: ask\n    path: /v1/chat/completions\n    headers: {Accept: x}\n    llm: {model: m}\n", `t.yaml:6:15: ask.headers: an llm step sends Content-Type: application/json and Accept: text/event-stream itself`},
		{"llm capture on http", llmHead + "steps:\n  - name: get\n    path: /\n    capture: {n: {llm: output_tokens}}\n", `t.yaml:6:18: get.capture.n: an llm capture takes a token stream's tokens`},
		{"llm capture field", llmHead + ask + "    capture: {n: {llm: text}}\n", `t.yaml:7:24: ask.capture.n.llm: expected output_tokens or input_tokens`},
		{"ttft without llm", llmHead + "steps:\n  - name: get\n    path: /\nthresholds:\n  - p99_ttft < 500ms\n", `t.yaml:7:5: threshold "p99_ttft < 500ms" judges llm steps' token streams, and the scenario has no llm step`},
		{"ttft on http step", llmHead + ask + "  - name: get\n    path: /\nthresholds:\n  - {expr: p99_ttft < 1s, step: get}\n", `t.yaml:10:5: threshold "p99_ttft < 1s" judges token streams, and step get is no llm step`},
		{"goodput without slo", llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m}\nthresholds:\n  - goodput > 99%\n", `t.yaml:8:5: threshold "goodput > 99%": goodput is the share of streams that met their objectives`},
		{"ttft on a count", llmHead + ask + "thresholds:\n  - rps_ttft < 1s\n", `t.yaml:8:5: thresholds[0]: threshold "rps_ttft < 1s": metric "rps_ttft": _ttft goes with a latency`},
	} {
		_, err := parse(t, tc.src)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, err, tc.want)
		}
	}
}

// An llm step's request is a streaming POST whose body carries the
// expanded prompt (JSON-escaped); a conversation's next turn carries the
// turns before it and made-up replies of the lengths asked, and its
// history is cut at max_context_tokens.
func TestLLMStepRequests(t *testing.T) {
	t.Parallel()
	s, err := parse(t, llmHead+`steps:
  - name: first
    path: /v1/chat/completions
    llm: {model: m, prompt: 'say "{{var.word}}" twice', output_tokens: 4, conversation: c, max_context_tokens: 20}
  - name: next
    path: /v1/chat/completions
    llm: {model: m, prompt: again and again, output_tokens: 6, conversation: c, max_context_tokens: 20}
flows:
  - {name: f, steps: [first, next, next]}
variables: {word: hi}
`)
	if err != nil {
		t.Fatal(err)
	}
	v := newVU(s, 0)
	ok := &http1.Parser{Status: 200}
	type msg struct{ Role, Content string }
	var got [][]msg
	for hit := range uint64(3) {
		req, step, _, built := v.Next(hit)
		if !built {
			t.Fatal("not built")
		}
		head, body, _ := strings.Cut(string(req), "\r\n\r\n")
		if !strings.HasPrefix(head, "POST /v1/chat/completions HTTP/1.1\r\n") || !strings.Contains(head, "\r\nAccept: text/event-stream") ||
			!strings.Contains(head, "\r\nContent-Type: application/json") {
			t.Fatalf("head %q", head)
		}
		var b struct {
			Model    string
			Messages []msg
			Max      int  `json:"max_completion_tokens"`
			Stream   bool `json:"stream"`
		}
		if err := json.Unmarshal([]byte(body), &b); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if b.Model != "m" || !b.Stream {
			t.Fatalf("body %q", body)
		}
		got = append(got, b.Messages)
		v.Done(step, ok)
	}
	// turn 1: 4 words; its reply 4; turn 2: 3 words (11 in all); its reply
	// 6; turn 3: 3 more = 20: all fit.
	if len(got[0]) != 1 || got[0][0].Content != `say "hi" twice` {
		t.Fatalf("first turn %+v", got[0])
	}
	if len(got[1]) != 3 || got[1][1].Role != "assistant" || len(strings.Fields(got[1][1].Content)) != 4 || got[1][2].Content != "again and again" {
		t.Fatalf("second turn %+v", got[1])
	}
	if len(got[2]) != 5 || len(strings.Fields(got[2][3].Content)) != 6 {
		t.Fatalf("third turn %+v", got[2])
	}
	// A new flow iteration starts a new conversation.
	req, _, _, _ := v.Next(3)
	if strings.Count(string(req), `"role"`) != 1 {
		t.Fatalf("a new iteration's first turn carries history: %q", req)
	}
}

// An llm step with a dataset sends the dataset's prompts and output
// lengths, as hail llm's --dataset does, and its streams' expected
// lengths are the records'.
func TestLLMStepDataset(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte(`{"prompt": "one two three", "output_tokens": 7}`+"\n"), 0o644)
	src := llmHead + "steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m, dataset: 'jsonl:p.jsonl', dataset_order: sequential}\n"
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte(src), 0o644)
	s, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Files) != 1 || !strings.HasSuffix(s.Files[0], "p.jsonl") {
		t.Errorf("files %v: want the dataset, for the shards", s.Files)
	}
	v := newVU(s, 0)
	for hit := range uint64(3) {
		req, _, _, _ := v.Next(hit)
		_, body, _ := strings.Cut(string(req), "\r\n\r\n")
		if !strings.Contains(body, `"prompt":"one two three"`) || !strings.Contains(body, `"max_tokens":7`) {
			t.Fatalf("body %s", body)
		}
		if in, out := s.expect(hit); in != 3 || out != 7 {
			t.Errorf("expect(%d) = %d, %d; want 3, 7", hit, in, out)
		}
	}
	_, err = parse(t, llmHead+"steps:\n  - name: ask\n    path: /v1/completions\n    llm: {model: m, dataset: 'azure:x.csv'}\n")
	if err == nil || !strings.Contains(err.Error(), "t.yaml:6:30: ask.llm.dataset: a trace sets its requests' arrival times") {
		t.Errorf("a trace: %v", err)
	}
}

// Building an llm step's requests and ending them allocates nothing once
// the virtual user's buffers have grown: a prompt template, and the turns
// of a conversation flow after flow.
func TestLLMStepAllocs(t *testing.T) {
	s, err := parse(t, llmHead+`steps:
  - name: a
    path: /v1/chat/completions
    llm: {model: m, prompt: 'hello {{int 1 9}}', output_tokens: 4, conversation: c}
  - name: b
    path: /v1/chat/completions
    llm: {model: m, input_tokens: 5, output_tokens: 3-6, conversation: c}
flows:
  - {name: f, steps: [a, b, b]}
`)
	if err != nil {
		t.Fatal(err)
	}
	v := newVU(s, 0)
	ok := &http1.Parser{Status: 200}
	hit := uint64(0)
	flow := func() {
		for range 3 {
			_, step, _, _ := v.Next(hit)
			v.StreamTokens(5, 4)
			v.Done(step, ok)
			hit++
		}
	}
	for range 3 {
		flow()
	}
	if n := testing.AllocsPerRun(50, flow); n != 0 {
		t.Errorf("%.1f allocations per flow of three llm requests", n)
	}
}
