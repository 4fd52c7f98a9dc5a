package hail_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
)

// An LLM load from Go is what hail llm sends: the mock counts the tokens
// hail counted, in the open model with Poisson arrivals; the vLLM file
// carries the same numbers; a stream cut by the end of the run is
// truncated: cut off, not an error, left out of the all-sent latency.
func TestLLMLoad(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewOpenAIServer(t, hailtest.OpenAIConfig{Model: "m", ITL: time.Millisecond})
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/v1/completions", Rate: 50, Duration: 400 * time.Millisecond,
		Connections: 8, WaitOngoing: true, LLM: &hail.LLMLoad{InputTokens: "32", OutputTokens: "8-24", SLOTTFT: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	l, st := res.Hail.LLM, srv.Stats()
	if l == nil || l.API != "completions" || l.Model != "m" || l.Arrivals != "poisson" || l.SLO == nil || l.SLO.TTFT != time.Second {
		t.Fatalf("hail.llm %+v", l)
	}
	if l.Completed == 0 || uint64(l.Completed) != st.Completed || uint64(l.TotalOutputTokens) != st.Tokens || l.TTFT.Samples != l.Completed {
		t.Errorf("completed %d, tokens %d, ttft samples %d; the mock completed %d, sent %d tokens", l.Completed, l.TotalOutputTokens, l.TTFT.Samples, st.Completed, st.Tokens)
	}
	var b bytes.Buffer
	if err := hail.WriteVLLM(&b, res); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v["backend"] != "openai" || v["completed"] != float64(l.Completed) || v["model_id"] != "m" {
		t.Errorf("vLLM file %s (%v)", b.String(), err)
	}

	long := hailtest.NewOpenAIServer(t, hailtest.OpenAIConfig{ITL: 50 * time.Millisecond})
	res, err = hail.Run(context.Background(), hail.Plan{URL: long.URL, Requests: 2, Connections: 2, Duration: 300 * time.Millisecond,
		StreamDrain: -1, LLM: &hail.LLMLoad{InputTokens: "4", OutputTokens: "1000"}})
	var noSuccess *hail.NoSuccessError
	if !errors.As(err, &noSuccess) {
		t.Fatalf("every stream cut: error %v, want a *NoSuccessError", err)
	}
	c, a := res.Hail.Counts, res.Hail.AllSent
	if c.Truncated != 2 || c.Errors != 0 || a.CutOff != 2 || a.Truncated != 2 || a.Requests != 0 || res.Hail.LLM.TTFT.Samples != 2 {
		t.Errorf("counts %+v, all sent %+v, ttft samples %d: want 2 truncated streams, cut off, their first tokens counted", c, a, res.Hail.LLM.TTFT.Samples)
	}
}

// A dataset and multi-turn users from Go: a JSON Lines file's prompts,
// each once, and conversations whose turns carry their history.
func TestLLMLoadDatasetAndTurns(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewOpenAIServer(t, hailtest.OpenAIConfig{ITL: time.Millisecond})
	path := filepath.Join(t.TempDir(), "p.jsonl")
	os.WriteFile(path, []byte(`{"prompt": "one two three", "output_tokens": 3}`+"\n"+`{"prompt": "four five", "output_tokens": 2}`+"\n"), 0o644)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/v1/completions", Requests: 4, Connections: 1,
		LLM: &hail.LLMLoad{Dataset: "jsonl:" + path}})
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Hail.LLM; l.TotalOutputTokens != 10 || l.TotalInputTokens != 10 {
		t.Errorf("output %d, input %d tokens; two passes over the file ask 10 and 10", l.TotalOutputTokens, l.TotalInputTokens)
	}
	res, err = hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/v1/chat/completions", Requests: 3, Connections: 1,
		LLM: &hail.LLMLoad{MultiTurn: true, Turns: 3, InputTokens: "4", OutputTokens: "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Hail.LLM; l.TotalInputTokens != 4+10+16 {
		t.Errorf("input tokens %d over three turns, want 4 + 10 + 16", l.TotalInputTokens)
	}
}

// An LLM load's bad input is a *FieldError naming the field, before any
// request.
func TestLLMLoadErrors(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewOpenAIServer(t, hailtest.OpenAIConfig{})
	chat := srv.URL + "/v1/chat/completions"
	for _, c := range []struct {
		p     hail.Plan
		field string
	}{
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{InputTokens: "lots"}}, "LLM.InputTokens"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{OutputTokens: "9-3"}}, "LLM.OutputTokens"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{ExtraBody: "[1]"}}, "LLM.ExtraBody"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{API: "completions"}}, "LLM.API"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{Arrivals: "gamma:1"}}, "LLM.Arrivals"},
		{hail.Plan{URL: chat, Rate: 5, LLM: &hail.LLMLoad{Arrivals: "weibull"}}, "LLM.Arrivals"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{SLOTPOT: -time.Second}}, "LLM.SLOTPOT"},
		{hail.Plan{URL: srv.URL + "/generate", LLM: &hail.LLMLoad{}}, "URL"},
		{hail.Plan{URL: chat, Header: map[string][]string{"Accept": {"*/*"}}, LLM: &hail.LLMLoad{}}, "Header"},
		{hail.Plan{URL: chat, Method: "GET", LLM: &hail.LLMLoad{}}, "Method"},
		{hail.Plan{URL: chat, Body: []byte("{}"), LLM: &hail.LLMLoad{}}, "Body"},
		{hail.Plan{URL: chat, RateStages: []hail.Stage{{Duration: -time.Second, Target: 5}}, LLM: &hail.LLMLoad{}}, "RateStages[0].Duration"},
		{hail.Plan{URL: chat, RateStages: []hail.Stage{{Duration: time.Second, Target: 5, Warmup: 2 * time.Second}}, LLM: &hail.LLMLoad{}}, "RateStages[0].Warmup"},
		{hail.Plan{URL: chat, RateStages: []hail.Stage{{Duration: time.Second, Target: 5}}, Rate: 3, LLM: &hail.LLMLoad{}}, "RateStages"},
		{hail.Plan{URL: chat, RateStages: []hail.Stage{{Duration: time.Second, Target: 5}}, LLM: &hail.LLMLoad{MultiTurn: true}}, "LLM.MultiTurn"},
		{hail.Plan{URL: chat, ConnectionStages: []hail.Stage{{Duration: time.Second, Target: 5}}, LLM: &hail.LLMLoad{}}, "ConnectionStages"},
		{hail.Plan{URL: chat, GRPC: &hail.GRPCCall{Method: "a.B/C"}, LLM: &hail.LLMLoad{}}, "LLM"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{Dataset: "parquet:x"}}, "LLM.Dataset"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{TraceSpeedup: -1}}, "LLM.TraceSpeedup"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{Tokenizer: "/nonexistent.json"}}, "LLM.Tokenizer"},
		{hail.Plan{URL: chat, LLM: &hail.LLMLoad{Turns: 3}}, "LLM.Turns"},
		{hail.Plan{URL: chat, Rate: 3, LLM: &hail.LLMLoad{MultiTurn: true}}, "LLM.MultiTurn"},
	} {
		err := c.p.Validate()
		var fe *hail.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%+v: %v; want a one-line *FieldError for %s", c.p.LLM, err, c.field)
		}
	}
	if st := srv.Stats(); st.Requests != 0 {
		t.Errorf("%d requests sent by rejected plans", st.Requests)
	}
	_, err := hail.Run(context.Background(), hail.Plan{URL: "http://127.0.0.1:1/v1/completions", LLM: &hail.LLMLoad{}})
	var ue *hail.UnreachableError
	if !errors.As(err, &ue) {
		t.Errorf("no model and no server: %v, want an *UnreachableError", err)
	}
}
