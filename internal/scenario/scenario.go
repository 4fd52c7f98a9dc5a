// Package scenario holds hail's declarative load scenarios and reads them:
// a YAML file of steps (requests with templates), picked by weight or
// walked as flows per virtual user, with values captured from responses
// into pools, data feeds, checks, think times, stages that ramp
// connections or rates, thresholds, and setup and teardown steps.
//
// Load parses and checks a file completely before anything is sent (every
// problem is reported as FILE:LINE:COLUMN: what was expected, what was
// found). The Scenario then hands the engines one engine.Requests per
// worker (a virtual user, builder.go): Next picks a step and builds its
// request into the worker's own buffer; Done runs the step's checks and
// captures on the response and draws its think time. See
// docs/scenarios.md for the file format.
//
// Its parts live in packages of their own beneath it: template (the {{ }}
// language), values (pools and data feeds), jsonpath (the JSON lookup of
// captures and checks), threshold (pass/fail expressions) and runner
// (which carries a Scenario through internal/run: the load's workload,
// the setup and teardown runs). internal/random generates random values.
//
// The loader is file.go (the document: top-level keys, settings, the order
// of the sections, final checks) and one file per concern beside it:
// file_yaml.go (nodes, positions, key checks), file_values.go (scalar
// readers, variables, base), vars.go (variables that use each other),
// file_pools.go, file_feeds.go, file_step.go (one step), file_request.go
// (its target, headers and body), file_json.go (body_json), file_grpc.go
// (gRPC steps), file_capture.go, file_expect.go, file_flows.go,
// file_phase.go (setup and teardown), file_stages.go and
// file_thresholds.go.
package scenario

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/llm"
	"github.com/hail-loadgen/hail/internal/scenario/template"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"github.com/hail-loadgen/hail/internal/scenario/values"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/result"
)

// Scenario is a loaded, compiled scenario file. Its steps, pools and
// counters are shared by every worker of one run: load it again for
// another run.
type Scenario struct {
	// File is the path it was loaded from.
	File string
	// Name is the file's name key.
	Name string
	// Base is the default target: the origin (and path prefix) of steps
	// that name none (nil when every step names its own).
	Base *url.URL
	// Origins are the servers steps are sent to, each with its protocol
	// (origin.go); the load's first.
	Origins []*Origin
	// Headers are the file's top-level headers (static ones), for redirects.
	Headers [][2]string
	// Settings are the run's parameters from the file.
	Settings Settings
	// Steps are the load's steps, in file order.
	Steps []*Step
	// Flows are the flows, in file order.
	Flows []*Flow
	// Setup are the steps run once, in order, on their own connection
	// before the load (runner.Setup, a PhaseStep each).
	Setup []*Step
	// Teardown are the steps run once, in order, on their own connection
	// after the load (runner.Teardown).
	Teardown []*Step
	// Pools of captured values, by index.
	Pools []*values.Pool
	// Thresholds in file order.
	Thresholds []*threshold.Threshold
	// Feeds are the data files whose rows fill templates.
	Feeds []*values.Feed
	// Files are the paths of the files the scenario read besides itself
	// (feeds, body and pool files, .proto files and import directories),
	// as resolved against its directory, each once, in the order read: what
	// a distributed run ships to its shards.
	Files []string

	captures []string       // capture names, by id
	reported []*values.Pool // the pools steps pick from or take from
	mix      mix
	maxSlots int
	seed     uint64
	think    thinkTime  // the file's default pause after every request (closed model)
	thinkErr error      // the error an open-model run of a file with think times gets
	feedEnd  *feedEnd   // ends the run when unique feeds leave nothing to run
	anyGRPC  bool       // a step of the load, setup or teardown is a gRPC call (HasGRPC)
	anyLLM   bool       // a step of the load is an llm step (StreamConfig)
	convs    int        // the llm steps' conversations, by index
	asked    *llm.Asked // what the llm steps' requests asked for, by request number (expect)
}

// Settings are a scenario's run parameters; command-line flags override them.
type Settings struct {
	// Connections: the closed model's connections, or the open model's
	// connection pool; with connection stages, their maximum.
	Connections int
	// Duration of the run (with stages: their total unless overridden).
	Duration time.Duration
	// Requests ends the run after this many requests (0: no limit).
	Requests uint64
	// Rate is a constant open-model rate (requests/s); 0 for none.
	Rate float64
	// Stages ramp connections or the rate, as StageKind says; a stage's
	// Target is connections or requests/s, from 0 before the first.
	Stages []schedule.Stage
	// StageKind is what the stages ramp: "connections" or "rate".
	StageKind string
	// Timeout bounds each request (0: none).
	Timeout time.Duration
	// ConnectTimeout bounds DNS, connect and TLS (0: 5 s).
	ConnectTimeout time.Duration
	// KeepAlive reuses connections (default true).
	KeepAlive bool
	// Redirects is how many redirects to follow (default 0: 3xx are results).
	Redirects int
	// Engine is net, uring or auto.
	Engine string
	// Streams is how many requests each connection of an HTTP/2 origin
	// (gRPC, grpc://, protocol: h2) carries at once, as -p does for one
	// URL (0 or 1: one); a target's own streams: replaces it. HTTP/1.1
	// origins carry one request per connection.
	Streams int
	// Insecure skips TLS verification.
	Insecure bool
	// Seed fixes the random choices (0: a new seed each run).
	Seed uint64
	// BodyLimit is how many body bytes of each response captures and
	// checks see.
	BodyLimit int
}

// Step is one kind of request of a scenario.
type Step struct {
	// Name is the step's name (reports, flows and thresholds use it).
	Name string
	// Weight is its share of the weighted choice (0: in flows only).
	Weight float64
	// Method is the request's method (POST for a gRPC call).
	Method string
	// Target is the request target's template source (for reports).
	Target string

	head     *template.Template // request line, Host and headers up to the framing headers
	body     *template.Template // templated body; nil otherwise
	bodyLit  []byte             // a fixed body (body or body_file); from engine.SplitAt bytes, shared (shared)
	lines    [][]byte           // body_lines: one body per line, used in turn
	lineNext atomic.Uint64
	variants [][]byte // fully pre-encoded requests when nothing varies (one per line with body_lines)
	sendsCL  bool     // POST, PUT, PATCH: Content-Length even when empty
	close    bool     // Connection: close
	isHead   bool
	repeat   int // setup and teardown: how many times it runs (repeatAll: until its pool is empty)
	origin   int // the origin it is sent to (Scenario.Origins)
	// concurrency: setup and teardown: how many requests at once (0: the
	// load's connections)
	concurrency int

	grpc     *grpcStep          // a gRPC call (grpc.go); nil for HTTP
	llm      *llmStep           // an llm step (llm.go); nil for others
	refs     []template.PoolRef // pool values to resolve before building, slot order
	lasts    []int              // {{last}} capture ids needed
	feeds    []int              // feeds whose row the request needs
	captures []*capture
	checks   []*check               // expect: a response failing one is recorded as its error kind
	think    thinkTime              // the pause after this step's requests (closed model)
	reasons  []string               // per ref then per last: why a yield happened
	stopped  atomic.Pointer[string] // why the step is no longer chosen (its unique feed is used up)
	yields   []atomic.Int64         // per reason
	captured atomic.Int64
	missed   atomic.Int64

	// checksStatus: a check is on the status, so a response whose status
	// (even ≥ 400) passed it was expected; checksBody: a check reads the
	// body. Both are worked out once, at load.
	checksStatus, checksBody bool
}

// Flow is a sequence of steps one virtual user walks in order (login →
// list → get), chosen by weight like a step.
type Flow struct {
	// Name is the flow's name.
	Name string
	// Weight is its share of the weighted choice, beside the steps'.
	Weight float64
	steps  []int
	think  thinkTime // the pause after each of its steps, unless the step has its own
	origin int       // the origin its steps are sent to
}

// Names are the names of steps, in order: a run's Job.Steps.
func Names(steps []*Step) []string {
	out := make([]string, len(steps))
	for i, st := range steps {
		out[i] = st.Name
	}
	return out
}

// BodyLimit is how many response body bytes the captures and checks of
// steps need kept: limit (the file's body_limit), or 0 when none reads
// the body.
func BodyLimit(steps []*Step, limit int) int {
	for _, st := range steps {
		for _, c := range st.captures {
			if c.kind == capJSON || c.kind == capRegex {
				return limit
			}
		}
		for _, c := range st.checks {
			if c.kind == checkBody || c.kind == checkJSON {
				return limit
			}
		}
	}
	return 0
}

// ResponseHeaders are the response headers (lower case) the captures and
// checks of steps read, for the engine's parser (http1.Parser.WantHeaders).
func ResponseHeaders(steps []*Step) []string {
	var out []string
	add := func(h string) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	for _, st := range steps {
		for _, c := range st.captures {
			if c.kind == capHeader {
				add(c.header)
			}
		}
		for _, c := range st.checks {
			if c.kind == checkHeader {
				add(c.header)
			}
		}
	}
	return out
}

// NewRequests returns the request builder of worker (a virtual user).
func (s *Scenario) NewRequests(worker int) engine.Requests { return newVU(s, worker) }

// Annotate adds what only the scenario knows to a finished run's Result:
// each step's yields, captures and check failures, and the pools' and
// feeds' state.
func (s *Scenario) Annotate(res *result.Result) {
	AnnotateSteps(s.Steps, res.Hail.Steps)
	s.annotateLLM(res)
	info := &result.ScenarioInfo{Name: s.Name, File: s.File}
	for _, p := range s.reported {
		info.Pools = append(info.Pools, result.PoolInfo{Name: p.Name, Live: p.Len(), Max: p.Max(), Dropped: p.Dropped()})
	}
	sort.Slice(info.Pools, func(i, j int) bool { return info.Pools[i].Name < info.Pools[j].Name })
	for _, f := range s.Feeds {
		info.Feeds = append(info.Feeds, result.FeedInfo{Name: f.Name, Order: f.Order, Rows: f.Rows(), Used: f.Used(), Refused: f.Refused()})
	}
	if s.feedEnd != nil {
		info.EndedBy = s.feedEnd.reason()
	}
	res.Hail.Scenario = info
}

// PerUser reports whether the scenario keeps state per virtual user (flows walk one user's
// requests in order; {{last}} reads a user's own captured value), so that every connection needs
// its own request builder. The net engine's workers are one connection each anyway; the uring
// engine then gives every connection its own builder (Job.PerConnection).
func (s *Scenario) PerUser() bool {
	if len(s.Flows) > 0 {
		return true
	}
	for _, st := range s.Steps {
		if len(st.lasts) > 0 {
			return true
		}
	}
	return false
}

// Config describes the scenario for the Result's configuration.
func (s *Scenario) Config() map[string]any {
	var steps []map[string]any
	for _, st := range s.Steps {
		steps = append(steps, map[string]any{"name": st.Name, "weight": st.Weight, "method": st.Method, "target": st.Target})
	}
	var flows []map[string]any
	for _, f := range s.Flows {
		var names []string
		for _, i := range f.steps {
			names = append(names, s.Steps[i].Name)
		}
		flows = append(flows, map[string]any{"name": f.Name, "weight": f.Weight, "steps": names})
	}
	var stages []map[string]any
	for _, sg := range s.Settings.Stages {
		ramp := "linear"
		if sg.Step {
			ramp = "step"
		}
		c := map[string]any{"duration_seconds": sg.Duration.Seconds(), s.Settings.StageKind: sg.Target, "ramp": ramp}
		if sg.Warmup > 0 {
			c["warmup_seconds"] = sg.Warmup.Seconds()
		}
		if sg.Name != "" {
			c["name"] = sg.Name
		}
		stages = append(stages, c)
	}
	var ths []string
	for _, t := range s.Thresholds {
		e := t.Expr
		if t.Step != "" {
			e += " [step " + t.Step + "]"
		}
		if t.Stage != "" {
			e += " [stage " + t.Stage + "]"
		}
		ths = append(ths, e)
	}
	cfg := map[string]any{"file": s.File, "name": s.Name, "steps": steps, "flows": flows, "stages": stages, "thresholds": ths}
	for key, list := range map[string][]*Step{"setup": s.Setup, "teardown": s.Teardown} {
		var out []map[string]any
		for _, st := range list {
			step := map[string]any{"name": st.Name, "method": st.Method, "target": st.Target, "repeat": repeatText(st.repeat)}
			if st.concurrency > 0 {
				step["concurrency"] = st.concurrency
			}
			out = append(out, step)
		}
		if out != nil {
			cfg[key] = out
		}
	}
	if s.think.set {
		cfg["think"] = s.think.String()
	}
	var feeds []map[string]any
	for _, f := range s.Feeds {
		feeds = append(feeds, map[string]any{"name": f.Name, "file": f.File, "order": f.Order, "rows": f.Rows()})
	}
	if feeds != nil {
		cfg["feeds"] = feeds
	}
	return cfg
}

// CheckLines describe, for hail run --check, what the file adds to its
// steps and flows: setup and teardown steps, think times, checks and feeds.
func (s *Scenario) CheckLines() []string {
	var out []string
	for _, x := range []struct {
		name  string
		steps []*Step
	}{{"setup", s.Setup}, {"teardown", s.Teardown}} {
		for _, st := range x.steps {
			line := fmt.Sprintf("%-8s %-16s %s %s ×%s", x.name, st.Name, st.Method, st.Target, repeatText(st.repeat))
			if st.concurrency > 0 {
				line += fmt.Sprintf(", %d at once", st.concurrency)
			}
			out = append(out, line)
		}
	}
	if s.think.set {
		out = append(out, "think    "+s.think.String()+" after every request (unless a step or flow says otherwise)")
	}
	for _, st := range append(append(append([]*Step(nil), s.Steps...), s.Setup...), s.Teardown...) {
		if st.think.set {
			out = append(out, fmt.Sprintf("think    %s after step %s", st.think, st.Name))
		}
		for _, c := range st.checks {
			out = append(out, fmt.Sprintf("check    %-16s %s", st.Name, c.desc))
		}
		if st.llm != nil {
			out = append(out, fmt.Sprintf("llm      %-16s %s", st.Name, st.llm.describe()))
		}
	}
	for _, f := range s.Flows {
		if f.think.set {
			out = append(out, fmt.Sprintf("think    %s after each step of flow %s", f.think, f.Name))
		}
	}
	for _, f := range s.Feeds {
		out = append(out, fmt.Sprintf("feed     %-16s %s: %d rows, %s", f.Name, f.File, f.Rows(), f.Order))
	}
	return out
}

// Ended is closed when the unique data feeds leave no step that can run
// (nil without unique feeds): the run then ends (run.Workload.Ended).
func (s *Scenario) Ended() <-chan struct{} {
	if s.feedEnd == nil {
		return nil
	}
	return s.feedEnd.ch
}

// Reseed fixes the seed of the random choices (--seed).
func (s *Scenario) Reseed(seed uint64) {
	s.Settings.Seed = seed
	s.seed = seed
	for _, st := range s.Steps {
		if st.llm != nil {
			st.llm.spec.Seed = seed
		}
	}
}

// AnnotateSteps adds each step's yields, captures and check failures to
// its entry of rs (by name).
func AnnotateSteps(steps []*Step, rs []result.StepResult) {
	for i := range rs {
		r := &rs[i]
		var st *Step
		for _, x := range steps {
			if x.Name == r.Name {
				st = x
			}
		}
		if st == nil {
			continue
		}
		for k := range st.yields {
			if n := st.yields[k].Load(); n > 0 {
				if r.YieldReasons == nil {
					r.YieldReasons = map[string]int64{}
				}
				r.YieldReasons[st.reasons[k]] += n
				r.Yields += n
			}
		}
		if why := st.stopped.Load(); why != nil {
			r.Stopped = *why
		}
		r.Captures, r.CaptureMisses = st.captured.Load(), st.missed.Load()
		for _, c := range st.checks {
			if n := c.failed.Load(); n > 0 {
				if r.CheckFailures == nil {
					r.CheckFailures = map[string]int64{}
				}
				r.CheckFailures[c.desc] += n
			}
		}
	}
}

// ShardFeeds gives shard index of count its part of every unique feed
// (Feed.Partition): together the shards use each row once.
func (s *Scenario) ShardFeeds(index, count int) {
	for _, f := range s.Feeds {
		f.Partition(index, count)
	}
}
