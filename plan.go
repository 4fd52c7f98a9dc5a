package hail

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/textproto"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/llmload"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	iscenario "github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"github.com/hail-loadgen/hail/internal/schedule"
)

// Plan describes one load test: a request to one URL, a Scenario, a gRPC
// call, or an LLM inference load, and how much of it to send, how fast and how. The zero value
// of every field but URL (or Scenario) is usable: 50 connections, 200
// requests, GET, the closed model. With a Scenario, a zero field leaves
// the scenario's own setting, and a set one replaces it as hail run's
// flags do.
type Plan struct {
	// URL is the target, http:// or https://. With Scenario it replaces
	// the scenario's base (optional); with GRPC it is the server, http://
	// for plaintext h2c or https:// for TLS (http://127.0.0.1:9090).
	URL string
	// Method is the request method; "" is GET.
	Method string
	// Header holds extra request headers (sent in name order).
	Header map[string][]string
	// Body is the request body.
	Body []byte
	// Host overrides the Host header, the TLS server name and a gRPC
	// call's :authority.
	Host string
	// Compression sends Accept-Encoding: gzip, deflate, br (bodies are
	// counted as received, not decoded).
	Compression bool

	// Scenario runs a scenario: its steps, flows, stages, thresholds,
	// setup and teardown (in place of Method, Header and Body).
	Scenario *Scenario
	// GRPC calls a gRPC method, as hail grpc does (in place of Method,
	// Header and Body; the calls speak HTTP/2).
	GRPC *GRPCCall
	// LLM loads an OpenAI-compatible inference server with streaming
	// completions, as hail llm does (in place of Method and Body; URL is
	// the API's, …/v1/chat/completions or …/v1/completions, or the
	// server's base). Result.Hail.LLM holds what its streams measured.
	LLM *LLMLoad

	// SSE reads every 2xx response as server-sent events (a response
	// whose Content-Type is text/event-stream is read so anyway):
	// Result.Hail.Stream then has the time to first event, the gaps
	// between events, stalls and hail's read lag (docs/llm.md).
	SSE bool
	// IdleTimeout fails a stream that goes this long without an event; 0
	// is 30 s, negative never.
	IdleTimeout time.Duration
	// StreamDrain lets streams still running when Duration ends go on
	// this long, then cuts them and counts them as truncated (cut off,
	// not errors); 0 is 2 s, negative cuts them at once.
	StreamDrain time.Duration

	// Requests is how many requests to send; with Duration, the run stops
	// at whichever comes first. Both zero (and no stages): 200 requests.
	Requests uint64
	// Duration ends the run after this long. With stages, 0 is their
	// total; a shorter Duration cuts them, a longer one holds the last
	// target.
	Duration time.Duration
	// Connections is how many connections send at once (the open model's
	// pool of them); 0 is 50. With Streams, each carries Streams requests
	// at once.
	Connections int
	// Rate, if set, is the open model: this many requests per second in
	// total, at fixed intended times that do not wait for responses, and
	// latency counts from each request's intended time.
	Rate float64
	// RateStages ramp the open model's rate (requests per second) over
	// time, as k6's ramping-arrival-rate; ConnectionStages ramp the closed
	// model's connections, as k6's ramping-vus (the peak is Connections).
	// At most one kind, without Rate.
	RateStages       []Stage
	ConnectionStages []Stage
	// BurstEvery and BurstSize send BurstSize requests (0: 1) at once
	// every BurstEvery: the open model in bursts (without Rate).
	BurstEvery time.Duration
	BurstSize  uint64
	// WaitOngoing lets requests in flight when the run stops (Duration or
	// the stages' end, a cancelled context) finish, within Timeout (else 30 s),
	// instead of aborting them.
	WaitOngoing bool
	// PacingGranularity is the shortest time between two of the open
	// model's wake-ups to send: requests due in between leave together,
	// each at most that late (its own lateness, counted in its latency).
	// 0 is 100 µs; negative wakes for every request.
	PacingGranularity time.Duration
	// Thresholds are pass/fail checks of the run (a scenario's are added
	// to its own); Run returns a *ThresholdError when one fails.
	Thresholds []Threshold
	// AbortOnFail makes every threshold (a scenario's too) stop the run as
	// soon as it fails.
	AbortOnFail bool
	// Seed fixes a scenario's random choices for a repeatable run (0: the
	// scenario's, else random).
	Seed uint64

	// Timeout bounds each request, redirects included; 0 is none.
	Timeout time.Duration
	// ConnectTimeout bounds each connection setup (name lookup, connect,
	// TLS); 0 is 5 s.
	ConnectTimeout time.Duration
	// MaxRedirects is how many redirects a request follows; 0 follows
	// none (3xx responses are results).
	MaxRedirects int
	// DisableKeepAlive opens a new connection for every request.
	DisableKeepAlive bool

	// HTTPVersion is "" or "1.1", "1.0", "2" (h2 over TLS, h2c over
	// http://) or "3" (QUIC).
	HTTPVersion string
	// Streams is the number of requests in flight per HTTP/2 or HTTP/3
	// connection (a gRPC run's calls per connection); 0 is 1. With a
	// Scenario it applies to each connection of its HTTP/2 targets,
	// replacing the scenario's own streams.
	Streams int
	// Engine is EngineAuto (""), EngineNet or EngineURing.
	Engine Engine
	// UnixSocket sends every request over this unix socket (the URL then
	// only names the Host).
	UnixSocket string
	// ConnectTo sends connections for "host:port" to another
	// "host:port", keeping the URL's Host header and TLS name.
	ConnectTo map[string]string
	// Proxy is an HTTP(S) proxy's URL, its credentials in its user info.
	Proxy string
	// Insecure skips TLS certificate verification; CACert adds a trusted
	// CA certificate file.
	Insecure bool
	CACert   string
	// Cert and Key are a TLS client certificate and its key (PEM files;
	// Cert may hold both).
	Cert, Key string
	// ServerName is the TLS server name to verify the certificate against
	// (ghz's --cname), instead of the URL's host or Host.
	ServerName string
}

// Stage is one segment of a ramp: over Duration the target moves linearly
// from the previous stage's (0 before the first) to Target, or with Step
// jumps to it at the start. A zero Duration jumps. Each stage is reported
// on its own (Result.Hail.Stages).
type Stage struct {
	Duration time.Duration
	// Target is requests per second (RateStages) or connections
	// (ConnectionStages).
	Target float64
	Step   bool
	// Warmup is the stage's first part, whose requests count in the run
	// but not in the stage's results (a plateau measured once settled);
	// shorter than Duration.
	Warmup time.Duration
	// Name names the stage in its results and thresholds (Threshold.Stage);
	// "" leaves it its number. It needs a letter.
	Name string
}

// Threshold is a pass/fail check of a run: Expr is METRIC OP VALUE, as in
// a scenario file ("p99 < 12ms", "error_rate < 0.1%", "rps > 4000";
// docs/scenarios.md). Latency metrics judge every sent request, a failed
// one at its elapsed time; add _ok (p99_ok) for the responses only.
type Threshold struct {
	Expr string
	// Step is the scenario step it judges ("": the whole run).
	Step string
	// Stage is the stage it judges instead: its number from 1 ("2") or
	// its Name ("": none; not with Step).
	Stage string
	// AbortOnFail stops the run as soon as it fails, after AbortAfter (0:
	// 1 s) and 100 requests.
	AbortOnFail bool
	AbortAfter  time.Duration
}

// Engine chooses how requests are sent.
type Engine string

// The engines. EngineAuto picks io_uring where it can run (Linux, plain
// HTTP/1.x) and the portable engine otherwise; HTTP/2 and HTTP/3 have
// engines of their own.
const (
	EngineAuto  Engine = ""
	EngineNet   Engine = "net"
	EngineURing Engine = "uring"
)

// Validate reports what is wrong with p (a *FieldError, or for a
// Scenario a *ScenarioError), or nil. It sends no request: a GRPC call's
// method and data are checked against its schema by Run, before the load
// (a scenario's gRPC steps without a schema ask their server by
// reflection, as LoadScenario does).
func (p Plan) Validate() error {
	j, err := p.compile(context.Background(), false)
	if err != nil {
		return err
	}
	defer j.close()
	return public(j.plan.Validate())
}

// close releases what compile opened (an LLM load's dataset file).
func (j *job) close() {
	if j.llm != nil {
		j.llm.Close()
	}
}

// job is a compiled Plan: what run.Run needs, and what to do around it.
type job struct {
	plan       *plan.Plan
	workload   *run.Workload // nil: the plan's own request
	thresholds []*threshold.Threshold
	sc         *iscenario.Scenario // a scenario's, or nil
	grpcName   string              // a gRPC call's method, or ""
	grpcKind   string              // and its streaming kind
	llm        *llmload.Run        // an LLM load's, or nil
	config     map[string]any
	stageList  []schedule.Stage // the stages a threshold may name
}

// compile turns p into a job. connect says it may talk to a server (to
// ask a gRPC server for its schema; ctx bounds it); Validate compiles
// without.
func (p Plan) compile(ctx context.Context, connect bool) (*job, error) {
	modes := 0
	for _, set := range []bool{p.Scenario != nil, p.GRPC != nil, p.LLM != nil} {
		if set {
			modes++
		}
	}
	switch {
	case modes > 1:
		return nil, &FieldError{Field: "LLM", Problem: "a Plan runs a Scenario, a gRPC call or an LLM load: give one"}
	case p.Scenario != nil:
		return p.compileScenario(ctx, connect)
	}
	ip, err := p.internal()
	if err != nil {
		return nil, err
	}
	j := &job{plan: ip}
	if p.GRPC != nil {
		if err := p.GRPC.prepare(ctx, j, p, connect); err != nil {
			return nil, err
		}
	}
	if p.LLM != nil {
		if err := p.LLM.prepare(ctx, j, p, connect); err != nil {
			return nil, err
		}
	}
	if err := p.stages(j, nil); err != nil {
		return nil, err
	}
	if err := p.addThresholds(j, nil); err != nil {
		return nil, err
	}
	j.config = p.configOf(ip, j)
	return j, nil
}

// internal turns p into the internal plan, with the command's defaults.
func (p Plan) internal() (*plan.Plan, error) {
	u, err := url.Parse(p.URL)
	if err != nil || p.URL == "" {
		return nil, &FieldError{Field: "URL", Value: strconv.Quote(p.URL), Problem: "not a URL: write it like http://127.0.0.1:8080/path"}
	}
	ip := &plan.Plan{URL: u, Method: p.Method, Host: p.Host, Compression: p.Compression, Requests: p.Requests, Duration: p.Duration,
		Connections: p.Connections, Rate: p.Rate, BurstEvery: p.BurstEvery, BurstSize: p.BurstSize, WaitOngoing: p.WaitOngoing,
		PacingGranularity: p.PacingGranularity, Timeout: p.Timeout, ConnectTimeout: p.ConnectTimeout, MaxRedirects: p.MaxRedirects,
		KeepAlive: !p.DisableKeepAlive, Streams: p.Streams, Engine: plan.EngineName(p.Engine), UnixSocket: p.UnixSocket,
		Insecure: p.Insecure, CACert: p.CACert, Cert: p.Cert, Key: p.Key, ServerName: p.ServerName,
		SSE: p.SSE, IdleTimeout: p.IdleTimeout, StreamDrain: p.StreamDrain}
	if ip.Method == "" {
		ip.Method = "GET"
	}
	if ip.Connections == 0 && len(p.ConnectionStages) == 0 {
		ip.Connections = 50
	}
	if ip.Requests == 0 && ip.Duration == 0 && len(p.RateStages)+len(p.ConnectionStages) == 0 {
		ip.Requests = 200
	}
	if ip.ConnectTimeout == 0 {
		ip.ConnectTimeout = plan.DefaultConnectTimeout
	}
	if ip.Engine == "" {
		ip.Engine = plan.EngineAuto
	}
	if ip.BurstEvery > 0 && ip.BurstSize == 0 {
		ip.BurstSize = 1
	}
	switch p.HTTPVersion {
	case "", "1.1":
	case "1.0":
		ip.HTTP10 = true
	case "2", "3":
		ip.HTTPVersion = plan.Proto(p.HTTPVersion)
	default:
		return nil, &FieldError{Field: "HTTPVersion", Value: strconv.Quote(p.HTTPVersion), Problem: `choose "1.0", "1.1", "2" or "3"`}
	}
	if err := p.transport(ip); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(p.Header))
	for k := range p.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range p.Header[k] {
			ip.Headers = append(ip.Headers, [2]string{k, v})
		}
	}
	if len(p.Body) > 0 {
		ip.Bodies = [][]byte{p.Body}
	}
	return ip, nil
}

// transport sets ip's proxy and connect-to overrides from p.
func (p Plan) transport(ip *plan.Plan) error {
	if p.Proxy != "" {
		u, err := url.Parse(p.Proxy)
		if err != nil || u.Host == "" {
			return &FieldError{Field: "Proxy", Value: strconv.Quote(p.Proxy), Problem: "not a proxy URL: write it like http://user:pass@proxy:3128"}
		}
		ip.Proxy = u
	}
	froms := make([]string, 0, len(p.ConnectTo))
	for from := range p.ConnectTo {
		froms = append(froms, from)
	}
	sort.Strings(froms)
	for _, from := range froms {
		to := p.ConnectTo[from]
		h, hp, err1 := hostPort(from)
		th, tp, err2 := hostPort(to)
		if err := errors.Join(err1, err2); err != nil {
			return &FieldError{Field: "ConnectTo", Value: fmt.Sprintf("%q: %q", from, to), Problem: "write each as \"host:port\": \"host:port\""}
		}
		ip.ConnectTo = append(ip.ConnectTo, plan.ConnectTo{Host: h, Port: hp, ToHost: th, ToPort: tp})
	}
	return nil
}

func hostPort(s string) (string, int, error) {
	h, ps, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", ps)
	}
	return h, port, nil
}

// stages checks p's stages and makes them j's schedule: a ramped rate or
// number of connections, as a scenario's stages are (settings: a
// scenario's, which p's stages replace; nil for a plain plan).
func (p Plan) stages(j *job, settings *iscenario.Settings) error {
	kind, list, field := "", []Stage(nil), ""
	switch {
	case len(p.RateStages) > 0 && len(p.ConnectionStages) > 0:
		return &FieldError{Field: "ConnectionStages", Problem: "give rate stages (open model) or connection stages (closed model), not both"}
	case len(p.RateStages) > 0:
		kind, list, field = "rate", p.RateStages, "RateStages"
	case len(p.ConnectionStages) > 0:
		kind, list, field = "connections", p.ConnectionStages, "ConnectionStages"
	}
	switch {
	case kind == "rate" && p.Rate > 0:
		return &FieldError{Field: "Rate", Problem: "RateStages set the rate: give one of them"}
	case kind != "" && p.BurstEvery > 0:
		return &FieldError{Field: "BurstEvery", Problem: field + " set the schedule: give one of them"}
	case kind == "connections" && p.Connections > 0:
		return &FieldError{Field: "Connections", Problem: "ConnectionStages set the connections (their peak): give one of them"}
	case kind == "connections" && p.Rate > 0:
		return &FieldError{Field: "Rate", Problem: "connection stages are the closed model, Rate the open one: give RateStages instead"}
	}
	var total time.Duration
	var peak float64
	for i, s := range list {
		switch {
		case s.Duration < 0:
			return &FieldError{Field: fmt.Sprintf("%s[%d].Duration", field, i), Value: s.Duration.String(), Problem: "must not be negative"}
		case s.Target < 0 || math.IsNaN(s.Target) || math.IsInf(s.Target, 0):
			return &FieldError{Field: fmt.Sprintf("%s[%d].Target", field, i), Value: fmt.Sprint(s.Target), Problem: "must be a number ≥ 0"}
		case s.Warmup < 0 || s.Warmup > 0 && s.Warmup >= s.Duration:
			return &FieldError{Field: fmt.Sprintf("%s[%d].Warmup", field, i), Value: s.Warmup.String(), Problem: "must be ≥ 0 and shorter than the stage's Duration (" + s.Duration.String() + ")"}
		case s.Name != "" && strings.Trim(s.Name, "0123456789") == "":
			return &FieldError{Field: fmt.Sprintf("%s[%d].Name", field, i), Value: strconv.Quote(s.Name), Problem: "needs a letter: a number names a stage by its position already"}
		case s.Name != "" && slices.ContainsFunc(list[:i], func(o Stage) bool { return o.Name == s.Name }):
			return &FieldError{Field: fmt.Sprintf("%s[%d].Name", field, i), Value: strconv.Quote(s.Name), Problem: "names an earlier stage too: give each its own"}
		}
		total += s.Duration
		peak = max(peak, s.Target)
	}
	if kind != "" && total <= 0 {
		return &FieldError{Field: field, Problem: "they last 0s in all: give a stage a Duration > 0"}
	}
	if kind != "" && peak <= 0 {
		return &FieldError{Field: field, Problem: "every Target is 0: give a stage a Target > 0"}
	}
	if settings == nil {
		if kind == "" {
			return nil
		}
		ip := j.plan
		settings = &iscenario.Settings{Connections: ip.Connections, Duration: ip.Duration, Requests: ip.Requests}
	}
	if kind != "" {
		settings.Stages, settings.StageKind, settings.Rate = nil, kind, 0
		for _, s := range list {
			settings.Stages = append(settings.Stages, schedule.Stage{Duration: s.Duration, Target: s.Target, Step: s.Step, Warmup: s.Warmup, Name: s.Name})
		}
	}
	j.stageList = settings.Stages
	if j.sc != nil { // a scenario's plan is made from its settings
		return nil
	}
	sched := settings.Schedule()
	ip := j.plan
	ip.Connections, ip.Duration = sched.Connections, sched.Duration
	if j.workload == nil {
		j.workload = &run.Workload{}
	}
	if j.llm == nil || kind != "rate" { // an LLM load's pacer has its arrivals' gaps through the stages (llmload)
		j.workload.Pacer = sched.Pacer
	}
	j.workload.Connections, j.workload.Stages = sched.ConnRamp, sched.Stages
	return nil
}

// addThresholds parses p's thresholds and adds them to j's (and to a
// scenario's, whose steps they may name; sc is nil for a plain plan).
func (p Plan) addThresholds(j *job, sc *iscenario.Scenario) error {
	for i, t := range p.Thresholds {
		field := fmt.Sprintf("Thresholds[%d]", i)
		th, err := threshold.Parse(t.Expr)
		if err != nil {
			return &FieldError{Field: field, Problem: err.Error()}
		}
		th.AbortOnFail, th.AbortAfter = t.AbortOnFail || p.AbortOnFail, t.AbortAfter
		if th.AbortAfter == 0 {
			th.AbortAfter = threshold.DefaultAbortAfter
		}
		if t.Step != "" {
			idx := -1
			if sc != nil {
				for k, st := range sc.Steps {
					if st.Name == t.Step {
						idx = k
					}
				}
			}
			if idx < 0 {
				return &FieldError{Field: field + ".Step", Value: strconv.Quote(t.Step), Problem: "names no step of the load: a threshold's Step is a scenario step's name"}
			}
			th.OnStep(t.Step, idx)
		}
		if t.Stage != "" {
			if t.Step != "" {
				return &FieldError{Field: field + ".Stage", Value: strconv.Quote(t.Stage), Problem: "give Step or Stage: a threshold judges one step over the run, or every step in one stage"}
			}
			idx := stageIndex(j.stageList, t.Stage)
			if idx < 0 {
				return &FieldError{Field: field + ".Stage", Value: strconv.Quote(t.Stage), Problem: fmt.Sprintf("names no stage of the run: give a stage's number (1 to %d) or its Name", len(j.stageList))}
			}
			th.OnStage(t.Stage, idx)
		}
		j.thresholds = append(j.thresholds, th)
	}
	if p.AbortOnFail {
		for _, t := range j.thresholds {
			t.AbortOnFail = true
		}
	}
	if check := threshold.AbortCheck(j.thresholds); check != nil {
		if j.workload == nil {
			j.workload = &run.Workload{}
		}
		j.workload.Check = check
	}
	return nil
}

// configOf is the run's configuration as its Result records it (secret
// header values and the URL's credentials left out).
func (p Plan) configOf(ip *plan.Plan, j *job) map[string]any {
	u := *ip.URL
	u.User = nil
	hdr := map[string]string{}
	for _, h := range ip.Headers {
		v := h[1]
		if secretHeader(h[0]) {
			v = "[redacted]"
		}
		hdr[h[0]] = v
	}
	c := map[string]any{"url": u.String(), "method": ip.Method, "headers": hdr, "connections": ip.Connections,
		"requests": ip.Requests, "duration_seconds": ip.Duration.Seconds(), "rate": ip.Rate, "model": model(ip, j.workload),
		"burst_delay_seconds": ip.BurstEvery.Seconds(), "burst_rate": ip.BurstSize, "wait_ongoing": ip.WaitOngoing,
		"timeout_seconds": ip.Timeout.Seconds(), "connect_timeout_seconds": ip.ConnectTimeout.Seconds(), "redirects": ip.MaxRedirects,
		"keepalive": ip.KeepAlive, "http_version": httpVersion(ip), "streams_per_connection": ip.StreamsPerConn(), "engine": ip.Engine,
		"bodies": len(ip.Bodies), "api": "go"}
	if j.grpcName != "" {
		c["call"], c["kind"] = j.grpcName, j.grpcKind
	}
	if ip.SSE {
		c["sse"] = true
	}
	if ip.SSE || ip.Idle() != plan.DefaultIdleTimeout || ip.Drain() != plan.DefaultStreamDrain {
		c["idle_timeout_seconds"], c["stream_drain_seconds"] = ip.Idle().Seconds(), ip.Drain().Seconds()
	}
	if j.llm != nil {
		c["llm"] = j.llm.Config(p.LLM.load())
	}
	if len(p.RateStages) > 0 {
		c["rate_stages"] = stagesConfig(p.RateStages)
	}
	if len(p.ConnectionStages) > 0 {
		c["connection_stages"] = stagesConfig(p.ConnectionStages)
	}
	if len(j.thresholds) > 0 {
		var ths []string
		for _, t := range j.thresholds {
			ths = append(ths, t.Expr)
		}
		c["thresholds"] = ths
	}
	return c
}

// httpVersion is the HTTP version p speaks, as configurations write it.
func httpVersion(p *plan.Plan) string {
	switch {
	case p.HTTPVersion != plan.HTTP1:
		return string(p.HTTPVersion)
	case p.HTTP10:
		return "1.0"
	}
	return "1.1"
}

func stagesConfig(ss []Stage) []map[string]any {
	var out []map[string]any
	for _, s := range ss {
		c := map[string]any{"duration_seconds": s.Duration.Seconds(), "target": s.Target, "step": s.Step}
		if s.Warmup > 0 {
			c["warmup_seconds"] = s.Warmup.Seconds()
		}
		if s.Name != "" {
			c["name"] = s.Name
		}
		out = append(out, c)
	}
	return out
}

// stageIndex is the index of the stage ref names among stages (its number
// from 1, or its name), or -1.
func stageIndex(stages []schedule.Stage, ref string) int {
	for i, s := range stages {
		if s.Name != "" && s.Name == ref {
			return i
		}
	}
	if k, err := strconv.Atoi(ref); err == nil && k >= 1 && k <= len(stages) {
		return k - 1
	}
	return -1
}

func model(p *plan.Plan, w *run.Workload) string {
	if run.OpenModel(p, w) {
		return "open"
	}
	return "closed"
}

// secretHeader reports whether a header's value stays out of the Result's
// configuration.
func secretHeader(name string) bool {
	switch textproto.CanonicalMIMEHeaderKey(name) {
	case "Authorization", "Cookie", "Proxy-Authorization", "Set-Cookie":
		return true
	}
	return false
}

// publicNames are the internal plan's fields as Plan names them.
var publicNames = map[string]string{"Headers": "Header", "Bodies": "Body", "KeepAlive": "DisableKeepAlive",
	"HTTP10": "HTTPVersion", "HTTP2": `HTTPVersion "2" or "3"`, "Vsock": "UnixSocket", "VsockUDS": "UnixSocket",
	"ProxyHeaders": "Proxy"}

// public renders an internal plan error with Plan's field names.
func public(err error) error {
	var fe *plan.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	r := fe.Renamed(func(f string) string {
		if n, ok := publicNames[f]; ok {
			return n
		}
		return f
	})
	return &FieldError{Field: r.Field, Value: r.Value, Problem: r.Problem}
}
