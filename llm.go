package hail

import (
	"context"
	"time"

	"github.com/hail-loadgen/hail/internal/llmload"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stream"
)

// LLMLoad is an LLM inference load, what hail llm sends: streaming
// completions to an OpenAI-compatible server (vLLM, SGLang, TGI,
// llama.cpp, a gateway in front of them; hail serve --openai to try it),
// each asking for exactly its output length with a prompt of its input
// length, read as token streams. Plan.Rate is the open model (Poisson
// arrivals by default), Plan.RateStages the open model through rate
// stages with the same arrivals (as hail llm --stages; each stage of
// Result.Hail.Stages then has LLM results of its own, its warmup left
// out), and Plan.Connections alone the closed one;
// Plan.Header is sent too (an Authorization, say), Plan.Timeout bounds a
// whole stream and Plan.IdleTimeout a silent one. Result.Hail.LLM holds
// time to first token from the intended send time (the queue included)
// and from the actual send, TPOT, inter-token latency per token,
// end-to-end latency, tokens/s and goodput, with vLLM's result keys
// beside them; docs/llm.md defines them.
type LLMLoad struct {
	// API is "completions" (/v1/completions) or "chat"
	// (/v1/chat/completions); "" takes it from Plan.URL's path, and a base
	// URL (http://HOST:PORT or …/v1) is chat.
	API string
	// Model is the model asked for; "" asks the server (GET …/v1/models)
	// and takes the first it lists.
	Model string
	// InputTokens and OutputTokens are the prompt and output lengths in
	// tokens: "128", "64-256" (uniform), "64:3,512:1" (weighted) or
	// "normal:128,32", drawn per request; "" is 1024 and 128.
	InputTokens, OutputTokens string
	// MaxTokensOnly asks for the output length with max_tokens alone;
	// by default min_tokens and ignore_eos ask for exactly it too.
	MaxTokensOnly bool
	// ExtraBody is a JSON object whose members every request also
	// carries, e.g. `{"temperature":0}`.
	ExtraBody string
	// APIKey, if set, is sent as Authorization: Bearer APIKey (unless
	// Plan.Header has an Authorization). hail llm reads OPENAI_API_KEY;
	// the Go API reads no environment.
	APIKey string
	// SLOTTFT, SLOTPOT and SLOE2E are goodput's objectives (0: none):
	// goodput counts the completed requests that met every one, TTFT and
	// E2E from the intended send time.
	SLOTTFT, SLOTPOT, SLOE2E time.Duration
	// Arrivals is how Plan.Rate's requests arrive: "poisson" (also ""),
	// "constant" (evenly spaced) or "gamma:B" (vLLM's burstiness B: below
	// 1 burstier). ArrivalSeed seeds the random ones (0 is 1).
	Arrivals    string
	ArrivalSeed uint64
	// Dataset is where prompts come from: "" or "random" (made up,
	// InputTokens long), "shared-prefix:groups=G,prefix=P", "jsonl:FILE",
	// "sharegpt:FILE" or "azure:FILE" (an Azure LLM inference trace, which
	// also sets every request's arrival time: no Rate then). A file is
	// mapped, not read, for the run. DatasetOrder is how a jsonl or
	// sharegpt file's records are taken: "shuffle" (also ""), "sequential"
	// or "random"; TraceSpeedup divides a trace's times (0 is 1). The
	// draws of lengths, words, order and groups are seeded by ArrivalSeed
	// too. docs/llm.md describes each.
	Dataset, DatasetOrder string
	TraceSpeedup          float64
	// Tokenizer is a Hugging Face tokenizer.json to count tokens with
	// ("": whitespace-separated words).
	Tokenizer string
	// MultiTurn makes every connection a user holding conversations (chat
	// API, closed model: no Rate): Turns user turns each in a made-up
	// conversation (0 is 4; a sharegpt conversation has its own), the
	// history truncated at MaxContextTokens (0: no bound), ThinkTime
	// between a reply and the next turn.
	MultiTurn        bool
	Turns            int
	MaxContextTokens int
	ThinkTime        time.Duration
}

// llmNames name an LLMLoad's fields in llmload's messages.
var llmNames = llmload.Names{URL: "URL", API: "LLM.API", Model: "LLM.Model", InputTokens: "LLM.InputTokens", OutputTokens: "LLM.OutputTokens",
	ExtraBody: "LLM.ExtraBody", Arrivals: "LLM.Arrivals", Header: "Header", Rate: "Rate", Burst: "BurstEvery",
	Dataset: "LLM.Dataset", DatasetOrder: "LLM.DatasetOrder", TraceSpeedup: "LLM.TraceSpeedup", Tokenizer: "LLM.Tokenizer", Stages: "RateStages",
	MultiTurn: "LLM.MultiTurn", Turns: "LLM.Turns", MaxContext: "LLM.MaxContextTokens", Think: "LLM.ThinkTime"}

// load is l as llmload's Load, with hail llm's defaults.
func (l *LLMLoad) load() llmload.Load {
	in, out, seed := l.InputTokens, l.OutputTokens, l.ArrivalSeed
	if in == "" {
		in = "1024"
	}
	if out == "" {
		out = "128"
	}
	if seed == 0 {
		seed = 1
	}
	return llmload.Load{API: l.API, Model: l.Model, InputTokens: in, OutputTokens: out, Exact: !l.MaxTokensOnly, ExtraBody: l.ExtraBody,
		APIKey: l.APIKey, SLO: stream.SLO{TTFT: l.SLOTTFT, TPOT: l.SLOTPOT, E2E: l.SLOE2E}, Arrivals: l.Arrivals, Seed: seed, Names: llmNames,
		Dataset: l.Dataset, DatasetOrder: l.DatasetOrder, TraceSpeedup: l.TraceSpeedup, Tokenizer: l.Tokenizer,
		MultiTurn: l.MultiTurn, Turns: l.Turns, MaxContextTokens: l.MaxContextTokens, ThinkTime: l.ThinkTime}
}

// prepare makes j's plan an LLM load of l. With connect, once the plan is
// valid, it asks the server for its model when none is given.
func (l *LLMLoad) prepare(ctx context.Context, j *job, p Plan, connect bool) error {
	switch {
	case p.Method != "" && p.Method != "POST":
		return &FieldError{Field: "Method", Value: `"` + p.Method + `"`, Problem: "an LLM load sends POSTs: leave Method empty"}
	case len(p.Body) > 0:
		return &FieldError{Field: "Body", Problem: "an LLM load builds each request's body from LLM's lengths: leave Body empty (LLM.ExtraBody adds members)"}
	case len(p.ConnectionStages) > 0:
		return &FieldError{Field: "ConnectionStages", Problem: "an LLM load ramps its rate: give RateStages (the open model, with LLM.Arrivals' gaps), or Connections alone (the closed model)"}
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"LLM.SLOTTFT", l.SLOTTFT}, {"LLM.SLOTPOT", l.SLOTPOT}, {"LLM.SLOE2E", l.SLOE2E}} {
		if d.v < 0 {
			return &FieldError{Field: d.field, Value: d.v.String(), Problem: "must not be negative (0: no objective)"}
		}
	}
	if l.TraceSpeedup < 0 {
		return &FieldError{Field: "LLM.TraceSpeedup", Problem: "must not be negative (0 is 1: the trace's own times)"}
	}
	load := l.load()
	var staged time.Duration
	for _, s := range p.RateStages { // checked by Plan.stages, which keeps the load's arrivals
		load.StageList = append(load.StageList, schedule.Stage{Duration: s.Duration, Target: s.Target, Step: s.Step, Warmup: s.Warmup, Name: s.Name})
		staged += max(s.Duration, 0)
	}
	if j.plan.Duration == 0 && j.plan.Requests == 0 {
		j.plan.Duration = staged // the stages' length, as Plan.stages sets it
	}
	r, err := llmload.Prepare(j.plan, load)
	if err != nil {
		return fieldError(apiWords(err).Error(), "LLM.", "URL", "Header", "Rate", "BurstEvery")
	}
	j.llm, j.workload = r, r.Workload
	if !connect {
		return nil
	}
	if err := j.plan.Validate(); err != nil {
		return public(err)
	}
	if err := r.Connect(ctx, j.plan); err != nil {
		if unreachable(err) {
			return &UnreachableError{Addr: j.plan.URL.Host, Reason: apiWords(err).Error()}
		}
		return fieldError(apiWords(err).Error(), "LLM.")
	}
	return nil
}
