// Package scenario runs hail's declarative load scenarios: a YAML file of
// steps (requests with templates), picked by weight or walked as flows per
// virtual user, with values captured from responses into pools, stages
// that ramp connections or rates, and thresholds that pass or fail the run.
//
// Load parses and checks a file completely before anything is sent (every
// problem is reported as FILE:LINE:COLUMN: what was expected, what was
// found). The Scenario then hands the engines one engine.Requests per
// worker (a virtual user): Next picks a step and builds its request into
// the worker's own buffer; Done runs the step's captures on the response.
// See docs/scenarios.md for the file format.
//
// The loader is file.go (the document: top-level keys, settings, the order
// of the sections, final checks) and one file per concern beside it:
// file_yaml.go (nodes, positions, key checks), file_values.go (scalar
// readers, variables, base), file_pools.go, file_step.go (one step),
// file_request.go (its target, headers and body), file_capture.go,
// file_flows.go, file_stages.go and file_thresholds.go.
package scenario

import (
	"net/url"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"hail/internal/engine"
	"hail/internal/report"
)

// Scenario is a loaded, compiled scenario file. Its steps, pools and
// counters are shared by every worker of one run: load it again for
// another run.
type Scenario struct {
	// File is the path it was loaded from; Name its name key.
	File string
	Name string
	// Base is the origin (and path prefix) every step is sent to.
	Base *url.URL
	// Headers are the file's top-level headers (static ones), for redirects.
	Headers [][2]string
	// Settings are the run's parameters from the file.
	Settings Settings
	// Steps in file order; Flows likewise.
	Steps []*Step
	Flows []*Flow
	// Pools of captured values, by index.
	Pools []*Pool
	// Thresholds in file order.
	Thresholds []*Threshold

	captures []string // capture names, by id
	reported []*Pool  // the pools steps pick from or take from
	mix      mix
	maxSlots int
	seed     uint64
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
	// Stages ramp connections (StageKind "connections") or the rate ("rate").
	Stages    []Stage
	StageKind string
	// Request and connection timeouts.
	Timeout        time.Duration
	ConnectTimeout time.Duration
	// KeepAlive reuses connections (default true).
	KeepAlive bool
	// Redirects is how many redirects to follow (default 0: 3xx are results).
	Redirects int
	// Engine is net, uring or auto.
	Engine string
	// Insecure skips TLS verification.
	Insecure bool
	// Seed fixes the random choices (0: a new seed each run).
	Seed uint64
	// BodyLimit is how many body bytes of each response captures see.
	BodyLimit int
}

// Stage is one stage of a ramp: over Duration, move to Target (connections
// or requests/s) linearly from the previous stage's target (0 before the
// first), or at once when Step is set.
type Stage struct {
	Duration time.Duration
	Target   float64
	Step     bool
}

// Step is one kind of request of a scenario.
type Step struct {
	Name   string
	Weight float64
	Method string
	// Target is the request target's template source (for reports).
	Target string

	head     *Template // request line, Host and headers up to the framing headers
	body     *Template // templated body; nil otherwise
	bodyLit  []byte    // a fixed body (body or body_file)
	lines    [][]byte  // body_lines: one body per line, used in turn
	lineNext atomic.Uint64
	variants [][]byte // fully pre-encoded requests when nothing varies (one per line with body_lines)
	sendsCL  bool     // POST, PUT, PATCH: Content-Length even when empty
	close    bool     // Connection: close
	isHead   bool

	grpc     *grpcStep // a gRPC call (grpc.go); nil for HTTP
	refs     []poolRef // pool values to resolve before building, slot order
	lasts    []int     // {{last}} capture ids needed
	captures []*capture
	reasons  []string       // per ref then per last: why a yield happened
	yields   []atomic.Int64 // per reason
	captured atomic.Int64
	missed   atomic.Int64
}

// Flow is a sequence of steps one virtual user walks in order (login →
// list → get), chosen by weight like a step.
type Flow struct {
	Name   string
	Weight float64
	steps  []int
}

// StepNames are the names of the steps, in order: the run's Job.Steps.
func (s *Scenario) StepNames() []string {
	out := make([]string, len(s.Steps))
	for i, st := range s.Steps {
		out[i] = st.Name
	}
	return out
}

// BodyLimit is how many response body bytes captures need kept (0: none).
func (s *Scenario) BodyLimit() int {
	for _, st := range s.Steps {
		for _, c := range st.captures {
			if c.kind == capJSON || c.kind == capRegex {
				return s.Settings.BodyLimit
			}
		}
	}
	return 0
}

// CaptureHeaders are the response headers (lower case) the captures read,
// for the engine's parser (http1.Parser.WantHeaders).
func (s *Scenario) CaptureHeaders() []string {
	var out []string
	for _, st := range s.Steps {
		for _, c := range st.captures {
			if c.kind == capHeader && !slices.Contains(out, c.header) {
				out = append(out, c.header)
			}
		}
	}
	return out
}

// NewRequests returns the request builder of worker (a virtual user).
func (s *Scenario) NewRequests(worker int) engine.Requests { return newVU(s, worker) }

// Annotate adds what only the scenario knows to a finished run's Result:
// each step's yields and captures, and the pools' state.
func (s *Scenario) Annotate(res *report.Result) {
	for i := range res.Hail.Steps {
		rs := &res.Hail.Steps[i]
		var st *Step
		for _, x := range s.Steps {
			if x.Name == rs.Name {
				st = x
			}
		}
		if st == nil {
			continue
		}
		for k := range st.yields {
			if n := st.yields[k].Load(); n > 0 {
				if rs.YieldReasons == nil {
					rs.YieldReasons = map[string]int64{}
				}
				rs.YieldReasons[st.reasons[k]] += n
				rs.Yields += n
			}
		}
		rs.Captures, rs.CaptureMisses = st.captured.Load(), st.missed.Load()
	}
	info := &report.ScenarioInfo{Name: s.Name, File: s.File}
	for _, p := range s.reported {
		info.Pools = append(info.Pools, report.PoolInfo{Name: p.Name, Live: p.Len(), Max: p.Max(), Dropped: p.Dropped()})
	}
	sort.Slice(info.Pools, func(i, j int) bool { return info.Pools[i].Name < info.Pools[j].Name })
	res.Hail.Scenario = info
}

// perUser reports whether the scenario keeps state per virtual user (flows walk one user's
// requests in order; {{last}} reads a user's own captured value), so that every connection needs
// its own request builder. The net engine's workers are one connection each anyway; the uring
// engine then gives every connection its own builder (Job.PerConnection).
func (s *Scenario) perUser() bool {
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
		stages = append(stages, map[string]any{"duration_seconds": sg.Duration.Seconds(), s.Settings.StageKind: sg.Target, "ramp": ramp})
	}
	var ths []string
	for _, t := range s.Thresholds {
		e := t.Expr
		if t.Step != "" {
			e += " [step " + t.Step + "]"
		}
		ths = append(ths, e)
	}
	return map[string]any{"file": s.File, "name": s.Name, "steps": steps, "flows": flows, "stages": stages, "thresholds": ths}
}

// Reseed fixes the seed of the random choices (--seed).
func (s *Scenario) Reseed(seed uint64) {
	s.Settings.Seed = seed
	s.seed = seed
}
