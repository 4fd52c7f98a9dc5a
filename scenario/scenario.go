// Package scenario writes hail's scenario files as Go values: a File is
// what a YAML scenario says (docs/scenarios.md), key by key, so a program
// can build one — a mix of steps, flows, captures, checks, stages,
// thresholds, setup and teardown — without writing YAML. hail.NewScenario
// compiles a File exactly as hail run compiles the file, and reports a
// problem at its place in the File ("steps[1].expect.status: …").
//
// Templates ({{counter}}, {{pick POOL}}, {{var.NAME}}, …) are strings, as
// in the file. Durations are time.Durations. A zero value leaves the key
// out (the file's default) unless its field says otherwise.
package scenario

import (
	"time"

	"gopkg.in/yaml.v3"
)

// File is a scenario file.
type File struct {
	// Name names the scenario in reports.
	Name string `yaml:"name,omitempty"`
	// Base is the origin (and optional path prefix) steps' Paths go to:
	// http://127.0.0.1:8080 or https://api.example.com/v2. Plan.URL
	// replaces it.
	Base string `yaml:"base,omitempty"`
	// Targets name the servers steps may go to (Step.Target), each its
	// URL (grpc:// or grpcs:// for a gRPC server: HTTP/2) and protocol:
	// REST and gRPC, or two REST servers, in one run, each with its own
	// connections, its verdict and its row in Result.Hail.Origins.
	Targets map[string]Target `yaml:"targets,omitempty"`
	// Headers are sent by every step (templates allowed).
	Headers map[string]string `yaml:"headers,omitempty"`
	// Variables are {{var.NAME}}: a string, a number, or a []string (for
	// {{choice var.NAME}}); a value may use other variables and
	// {{env.NAME}}.
	Variables map[string]any `yaml:"variables,omitempty"`
	// Pools are pools of captured values, declared to set their capacity
	// or seed them (capturing into a name creates its pool).
	Pools map[string]Pool `yaml:"pools,omitempty"`
	// Feeds are data files whose rows fill {{feed.NAME.COLUMN}}.
	Feeds map[string]Feed `yaml:"feeds,omitempty"`
	// Steps are the load's steps (at least one).
	Steps []Step `yaml:"steps"`
	// Flows are sequences of steps one virtual user walks in order.
	Flows []Flow `yaml:"flows,omitempty"`
	// Setup and Teardown are steps run in order before the load and after
	// it, each as many times as it repeats, with its Concurrency.
	Setup    []Step `yaml:"setup,omitempty"`
	Teardown []Step `yaml:"teardown,omitempty"`
	// ConnectionStages ramp the connections (closed model), RateStages
	// the rate (open model); a file has at most one kind. Their total is
	// the run's length.
	ConnectionStages []Stage `yaml:"-"`
	RateStages       []Stage `yaml:"-"`
	// Thresholds are pass/fail checks of the run.
	Thresholds []Threshold `yaml:"thresholds,omitempty"`
	// Connections is the closed model's concurrency, or the open model's
	// connection pool (0: 50).
	Connections int `yaml:"connections,omitempty"`
	// Rate is a constant open-model rate, requests per second.
	Rate float64 `yaml:"rate,omitempty"`
	// Duration and Requests bound the run (one of them, or stages, is
	// needed unless the Plan gives one).
	Duration time.Duration `yaml:"duration,omitempty"`
	Requests uint64        `yaml:"requests,omitempty"`
	// Timeout bounds each request; ConnectTimeout each connection setup
	// (0: 5 s).
	Timeout        time.Duration `yaml:"timeout,omitempty"`
	ConnectTimeout time.Duration `yaml:"connect_timeout,omitempty"`
	// DisableKeepAlive sends Connection: close (keepalive: false).
	DisableKeepAlive bool `yaml:"-"`
	// Redirects is how many redirects to follow (0: 3xx are results).
	Redirects int `yaml:"redirects,omitempty"`
	// Engine is "auto", "net" or "uring".
	Engine string `yaml:"engine,omitempty"`
	// Streams is how many requests each connection of an HTTP/2 target
	// (gRPC, grpc://, protocol h2) carries at once (0: one); a Target's
	// own Streams, and Plan.Streams, replace it.
	Streams int `yaml:"streams,omitempty"`
	// Insecure skips TLS certificate verification.
	Insecure bool `yaml:"insecure,omitempty"`
	// Seed fixes the random choices, for a repeatable run.
	Seed uint64 `yaml:"seed,omitempty"`
	// MaxRepeat is the extra repeats x*, x+ and x{n,} may make in
	// {{regex}} (0: 4).
	MaxRepeat int `yaml:"max_repeat,omitempty"`
	// BodyLimit is how many response body bytes captures and checks see
	// (0: 64 KiB).
	BodyLimit int `yaml:"body_limit,omitempty"`
	// GRPC is where gRPC steps' schema comes from (nil: the server's
	// reflection).
	GRPC *Schema `yaml:"grpc,omitempty"`
	// Think is every virtual user's pause after each request (closed
	// model).
	Think Think `yaml:"think,omitempty"`
}

// Step is one kind of request. A setup or teardown step may also Repeat.
type Step struct {
	// Name is required and unique (letters, digits, _, . and -).
	Name string `yaml:"name"`
	// Weight is the step's share of the choices (0: 1, or 0 for a step
	// that is in a flow).
	Weight float64 `yaml:"weight,omitempty"`
	// Target names the server of File.Targets the step goes to ("": the
	// base, or its URL's origin).
	Target string `yaml:"target,omitempty"`
	// Method is the request method (""; GET).
	Method string `yaml:"method,omitempty"`
	// Path is the request target under File.Base; URL an absolute URL of
	// the run's origin. One of them is required (or GRPC).
	Path string `yaml:"path,omitempty"`
	URL  string `yaml:"url,omitempty"`
	// Headers are the step's headers (templates allowed).
	Headers map[string]string `yaml:"headers,omitempty"`
	// Body is the body, a template; BodyJSON a body sent as JSON (maps,
	// slices, strings with templates, numbers, booleans, nil); BodyFile
	// a file sent as is; BodyLines a file whose lines are bodies used in
	// turn. At most one of them.
	Body      string `yaml:"body,omitempty"`
	BodyJSON  any    `yaml:"body_json,omitempty"`
	BodyFile  string `yaml:"body_file,omitempty"`
	BodyLines string `yaml:"body_lines,omitempty"`
	// Capture copies a value from each response into the pool it names.
	Capture map[string]Capture `yaml:"capture,omitempty"`
	// Expect are checks every response must pass.
	Expect *Expect `yaml:"expect,omitempty"`
	// Think is the virtual user's pause after this step's requests.
	Think Think `yaml:"think,omitempty"`
	// GRPC makes the step a gRPC call (in place of Method, Path, URL and
	// the body).
	GRPC *Call `yaml:"grpc,omitempty"`
	// LLM makes the step a streaming request to an OpenAI-compatible
	// inference server, measured as hail llm measures it (in place of
	// Method and the body; Path or URL is its endpoint).
	LLM *LLM `yaml:"llm,omitempty"`
	// Repeat is how many times a setup or teardown step runs (0: once),
	// or RepeatAll.
	Repeat Repeat `yaml:"repeat,omitempty"`
	// Concurrency is how many of a setup or teardown step's requests are
	// in flight at once (0: the load's connections, at most its Repeat).
	Concurrency int `yaml:"concurrency,omitempty"`
}

// Target is a server steps may go to.
type Target struct {
	// URL is its scheme, host and port (and path prefix): http://,
	// https://, or grpc:// and grpcs:// for gRPC (HTTP/2 without and with
	// TLS).
	URL string `yaml:"url"`
	// Protocol is "http1" or "h2" ("": HTTP/1.1 for http and https, h2
	// for grpc and grpcs).
	Protocol string `yaml:"protocol,omitempty"`
	// Streams is how many requests each of its connections carries at
	// once when it speaks HTTP/2 (0: the File's Streams).
	Streams int `yaml:"streams,omitempty"`
}

// Capture says what to capture from a response: exactly one of its
// fields.
type Capture struct {
	// JSON is a path in a JSON body: id, data.items.0.id, $.data[0].id.
	JSON string `yaml:"json,omitempty"`
	// Header is a response header's name.
	Header string `yaml:"header,omitempty"`
	// Regex is a regular expression over the body (its group 1 if it has
	// one, else the whole match).
	Regex string `yaml:"regex,omitempty"`
	// Status captures the status code.
	Status bool `yaml:"status,omitempty"`
	// LLM captures an llm step's stream's "output_tokens" or
	// "input_tokens".
	LLM string `yaml:"llm,omitempty"`
}

// Expect are a step's checks; a response that fails one is an error of
// the check's kind.
type Expect struct {
	// Status are the statuses expected: "201", "2xx", gRPC names ("OK").
	Status []string `yaml:"status,omitempty"`
	// BodyContains are texts the body must contain.
	BodyContains []string `yaml:"body_contains,omitempty"`
	// JSON maps JSON paths to the values they must hold (a string, a
	// number, a bool, or nil for null or absent).
	JSON map[string]any `yaml:"json,omitempty"`
	// Header maps response header names to their values.
	Header map[string]string `yaml:"header,omitempty"`
}

// Call is a gRPC step's call.
type Call struct {
	// Method is package.Service/Method.
	Method string `yaml:"call"`
	// Data is the request: a JSON string, or Go values (maps, slices,
	// strings with templates) written as the file's YAML.
	Data any `yaml:"data,omitempty"`
	// Metadata are sent with the call (templates allowed).
	Metadata map[string]string `yaml:"metadata,omitempty"`
	// StreamCount is the messages per client or bidi stream.
	StreamCount int `yaml:"stream_count,omitempty"`
}

// LLM is what an llm step asks of the model (docs/scenarios.md, "LLM
// steps").
type LLM struct {
	// Model is required: the model's name as the server lists it.
	Model string `yaml:"model"`
	// API is "completions" or "chat" ("": from the path).
	API string `yaml:"api,omitempty"`
	// Prompt is the prompt (completions) or the one user message (chat):
	// a template; "" makes up InputTokens words, or takes Dataset's.
	Prompt string `yaml:"prompt,omitempty"`
	// Dataset is where prompts come from, as hail llm's --dataset
	// (random, shared-prefix:groups=G,prefix=P, jsonl:FILE,
	// sharegpt:FILE); DatasetOrder a file's order (shuffle, sequential,
	// random).
	Dataset      string `yaml:"dataset,omitempty"`
	DatasetOrder string `yaml:"dataset_order,omitempty"`
	// InputTokens and OutputTokens are lengths as hail llm takes them
	// (N, LOW-HIGH, N:WEIGHT,M:WEIGHT, normal:MEAN,SD, lognormal:MEAN,SD;
	// "": 128).
	InputTokens  string `yaml:"input_tokens,omitempty"`
	OutputTokens string `yaml:"output_tokens,omitempty"`
	// Exact asks for exactly OutputTokens (min_tokens, ignore_eos).
	Exact bool `yaml:"exact,omitempty"`
	// SLO are goodput's objectives: "ttft=500ms,tpot=50ms,e2e=10s".
	SLO string `yaml:"slo,omitempty"`
	// Conversation names the conversation the llm steps of one flow
	// iteration share; MaxContextTokens bounds its history (0: none).
	Conversation     string `yaml:"conversation,omitempty"`
	MaxContextTokens int    `yaml:"max_context_tokens,omitempty"`
}

// Schema is where gRPC steps' schema comes from.
type Schema struct {
	// Proto are .proto files, ImportPaths the directories of their
	// imports; Protoset a compiled FileDescriptorSet instead.
	Proto       []string `yaml:"proto,omitempty"`
	ImportPaths []string `yaml:"import_paths,omitempty"`
	Protoset    string   `yaml:"protoset,omitempty"`
}

// Flow is a sequence of steps one virtual user walks in order.
type Flow struct {
	// Name is required and unique.
	Name string `yaml:"name"`
	// Weight is the flow's share of the choices (0: 1).
	Weight float64 `yaml:"weight,omitempty"`
	// Steps are the names of its steps, in order.
	Steps []string `yaml:"steps"`
	// Think is the pause after each of its steps.
	Think Think `yaml:"think,omitempty"`
}

// Stage is one segment of a ramp: over Duration the target moves
// linearly from the previous stage's (0 before the first) to Target, or
// with Step jumps to it at the start. Each stage is reported on its own.
type Stage struct {
	Duration time.Duration
	// Target is connections or requests per second.
	Target float64
	Step   bool
	// Warmup is the stage's first part, left out of its results (shorter
	// than Duration; warmup:).
	Warmup time.Duration
	// Name names the stage in results and thresholds ("": its number;
	// name:).
	Name string
}

// Threshold is a pass/fail check: Expr is METRIC OP VALUE ("p99 < 12ms",
// "error_rate < 0.1%", "rps > 4000").
type Threshold struct {
	Expr string `yaml:"expr"`
	// Step is the step it judges ("": the whole run).
	Step string `yaml:"step,omitempty"`
	// Stage is the stage it judges instead: its number from 1 or its
	// name ("": none).
	Stage string `yaml:"stage,omitempty"`
	// AbortOnFail stops the run as soon as it fails, after AbortAfter
	// (0: 1 s) and 100 requests.
	AbortOnFail bool          `yaml:"abort_on_fail,omitempty"`
	AbortAfter  time.Duration `yaml:"abort_after,omitempty"`
}

// Pool declares a pool of captured values.
type Pool struct {
	// Max is its capacity (0: 1,000,000); Values seed it, as does File (a
	// value per line).
	Max    int      `yaml:"max,omitempty"`
	Values []string `yaml:"values,omitempty"`
	File   string   `yaml:"file,omitempty"`
}

// Feed is a data file whose rows fill {{feed.NAME.COLUMN}}.
type Feed struct {
	// File is CSV with a header row, or JSON Lines.
	File string `yaml:"file"`
	// Order is "sequential" (""), "random" or "unique".
	Order string `yaml:"order,omitempty"`
	// Format is "csv" or "jsonl" when File's name does not say.
	Format string `yaml:"format,omitempty"`
}

// Think is a pause: Min, or a uniform draw from Min to Max.
type Think struct {
	Min, Max time.Duration
}

// IsZero reports whether t is no pause (the key is left out).
func (t Think) IsZero() bool { return t.Min == 0 && t.Max == 0 }

// MarshalYAML writes t as the file does: 100ms, or 50ms..150ms.
func (t Think) MarshalYAML() (any, error) {
	if t.Max <= t.Min {
		return t.Min.String(), nil
	}
	return t.Min.String() + ".." + t.Max.String(), nil
}

// Repeat is how many times a setup or teardown step runs.
type Repeat int

// RepeatAll repeats a step until a pool it takes from ({{take POOL}}) is
// empty.
const RepeatAll Repeat = -1

// MarshalYAML writes r as the file does: a count, or all.
func (r Repeat) MarshalYAML() (any, error) {
	if r == RepeatAll {
		return "all", nil
	}
	return int(r), nil
}

// MarshalYAML writes f as the scenario file it stands for.
func (f File) MarshalYAML() (any, error) {
	type plain File // without this method
	var n yaml.Node
	if err := n.Encode(plain(f)); err != nil {
		return nil, err
	}
	add := func(key string, v any) error {
		var k, val yaml.Node
		k.SetString(key)
		if err := val.Encode(v); err != nil {
			return err
		}
		n.Content = append(n.Content, &k, &val)
		return nil
	}
	if f.DisableKeepAlive {
		if err := add("keepalive", false); err != nil {
			return nil, err
		}
	}
	var stages []map[string]any
	for _, s := range f.ConnectionStages {
		stages = append(stages, s.yaml("connections"))
	}
	for _, s := range f.RateStages {
		stages = append(stages, s.yaml("rate"))
	}
	if stages != nil {
		if err := add("stages", stages); err != nil {
			return nil, err
		}
	}
	return &n, nil
}

// yaml is s as a stage of kind ("connections" or "rate").
func (s Stage) yaml(kind string) map[string]any {
	m := map[string]any{"duration": s.Duration.String(), kind: s.Target}
	if s.Step {
		m["ramp"] = "step"
	}
	if s.Warmup > 0 {
		m["warmup"] = s.Warmup.String()
	}
	if s.Name != "" {
		m["name"] = s.Name
	}
	return m
}
