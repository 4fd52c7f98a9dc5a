package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/dataset"
	"github.com/hail-loadgen/hail/internal/llmload"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stream"
)

// llmRun is a checked hail llm invocation: its plan (POSTs to the API's
// URL) and the prepared load (internal/llmload).
type llmRun struct {
	plan *plan.Plan
	load llmload.Load
	*llmload.Run
}

// llmNames name hail llm's inputs in llmload's messages.
var llmNames = llmload.Names{URL: "URL", API: "--api", Model: "--model", InputTokens: "--input-tokens", OutputTokens: "--output-tokens",
	ExtraBody: "--extra-body", Arrivals: "--arrivals", Header: "-H", Rate: "-q", Burst: "--burst-delay",
	Dataset: "--dataset", DatasetOrder: "--dataset-order", TraceSpeedup: "--trace-speedup", Tokenizer: "--tokenizer", Stages: "--stages",
	MultiTurn: "--multi-turn", Turns: "--turns", MaxContext: "--max-context-tokens", Think: "--think-time"}

// prepareLLM checks the flags and the URL, asks the server for its model
// when --model is not given, and builds the run. Each problem is one line.
func prepareLLM(cmd *cobra.Command, f *llmFlags, args []string) (*llmRun, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("expected one URL, got %d arguments: usage is hail llm [flags] http://HOST:PORT/v1/chat/completions", len(args))
	}
	raw := args[0]
	if !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("URL %q has no scheme: write http://%s/v1/chat/completions", raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("URL %q is not valid: %v", raw, unwrapURLErr(err))
	}
	slo, err := parseSLO(f.slo)
	if err != nil {
		return nil, err
	}
	l := llmload.Load{Model: f.modelName, InputTokens: f.inputTokens, OutputTokens: f.outputTokens, Exact: f.exact,
		ExtraBody: f.extraBody, APIKey: os.Getenv("OPENAI_API_KEY"), SLO: slo, Seed: f.seed, Names: llmNames}
	if cmd.Flags().Changed("api") {
		l.API = f.api
	}
	if cmd.Flags().Changed("arrivals") {
		l.Arrivals = f.arrivals
	}
	l.Dataset, l.Tokenizer, l.Stages = f.dataset, f.tokenizer, f.stages
	l.MultiTurn, l.Turns, l.MaxContextTokens, l.ThinkTime = f.multiTurn, f.turns, f.maxContext, f.think
	if cmd.Flags().Changed("dataset-order") {
		l.DatasetOrder = f.datasetOrder
	}
	if cmd.Flags().Changed("trace-speedup") {
		l.TraceSpeedup = f.traceSpeedup
		if l.TraceSpeedup <= 0 {
			return nil, fmt.Errorf("--trace-speedup %g: give a factor above 0 (2 replays the trace twice as fast)", f.traceSpeedup)
		}
	}
	p := &plan.Plan{URL: u, Method: "POST"}
	if err := f.model.apply(cmd, p); err != nil {
		return nil, err
	}
	if err := f.tr.apply(cmd, p); err != nil {
		return nil, err
	}
	f.strm.apply(p)
	p.Timeout, p.ConnectTimeout = f.timeout, f.connTimeout
	if p.Headers, err = parseHeaders(f.headers); err != nil {
		return nil, err
	}
	if f.sweep.on {
		p.Rate = 1 // each step sets its own (llmload.Run.SetRate); the arrivals are checked at one
	}
	r, err := llmload.Prepare(p, l)
	if err != nil {
		return nil, err
	}
	if !cmd.Flags().Changed("n-requests") && !cmd.Flags().Changed("duration") && !f.sweep.on {
		runsItsLength(p, l, r)
	}
	if err := p.Validate(); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.Connect(context.Background(), p); err != nil {
		r.Close()
		return nil, err
	}
	return &llmRun{plan: p, load: l, Run: r}, nil
}

// runsItsLength makes a run of rate stages last the stages, and a trace's
// run send the whole trace, where neither -n nor -z says otherwise (the
// load command's default -n 200 would cut them short).
func runsItsLength(p *plan.Plan, l llmload.Load, r *llmload.Run) {
	if l.Stages != "" {
		stages, _ := llmload.ParseStages(l.Stages) // checked by Prepare
		p.Requests, p.Duration = 0, schedule.Ramp{Stages: stages}.Total()
	}
	if d := r.Spec.Data; d != nil && d.Kind == dataset.Azure {
		p.Requests = uint64(d.Records)
	}
}

// parseHeaders parses -H's 'Name: value' headers.
func parseHeaders(given []string) ([][2]string, error) {
	var h [][2]string
	for _, raw := range given {
		name, value, ok := strings.Cut(raw, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("-H %q: write headers as 'Name: value'", raw)
		}
		h = append(h, [2]string{name, strings.TrimSpace(value)})
	}
	return h, nil
}

// parseSLO parses --slo (stream.ParseSLO).
func parseSLO(s string) (stream.SLO, error) {
	slo, err := stream.ParseSLO(s)
	if err != nil {
		return slo, fmt.Errorf("--slo %v", err)
	}
	return slo, nil
}

// config is the run's configuration as the Result stores it.
func (l *llmRun) config() map[string]any {
	p := l.plan
	c := map[string]any{
		"url": redactedURL(p.URL, false), "method": p.Method, "headers": redactedHeaders(p.Headers, false), "connections": p.Connections,
		"requests": p.Requests, "duration_seconds": p.Duration.Seconds(), "rate": p.Rate, "model": modelName(p, l.Workload),
		"burst_delay_seconds": p.BurstEvery.Seconds(), "burst_rate": p.BurstSize, "wait_ongoing": p.WaitOngoing,
		"pacing_granularity_seconds": p.Pacing().Seconds(), "timeout_seconds": p.Timeout.Seconds(), "connect_timeout_seconds": p.ConnectTimeout.Seconds(),
		"keepalive": p.KeepAlive, "engine": p.Engine, "idle_timeout_seconds": p.Idle().Seconds(), "stream_drain_seconds": p.Drain().Seconds(),
		"llm": l.Config(l.load),
	}
	transportConfig(c, p, false)
	return c
}
