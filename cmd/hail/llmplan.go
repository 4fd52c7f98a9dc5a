package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/llm"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/transport"
)

// llmRun is a checked hail llm invocation: its plan (POSTs to the API's
// URL), what every request asks of the model, and the workload that builds
// the requests and reads their token streams.
type llmRun struct {
	plan     *plan.Plan
	spec     *llm.Spec
	slo      stream.SLO
	arrivals string // how -q's requests arrive: "poisson", "constant", "gamma:B", "bursts"; "" closed
	workload *run.Workload
}

// prepareLLM checks the flags and the URL, asks the server for its model
// when --model is not given, and builds the run. Each problem is one line.
func prepareLLM(cmd *cobra.Command, f *llmFlags, args []string) (*llmRun, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("expected one URL, got %d arguments: usage is hail llm [flags] http://HOST:PORT/v1/chat/completions", len(args))
	}
	u, api, err := llmURL(args[0], f.api, cmd.Flags().Changed("api"))
	if err != nil {
		return nil, err
	}
	l := &llmRun{spec: &llm.Spec{API: api, Model: f.modelName, Exact: f.exact, Extra: f.extraBody}}
	if l.spec.Input, err = llm.ParseLengths(f.inputTokens); err != nil {
		return nil, fmt.Errorf("--input-tokens %v", err)
	}
	if l.spec.Output, err = llm.ParseLengths(f.outputTokens); err != nil {
		return nil, fmt.Errorf("--output-tokens %v", err)
	}
	if l.slo, err = parseSLO(f.slo); err != nil {
		return nil, err
	}
	p := &plan.Plan{URL: u, Method: "POST"}
	if err := f.model.apply(cmd, p); err != nil {
		return nil, err
	}
	if err := f.tr.apply(cmd, p); err != nil {
		return nil, err
	}
	f.strm.apply(p)
	// Every response is read as a stream, uncompressed, and not redirected.
	p.SSE, p.Compression, p.MaxRedirects, p.Timeout, p.ConnectTimeout = true, false, 0, f.timeout, f.connTimeout
	if p.Headers, err = llmHeaders(f.headers); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if l.spec.Model == "" {
		if l.spec.Model, err = firstModel(p); err != nil {
			return nil, err
		}
	}
	if err := l.spec.Init(); err != nil {
		return nil, err
	}
	specs := p.Specs()
	if l.spec.Head, l.spec.Tail, err = llm.SplitHead(specs[0]); err != nil {
		return nil, err
	}
	pacer, arrivals, err := llmArrivals(cmd, f, p)
	if err != nil {
		return nil, err
	}
	l.plan, l.arrivals = p, arrivals
	l.workload = &run.Workload{
		NewRequests: func(int) engine.Requests { return l.spec.NewBuilder() },
		Pacer:       pacer,
		Stream:      &stream.Config{Tokens: true, SLO: l.slo, Expect: l.spec.Expect},
	}
	return l, nil
}

// llmURL is the URL requests go to and its API: the path's (.../completions
// or .../chat/completions, which --api must not contradict), or a base
// ("", "/", or ending in /v1) completed by --api (chat by default).
func llmURL(raw, apiFlag string, apiGiven bool) (*url.URL, llm.API, error) {
	if !strings.Contains(raw, "://") {
		return nil, "", fmt.Errorf("URL %q has no scheme: write http://%s/v1/chat/completions", raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("URL %q is not valid: %v", raw, unwrapURLErr(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("URL %q: hail llm speaks http:// and https://", raw)
	}
	if api, ok := llm.APIFromPath(u.Path); ok {
		if apiGiven && string(api) != apiFlag {
			return nil, "", fmt.Errorf("--api %s, but the URL's path %s is the %s API: drop --api or change the path", apiFlag, u.Path, api)
		}
		return u, api, nil
	}
	base := strings.TrimSuffix(u.Path, "/")
	switch {
	case base == "":
		base = "/v1"
	case !strings.HasSuffix(base, "/v1"):
		return nil, "", fmt.Errorf("URL path %q names no API: end it in /v1/completions or /v1/chat/completions (or give the server's base, http://HOST:PORT/v1, with --api)", u.Path)
	}
	api := llm.Chat
	if apiGiven {
		api = llm.API(apiFlag)
	}
	u.Path = base + api.Path()
	return u, api, nil
}

// llmHeaders are -H's headers and the JSON and event-stream ones; an
// Authorization header comes from OPENAI_API_KEY unless -H gives one.
func llmHeaders(given []string) ([][2]string, error) {
	h := [][2]string{{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}}
	auth := false
	for _, raw := range given {
		name, value, ok := strings.Cut(raw, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("-H %q: write headers as 'Name: value'", raw)
		}
		if strings.EqualFold(name, "Content-Type") || strings.EqualFold(name, "Accept") {
			return nil, fmt.Errorf("-H %q: hail llm sends Content-Type: application/json and Accept: text/event-stream itself", raw)
		}
		auth = auth || strings.EqualFold(name, "Authorization")
		h = append(h, [2]string{name, strings.TrimSpace(value)})
	}
	if key := os.Getenv("OPENAI_API_KEY"); key != "" && !auth {
		h = append(h, [2]string{"Authorization", "Bearer " + key})
	}
	return h, nil
}

// parseSLO parses --slo: ttft=D,tpot=D,e2e=D (e2el too, vLLM's name); a
// plain number is milliseconds, as vLLM's --goodput takes them.
func parseSLO(s string) (stream.SLO, error) {
	var slo stream.SLO
	if strings.TrimSpace(s) == "" {
		return slo, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			k, v, ok = strings.Cut(strings.TrimSpace(part), ":")
		}
		d, err := sloDuration(strings.TrimSpace(v))
		if !ok || err != nil || d <= 0 {
			return slo, fmt.Errorf("--slo %q: %q is not NAME=DURATION with a positive duration; write e.g. --slo ttft=500ms,tpot=50ms,e2e=10s", s, part)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "ttft":
			slo.TTFT = d
		case "tpot":
			slo.TPOT = d
		case "e2e", "e2el":
			slo.E2E = d
		default:
			return slo, fmt.Errorf("--slo %q: unknown objective %q: the objectives are ttft, tpot and e2e", s, k)
		}
	}
	return slo, nil
}

// sloDuration is a duration, or a plain number of milliseconds.
func sloDuration(v string) (time.Duration, error) {
	if ms, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	return time.ParseDuration(v)
}

// llmArrivals is the open model's schedule (nil: the plan's, or the
// closed model) and its name for the report.
func llmArrivals(cmd *cobra.Command, f *llmFlags, p *plan.Plan) (schedule.Pacer, string, error) {
	given := cmd.Flags().Changed("arrivals")
	switch {
	case p.BurstEvery > 0:
		if given {
			return nil, "", fmt.Errorf("--arrivals shapes -q's arrivals: --burst-delay sends bursts of its own; give one of them")
		}
		return nil, "bursts", nil
	case p.Rate <= 0:
		if given {
			return nil, "", fmt.Errorf("--arrivals %s needs -q (the open model's rate); without it the closed model sends as responses end", f.arrivals)
		}
		return nil, "", nil
	}
	a := strings.TrimSpace(f.arrivals)
	switch {
	case a == "constant":
		return nil, a, nil
	case a == "poisson":
		return schedule.NewArrivals(p.Rate, 1, f.seed), a, nil
	case strings.HasPrefix(a, "gamma:"):
		b, err := strconv.ParseFloat(strings.TrimPrefix(a, "gamma:"), 64)
		if err == nil && b > 0 && b <= 1000 {
			return schedule.NewArrivals(p.Rate, b, f.seed), a, nil
		}
	}
	return nil, "", fmt.Errorf("--arrivals %q: give poisson, constant or gamma:B with a burstiness B above 0 (1 is poisson)", f.arrivals)
}

// firstModel asks the server which models it serves (GET …/v1/models, as
// vLLM's bench does) and returns the first.
func firstModel(p *plan.Plan) (string, error) {
	models := *p.URL
	models.Path = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(models.Path, "/"), "/completions"), "/chat") + "/models"
	models.RawQuery = ""
	fail := func(why string) (string, error) {
		return "", fmt.Errorf("no --model given, and %s: give --model NAME", why)
	}
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return "", err
	}
	topt.RxTimes = false
	ctx, cancel := context.WithTimeout(context.Background(), p.ConnectTimeout+10*time.Second)
	defer cancel()
	d, err := transport.NewDialer(ctx, topt)
	if err != nil {
		return fail(fmt.Sprintf("the server cannot be reached (%v)", err))
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, _, err := d.Dial(ctx)
		return c, err
	}
	tr := &http.Transport{DialContext: dial, DialTLSContext: dial}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, "GET", models.String(), nil)
	if err != nil {
		return fail(err.Error())
	}
	for _, h := range p.Headers {
		req.Header.Set(h[0], h[1])
	}
	req.Header.Set("Accept", "application/json")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return fail(fmt.Sprintf("GET %s failed (%v)", models.Path, err))
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode != 200 {
		return fail(fmt.Sprintf("GET %s answered %s", models.Path, resp.Status))
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 4<<20)).Decode(&list); err != nil || len(list.Data) == 0 || list.Data[0].ID == "" {
		return fail(fmt.Sprintf("GET %s listed no model", models.Path))
	}
	return list.Data[0].ID, nil
}

// config is the run's configuration as the Result stores it.
func (l *llmRun) config(f *llmFlags) map[string]any {
	p := l.plan
	c := map[string]any{
		"url": redactedURL(p.URL, false), "method": p.Method, "headers": redactedHeaders(p.Headers, false), "connections": p.Connections,
		"requests": p.Requests, "duration_seconds": p.Duration.Seconds(), "rate": p.Rate, "model": modelName(p, l.workload),
		"burst_delay_seconds": p.BurstEvery.Seconds(), "burst_rate": p.BurstSize, "wait_ongoing": p.WaitOngoing,
		"pacing_granularity_seconds": p.Pacing().Seconds(), "timeout_seconds": p.Timeout.Seconds(), "connect_timeout_seconds": p.ConnectTimeout.Seconds(),
		"keepalive": p.KeepAlive, "engine": p.Engine, "idle_timeout_seconds": p.Idle().Seconds(), "stream_drain_seconds": p.Drain().Seconds(),
		"llm": map[string]any{"api": string(l.spec.API), "model": l.spec.Model, "input_tokens": f.inputTokens, "output_tokens": f.outputTokens,
			"exact": f.exact, "extra_body": f.extraBody, "slo": f.slo, "arrivals": l.arrivals, "seed": f.seed},
	}
	transportConfig(c, p, false)
	return c
}

// describe puts what the run asked of the model into its Result's hail.llm
// (made, with every request failed, when no stream came back at all).
func (l *llmRun) describe(res *report.Result) {
	m := res.EnsureLLM()
	s := l.spec
	m.API, m.Model, m.InputAsked, m.OutputAsked, m.Arrivals = string(s.API), s.Model, s.Input.String(), s.Output.String(), l.arrivals
	m.SetSLO(l.slo.TTFT.Seconds(), l.slo.TPOT.Seconds(), l.slo.E2E.Seconds())
}
