// Package llmload prepares an LLM inference load, what hail llm and
// package hail's Plan.LLM send: streaming POSTs to an OpenAI-compatible
// API (/v1/completions or /v1/chat/completions, from the URL's path or the
// API asked for), each asking for an exact output length with a prompt of
// a target input length (package llm), read as token streams (package
// stream); the open model's arrivals (Poisson by default, constant, or
// gamma-distributed); the model, asked of the server's /v1/models when
// none is given; and what the Result's hail.llm says the run asked
// (Describe). docs/llm.md defines every number the run measures.
//
// Its messages name the inputs as the caller does (Names): the command's
// flags, or the Go API's fields.
package llmload

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/dataset"
	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/llm"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/tokenizer"
	"github.com/hail-loadgen/hail/internal/transport"
	"github.com/hail-loadgen/hail/result"
)

// Load is what every request asks of the model, and how the requests
// arrive.
type Load struct {
	// API is "completions" or "chat"; "" takes it from the URL's path
	// (chat for a base URL: http://HOST:PORT or …/v1).
	API string
	// Model is the model asked for; "" asks the server's /v1/models and
	// takes the first it lists (Connect).
	Model string
	// InputTokens and OutputTokens are the prompt and output lengths: N,
	// LOW-HIGH (uniform), N:WEIGHT,M:WEIGHT or normal:MEAN,SD.
	InputTokens, OutputTokens string
	// Exact asks for exactly the output length (min_tokens and ignore_eos
	// beside max_tokens).
	Exact bool
	// ExtraBody is a JSON object whose members every request also
	// carries ("": none).
	ExtraBody string
	// APIKey, if set, is sent as Authorization: Bearer APIKey unless the
	// plan's headers carry an Authorization already.
	APIKey string
	// SLO are goodput's objectives.
	SLO stream.SLO
	// Arrivals is how the open model's requests arrive: "poisson" (also
	// ""), "constant" (evenly spaced) or "gamma:B" (vLLM's burstiness B);
	// only with a rate.
	Arrivals string
	// Seed seeds every draw: arrival times, lengths, prompts' words, the
	// dataset's order and shared-prefix groups.
	Seed uint64
	// Dataset is where prompts come from: "" or random (made up from
	// InputTokens), shared-prefix:groups=G,prefix=P, jsonl:FILE,
	// sharegpt:FILE or azure:FILE (package dataset).
	Dataset string
	// DatasetOrder is how a file's records are taken: shuffle (also ""),
	// sequential or random.
	DatasetOrder string
	// TraceSpeedup divides an azure trace's times (0: 1).
	TraceSpeedup float64
	// Tokenizer is a Hugging Face tokenizer.json to count tokens with
	// ("": whitespace-separated words).
	Tokenizer string
	// Stages are rate steps, DURATION:RATE[:WARMUP],… (30s:5,60s:10:10s):
	// the open model at each rate in turn, with Arrivals' gaps, each
	// stage with results of its own (its warm-up left out); "": none.
	Stages string
	// StageList are rate stages already parsed (the Go API's
	// Plan.RateStages), used when Stages is "": ramps too.
	StageList []schedule.Stage
	// MultiTurn makes every connection a user holding conversations
	// (llm.MultiTurn): Turns user turns each (random), the history
	// truncated at MaxContextTokens (0: no bound), ThinkTime between a
	// reply and the next turn. Chat API, closed model.
	MultiTurn        bool
	Turns            int
	MaxContextTokens int
	ThinkTime        time.Duration
	// Names name the inputs in messages.
	Names Names
}

// Names are how messages name a Load's inputs and the plan's fields they
// meet ("--input-tokens", "LLM.InputTokens"; "-q", "Rate").
type Names struct {
	URL, API, Model, InputTokens, OutputTokens, ExtraBody, Arrivals, Header, Rate, Burst string
	Dataset, DatasetOrder, TraceSpeedup, Tokenizer, Stages                               string
	MultiTurn, Turns, MaxContext, Think                                                  string
}

// Run is a prepared load.
type Run struct {
	// Spec is what every request asks (its Model set once Connect ran).
	Spec *llm.Spec
	// SLO are goodput's objectives.
	SLO stream.SLO
	// Arrivals names the open model's arrivals for the report: "poisson",
	// "constant", "gamma:B" or "bursts"; "" in the closed model.
	Arrivals string
	// Workload builds the requests and reads their token streams.
	Workload *run.Workload

	names Names
	load  Load
}

// Prepare checks l against p, the run's plan (its URL, connections,
// schedule and transport set), and makes p the load's: POSTs to the API's
// path, every response read as a stream, uncompressed, not redirected,
// with the JSON and event-stream headers. It sends nothing: Connect does
// what needs the server. Each problem is one line.
func Prepare(p *plan.Plan, l Load) (*Run, error) {
	n := l.Names
	api, err := apiOf(p, l)
	if err != nil {
		return nil, err
	}
	r := &Run{Spec: &llm.Spec{API: api, Model: l.Model, Exact: l.Exact, Extra: l.ExtraBody}, SLO: l.SLO, names: n, load: l}
	if r.Spec.Input, err = llm.ParseLengths(l.InputTokens); err != nil {
		return nil, fmt.Errorf("%s %v", n.InputTokens, err)
	}
	if r.Spec.Output, err = llm.ParseLengths(l.OutputTokens); err != nil {
		return nil, fmt.Errorf("%s %v", n.OutputTokens, err)
	}
	r.Spec.Seed = l.Seed
	if err := r.data(l); err != nil {
		return nil, err
	}
	if d := r.Spec.Data; d != nil && d.Chat && api == llm.Completions {
		r.Close()
		return nil, fmt.Errorf("%s %s holds chats (\"messages\"), which the completions API cannot send: use the chat API (…/v1/chat/completions)", n.Dataset, l.Dataset)
	}
	if err := r.multiTurn(p, l); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.Spec.Init(); err != nil {
		r.Close()
		if r.Spec.Counter != nil && !strings.Contains(err.Error(), "JSON object") {
			return nil, fmt.Errorf("%s %s: %v", n.Tokenizer, l.Tokenizer, err)
		}
		return nil, fmt.Errorf("%s %v", n.ExtraBody, err)
	}
	p.Method, p.SSE, p.Compression, p.MaxRedirects = "POST", true, false, 0
	if p.Headers, err = headers(p.Headers, l.APIKey, n); err != nil {
		r.Close()
		return nil, err
	}
	pacer, arrivals, err := arrivalsOf(p, l, r.Spec.Data)
	if err != nil {
		r.Close()
		return nil, err
	}
	r.Arrivals = arrivals
	spec := r.Spec
	r.Workload = &run.Workload{
		NewRequests: func(int) engine.Requests { return spec.NewBuilder() },
		Pacer:       pacer,
		Stream:      &stream.Config{Tokens: true, SLO: l.SLO, Expect: spec.Expect},
	}
	if l.hasStages() {
		r.Workload.Stages, _ = l.stages()
	}
	if r.Spec.Multi != nil {
		r.Workload.NewRequests = func(u int) engine.Requests { return spec.NewUser(u) }
		r.Workload.PerConnection = true
	}
	return r, nil
}

// Connect finishes the load for p, once p is valid: it asks the server
// for its model when none was given (GET …/v1/models, as vLLM's bench
// does; ctx bounds it) and encodes the requests' head.
func (r *Run) Connect(ctx context.Context, p *plan.Plan) error {
	s := r.Spec
	if s.Model == "" {
		m, err := firstModel(ctx, p, r.names)
		if err != nil {
			return err
		}
		s.Model = m
	}
	if err := s.Init(); err != nil {
		return fmt.Errorf("%s %v", r.names.ExtraBody, err)
	}
	var err error
	s.Head, s.Tail, err = llm.SplitHead(p.Specs()[0])
	return err
}

// apiOf is the API of l's requests, and p's URL its path: the path's
// (…/completions or …/chat/completions, which l.API must not contradict),
// or a base ("", "/", or ending in /v1) completed by l.API (chat when
// none).
func apiOf(p *plan.Plan, l Load) (llm.API, error) {
	n, u := l.Names, p.URL
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%s %q: an LLM load speaks http:// and https://", n.URL, u.Redacted())
	}
	if l.API != "" && l.API != string(llm.Completions) && l.API != string(llm.Chat) {
		return "", fmt.Errorf("%s %q: choose completions or chat", n.API, l.API)
	}
	if api, ok := llm.APIFromPath(u.Path); ok {
		if l.API != "" && l.API != string(api) {
			return "", fmt.Errorf("%s %s, but the URL's path %s is the %s API: drop %s or change the path", n.API, l.API, u.Path, api, n.API)
		}
		return api, nil
	}
	base := strings.TrimSuffix(u.Path, "/")
	switch {
	case base == "":
		base = "/v1"
	case !strings.HasSuffix(base, "/v1"):
		return "", fmt.Errorf("URL path %q names no API: end it in /v1/completions or /v1/chat/completions (or give the server's base, http://HOST:PORT/v1, with %s)", u.Path, n.API)
	}
	api := llm.Chat
	if l.API != "" {
		api = llm.API(l.API)
	}
	u.Path = base + api.Path()
	return api, nil
}

// headers are the given headers with the JSON and event-stream ones; an
// Authorization header from key unless one is given.
func headers(given [][2]string, key string, n Names) ([][2]string, error) {
	h := [][2]string{{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}}
	auth := false
	for _, kv := range given {
		if strings.EqualFold(kv[0], "Content-Type") || strings.EqualFold(kv[0], "Accept") {
			return nil, fmt.Errorf("%s %q: an LLM load sends Content-Type: application/json and Accept: text/event-stream itself", n.Header, kv[0]+": "+kv[1])
		}
		auth = auth || strings.EqualFold(kv[0], "Authorization")
		h = append(h, kv)
	}
	if key != "" && !auth {
		h = append(h, [2]string{"Authorization", "Bearer " + key})
	}
	return h, nil
}

// SetRate makes p and the workload the open model at rate requests/s with
// the load's arrivals (a sweep's step), or the closed model at 0.
func (r *Run) SetRate(p *plan.Plan, rate float64) error {
	p.Rate = rate
	l := r.load
	if rate <= 0 {
		l.Arrivals = ""
	}
	pacer, arrivals, err := arrivalsOf(p, l, r.Spec.Data)
	if err != nil {
		return err
	}
	r.Workload.Pacer, r.Arrivals = pacer, arrivals
	return nil
}

// multiTurn checks a multi-turn load against the rest and sets it up.
func (r *Run) multiTurn(p *plan.Plan, l Load) error {
	n := l.Names
	if !l.MultiTurn {
		switch {
		case l.Turns != 0:
			return fmt.Errorf("%s shapes %s: add %s, or drop it", n.Turns, n.MultiTurn, n.MultiTurn)
		case l.MaxContextTokens != 0:
			return fmt.Errorf("%s bounds %s's histories: add %s, or drop it", n.MaxContext, n.MultiTurn, n.MultiTurn)
		case l.ThinkTime != 0:
			return fmt.Errorf("%s is %s's pause between turns: add %s, or drop it", n.Think, n.MultiTurn, n.MultiTurn)
		}
		return nil
	}
	d := r.Spec.Data
	switch {
	case r.Spec.API != llm.Chat:
		return fmt.Errorf("%s holds conversations: use the chat API (…/v1/chat/completions)", n.MultiTurn)
	case p.Rate > 0 || p.BurstEvery > 0 || l.hasStages() || d != nil && d.Kind == dataset.Azure:
		return fmt.Errorf("%s is the closed model (a user sends a turn when the last one's reply has ended): drop %s, %s, %s and traces; give users with %s", n.MultiTurn, n.Rate, n.Burst, n.Stages, "-c")
	case d != nil && d.Kind != dataset.ShareGPT:
		return fmt.Errorf("%s takes its conversations from %s sharegpt:FILE, or makes them up (random), not from %s", n.MultiTurn, n.Dataset, d.Spec)
	case l.Turns < 0 || l.Turns > 1000:
		return fmt.Errorf("%s %d: from 1 to 1000 user turns", n.Turns, l.Turns)
	case d != nil && l.Turns != 0:
		return fmt.Errorf("%s sets a made-up conversation's turns; a ShareGPT conversation has its own: drop it", n.Turns)
	case l.MaxContextTokens < 0:
		return fmt.Errorf("%s %d: a token count from 0 (no bound)", n.MaxContext, l.MaxContextTokens)
	case l.ThinkTime < 0:
		return fmt.Errorf("%s %v: a pause from 0", n.Think, l.ThinkTime)
	}
	turns := l.Turns
	if turns == 0 {
		turns = DefaultTurns
	}
	r.Spec.Multi = &llm.MultiTurn{Turns: turns, MaxContext: l.MaxContextTokens, Think: l.ThinkTime, Users: p.Connections}
	return nil
}

// DefaultTurns is a made-up conversation's user turns.
const DefaultTurns = 4

// hasStages says whether l has rate stages (Stages or StageList).
func (l Load) hasStages() bool { return l.Stages != "" || len(l.StageList) > 0 }

// stages are l's rate stages: Stages parsed, else StageList.
func (l Load) stages() ([]schedule.Stage, error) {
	if l.Stages == "" {
		return l.StageList, nil
	}
	return ParseStages(l.Stages)
}

// maxStages bounds a stages spec.
const maxStages = 1000

// ParseStages reads rate steps: DURATION:RATE[:WARMUP], comma-separated
// (30s:5,60s:10:10s): RATE requests/s for DURATION, the first WARMUP of
// it left out of the stage's own results. The error says what is wrong
// and what is accepted.
func ParseStages(spec string) ([]schedule.Stage, error) {
	bad := func(why string) ([]schedule.Stage, error) {
		return nil, fmt.Errorf("%q: %s; give DURATION:RATE[:WARMUP],… e.g. 30s:5,60s:10:10s (RATE requests/s for DURATION, WARMUP of it not in the stage's results)", spec, why)
	}
	var out []schedule.Stage
	for _, part := range strings.Split(spec, ",") {
		f := strings.Split(strings.TrimSpace(part), ":")
		if len(f) < 2 || len(f) > 3 {
			return bad(fmt.Sprintf("%q is not DURATION:RATE[:WARMUP]", part))
		}
		d, err := time.ParseDuration(strings.TrimSpace(f[0]))
		if err != nil || d <= 0 {
			return bad(fmt.Sprintf("%q is not a positive duration", f[0]))
		}
		rate, err := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
		if err != nil || !(rate > 0) || rate > 1e7 {
			return bad(fmt.Sprintf("%q is not a rate above 0", f[1]))
		}
		st := schedule.Stage{Duration: d, Target: rate, Step: true}
		if len(f) == 3 {
			w, err := time.ParseDuration(strings.TrimSpace(f[2]))
			if err != nil || w < 0 || w >= d {
				return bad(fmt.Sprintf("warm-up %q is not a duration from 0 and below the stage's %v", f[2], d))
			}
			st.Warmup = w
		}
		out = append(out, st)
		if len(out) > maxStages {
			return bad(fmt.Sprintf("more than %d stages", maxStages))
		}
	}
	return out, nil
}

// data opens the load's dataset and tokenizer.
func (r *Run) data(l Load) error {
	n := l.Names
	spec, err := dataset.ParseSpec(l.Dataset)
	if err != nil {
		return fmt.Errorf("%s %v", n.Dataset, err)
	}
	order, err := dataset.ParseOrder(strings.TrimSpace(l.DatasetOrder))
	if err != nil {
		return fmt.Errorf("%s %v", n.DatasetOrder, err)
	}
	switch {
	case l.DatasetOrder != "" && (!spec.File() || spec.Kind == dataset.Azure):
		return fmt.Errorf("%s %s: only a jsonl or sharegpt dataset has an order to choose (a trace is replayed in its own)", n.DatasetOrder, l.DatasetOrder)
	case l.TraceSpeedup != 0 && spec.Kind != dataset.Azure:
		return fmt.Errorf("%s %g: only an azure trace has times to speed up; give %s azure:FILE", n.TraceSpeedup, l.TraceSpeedup, n.Dataset)
	case l.TraceSpeedup < 0 || math.IsNaN(l.TraceSpeedup) || math.IsInf(l.TraceSpeedup, 0):
		return fmt.Errorf("%s %g: give a factor above 0 (2 replays the trace twice as fast)", n.TraceSpeedup, l.TraceSpeedup)
	}
	o := dataset.Options{Order: order, Seed: l.Seed, Speedup: l.TraceSpeedup}
	if l.Tokenizer != "" {
		tok, err := tokenizer.Load(l.Tokenizer)
		if err != nil {
			return fmt.Errorf("%s %v", n.Tokenizer, err)
		}
		o.Counter, r.Spec.Counter = tok, tok
	}
	if spec.Kind == dataset.Random {
		return nil
	}
	d, err := dataset.Open(spec, o)
	if err != nil {
		return fmt.Errorf("%s %v", n.Dataset, err)
	}
	r.Spec.Data = d
	return nil
}

// Close releases the load's dataset file, once the run is over.
func (r *Run) Close() {
	if d := r.Spec.Data; d != nil {
		d.Close()
	}
}

// arrivalsOf is the open model's schedule (nil: the plan's, or the closed
// model) and its name for the report: a trace's own times, or l's
// arrivals at the plan's rate.
func arrivalsOf(p *plan.Plan, l Load, d *dataset.Dataset) (schedule.Pacer, string, error) {
	n, a := l.Names, strings.TrimSpace(l.Arrivals)
	if d != nil && d.Kind == dataset.Azure {
		if p.Rate > 0 || p.BurstEvery > 0 || a != "" || l.hasStages() {
			return nil, "", fmt.Errorf("%s %s sets every request's arrival time: drop %s, %s, %s and %s (replay it faster or slower with %s)", n.Dataset, d.Spec, n.Rate, n.Burst, n.Arrivals, n.Stages, n.TraceSpeedup)
		}
		return d, "trace", nil
	}
	if l.hasStages() {
		stages, err := l.stages()
		if err != nil {
			return nil, "", fmt.Errorf("%s %v", n.Stages, err)
		}
		if p.Rate > 0 || p.BurstEvery > 0 {
			return nil, "", fmt.Errorf("%s sets the rate stage by stage: drop %s and %s", n.Stages, n.Rate, n.Burst)
		}
		ramp := schedule.NewRampRate(schedule.Ramp{Stages: stages})
		switch {
		case a == "constant":
			return ramp, a, nil
		case a == "poisson" || a == "":
			return schedule.Warped{Unit: schedule.NewArrivals(1, 1, l.Seed), Ramp: ramp}, "poisson", nil
		case strings.HasPrefix(a, "gamma:"):
			b, err := strconv.ParseFloat(strings.TrimPrefix(a, "gamma:"), 64)
			if err == nil && b > 0 && b <= 1000 {
				return schedule.Warped{Unit: schedule.NewArrivals(1, b, l.Seed), Ramp: ramp}, a, nil
			}
		}
		return nil, "", fmt.Errorf("%s %q: give poisson, constant or gamma:B with a burstiness B above 0 (1 is poisson)", n.Arrivals, l.Arrivals)
	}
	switch {
	case p.BurstEvery > 0:
		if a != "" {
			return nil, "", fmt.Errorf("%s shapes %s's arrivals: %s sends bursts of its own; give one of them", n.Arrivals, n.Rate, n.Burst)
		}
		return nil, "bursts", nil
	case p.Rate <= 0:
		if a != "" {
			return nil, "", fmt.Errorf("%s %s needs %s (the open model's rate); without it the closed model sends as responses end", n.Arrivals, a, n.Rate)
		}
		return nil, "", nil
	}
	switch {
	case a == "constant":
		return nil, a, nil
	case a == "poisson" || a == "":
		return schedule.NewArrivals(p.Rate, 1, l.Seed), "poisson", nil
	case strings.HasPrefix(a, "gamma:"):
		b, err := strconv.ParseFloat(strings.TrimPrefix(a, "gamma:"), 64)
		if err == nil && b > 0 && b <= 1000 {
			return schedule.NewArrivals(p.Rate, b, l.Seed), a, nil
		}
	}
	return nil, "", fmt.Errorf("%s %q: give poisson, constant or gamma:B with a burstiness B above 0 (1 is poisson)", n.Arrivals, l.Arrivals)
}

// firstModel asks the server which models it serves (GET …/v1/models) and
// returns the first.
func firstModel(ctx context.Context, p *plan.Plan, n Names) (string, error) {
	models := *p.URL
	models.Path = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(models.Path, "/"), "/completions"), "/chat") + "/models"
	models.RawQuery = ""
	fail := func(why string, err error) (string, error) {
		if err != nil {
			return "", fmt.Errorf("no %s given, and %s (%w): give %s NAME", n.Model, why, err, n.Model)
		}
		return "", fmt.Errorf("no %s given, and %s: give %s NAME", n.Model, why, n.Model)
	}
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return "", err
	}
	topt.RxTimes = false
	ctx, cancel := context.WithTimeout(ctx, p.ConnectTimeout+modelsTimeout)
	defer cancel()
	d, err := transport.NewDialer(ctx, topt)
	if err != nil {
		return fail("the server cannot be reached", err)
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, _, err := d.Dial(ctx)
		return c, err
	}
	tr := &http.Transport{DialContext: dial, DialTLSContext: dial}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, "GET", models.String(), nil)
	if err != nil {
		return fail("its URL is not valid", err)
	}
	for _, h := range p.Headers {
		req.Header.Set(h[0], h[1])
	}
	req.Header.Set("Accept", "application/json")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return fail("GET "+models.Path+" failed", err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode != 200 {
		return fail(fmt.Sprintf("GET %s answered %s", models.Path, resp.Status), nil)
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 4<<20)).Decode(&list); err != nil || len(list.Data) == 0 || list.Data[0].ID == "" {
		return fail(fmt.Sprintf("GET %s listed no model", models.Path), nil)
	}
	return list.Data[0].ID, nil
}

// modelsTimeout bounds the /v1/models request beyond the connect timeout.
const modelsTimeout = 10 * time.Second

// Describe puts what the run asked of the model into res's hail.llm
// (made, with every request failed, when no stream came back at all).
func (r *Run) Describe(res *result.Result) {
	m := report.EnsureLLM(res)
	s := r.Spec
	in, out := s.Input.String(), s.Output.String()
	if d := s.Data; d != nil {
		switch d.Kind {
		case dataset.SharedPrefix:
			in = fmt.Sprintf("%d shared + %s", d.PrefixTokens, in)
		case dataset.JSONL:
			in, out = d.Spec.String(), d.Spec.String()+" (else "+out+")"
		default:
			in, out = d.Spec.String(), d.Spec.String()
		}
	}
	if s.Multi != nil {
		in += " per turn, with the history"
	}
	m.API, m.Model, m.InputAsked, m.OutputAsked, m.Arrivals = string(s.API), s.Model, in, out, r.Arrivals
	m.SetSLO(r.SLO.TTFT, r.SLO.TPOT, r.SLO.E2E)
}

// Config is the load's part of the run's configuration (its "llm" key).
func (r *Run) Config(l Load) map[string]any {
	s := r.Spec
	c := map[string]any{"api": string(s.API), "model": s.Model, "input_tokens": l.InputTokens, "output_tokens": l.OutputTokens,
		"exact": l.Exact, "extra_body": l.ExtraBody, "slo": l.SLO.String(), "arrivals": r.Arrivals, "seed": l.Seed, "dataset": "random"}
	if l.Stages != "" {
		c["stages"] = l.Stages
	}
	if m := s.Multi; m != nil {
		c["multi_turn"] = map[string]any{"turns": m.Turns, "max_context_tokens": m.MaxContext, "think_time_seconds": m.Think.Seconds(), "users": m.Users}
	}
	if d := s.Data; d != nil {
		c["dataset"], c["dataset_records"], c["dataset_skipped"] = d.Spec.String(), d.Records, d.Skipped
		if d.File() && d.Kind != dataset.Azure {
			c["dataset_order"] = orDefault(l.DatasetOrder, "shuffle")
		}
		if d.Kind == dataset.Azure {
			c["trace_speedup"] = l.TraceSpeedup
			if l.TraceSpeedup == 0 {
				c["trace_speedup"] = 1.0
			}
		}
	}
	if l.Tokenizer != "" {
		c["tokenizer"] = l.Tokenizer
	}
	return c
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
