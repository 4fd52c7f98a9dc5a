// The scenario file as a document: Load and Parse, the loader's state, the
// top-level keys and run settings, the order in which the sections compile,
// and the final checks. The sections themselves live in file_*.go.

package scenario

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/llm"
	"github.com/hail-loadgen/hail/internal/random"
	"github.com/hail-loadgen/hail/internal/scenario/template"
)

// Error is a problem in a scenario file, at a line and column (1-based).
type Error struct {
	File   string // the file's path as given
	Line   int    // 1-based
	Column int    // 1-based
	Msg    string // what was expected and what was found
}

// Error is the one line hail prints: FILE:LINE:COLUMN: message.
func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg) }

// LoadOptions are command-line values that change how a file compiles.
type LoadOptions struct {
	// Vars override (or add) variables: --var NAME=VALUE.
	Vars map[string]string
	// Base overrides the file's base URL (--base).
	Base string
	// Targets override the URLs of the file's targets by name (--target
	// NAME=URL).
	Targets map[string]string
	// Env looks up environment variables (default os.LookupEnv).
	Env func(string) (string, bool)
	// LengthGiven says the command line bounds the run (-z or -n), so the
	// file need not.
	LengthGiven bool
	// GRPC finds the schema of gRPC steps when the file names none (hail
	// run asks the server at base by reflection); insecure is the file's
	// (or --insecure's) TLS verification setting.
	GRPC func(target *url.URL, insecure bool) (grpccall.Source, error)
	// FileLimit bounds the files read into memory: the scenario, body_file,
	// body_lines, pool, feed and protoset files (--body-file-limit; 0:
	// bodyfile.DefaultLimit).
	FileLimit int64
}

// Limits of the format.
const (
	maxActivities    = 256
	defaultBodyLimit = 64 << 10
	maxBodyLimit     = 64 << 20
	maxConnections   = 1_000_000
	maxStreams       = 100_000
)

var (
	topKeys = []string{"name", "base", "targets", "headers", "variables", "pools", "steps", "flows", "stages", "thresholds",
		"connections", "rate", "duration", "requests", "timeout", "connect_timeout", "keepalive", "redirects",
		"engine", "streams", "insecure", "seed", "max_repeat", "body_limit", "grpc", "think", "feeds", "setup", "teardown"}
	stepKeys      = []string{"name", "weight", "target", "method", "url", "path", "headers", "body", "body_json", "body_file", "body_lines", "capture", "grpc", "llm", "expect", "think"}
	flowKeys      = []string{"name", "weight", "steps", "think"}
	phaseKeys     = []string{"name", "target", "method", "url", "path", "headers", "body", "body_json", "body_file", "body_lines", "capture", "grpc", "expect", "think", "repeat", "concurrency"}
	stageKeys     = []string{"duration", "connections", "rate", "ramp", "warmup", "name"}
	captureKeys   = []string{"json", "header", "regex", "status", "llm"}
	poolKeys      = []string{"max", "values", "file"}
	thresholdKeys = []string{"expr", "step", "stage", "abort_on_fail", "abort_after"}
	nameRE        = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
)

// Load reads and compiles the scenario file at path.
func Load(path string, o LoadOptions) (*Scenario, error) {
	data, err := bodyfile.Read(path, o.FileLimit)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, o)
}

type loader struct {
	file  string
	dir   string
	src   []string // the file's lines, for positions inside block scalars
	o     LoadOptions
	s     *Scenario
	env   *template.Env
	nodes map[string]*yaml.Node // top-level values by key
	keys  map[string]*yaml.Node // top-level keys by key
	root  *yaml.Node

	poolIdx    map[string]int
	poolUsed   []bool
	seeded     []bool
	capIdx     map[string]int
	stepIdx    map[string]int
	stepNodes  []*yaml.Node
	weightSet  []bool
	stepInFlow []bool
	firstNeeds []bool                  // the step needs a captured value before it can run
	grpcSrc    grpccall.Source         // the schema of gRPC steps from the file's grpc: key, once one needed it
	grpcSrcs   map[int]grpccall.Source // the schema of each origin's gRPC steps by reflection, once one needed it
	names      map[string]*yaml.Node   // every step's name: load, setup and teardown
	phaseNodes map[string][]*yaml.Node // the setup and teardown steps
	phase      bool                    // compiling a setup or teardown step
	anyGRPC    bool                    // a step is a gRPC call: the run speaks HTTP/2
	anyLLM     bool                    // a step is an llm step
	convIdx    map[string]int          // the llm steps' conversations, by name
	thinkNode  *yaml.Node              // a think time of the load (file, flow or step), for the open-model check
	flowNodes  []*yaml.Node            // the flows, in order

	// targets and origins (file_targets.go)
	targetNodes   map[string]*yaml.Node // the targets' keys, by name
	targetURL     map[string]*url.URL   // the targets' URLs (http or https), by name
	targetH2      map[string]bool       // the target speaks HTTP/2 (grpc://, protocol: h2)
	targetHTTP1   map[string]bool       // the target says protocol: http1
	targetStreams map[string]int        // the target's streams: (0: the file's)
	streamsNodes  map[string]*yaml.Node // where each target's streams: is
	baseTarget    string                // base names this target
	originIdx     map[string]int        // origins by target name or scheme://host
	originHTTP1   []bool                // per origin: its target says protocol: http1
	stepOrigin    map[*yaml.Node]int    // each step's origin (-1: none), by its node
	cur           int                   // the origin of the step being compiled

	headers     []headerNode // the file's headers (fileHeaders), once read
	headersErr  error        // their problem, if any
	headersRead bool
}

// Parse compiles a scenario from data; file names it in messages and
// anchors relative paths.
func Parse(file string, data []byte, o LoadOptions) (*Scenario, error) {
	if o.Env == nil {
		o.Env = os.LookupEnv
	}
	l := &loader{file: file, dir: filepath.Dir(file), o: o, src: strings.Split(string(data), "\n"),
		s: &Scenario{File: file}, nodes: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{},
		poolIdx: map[string]int{}, capIdx: map[string]int{}, stepIdx: map[string]int{}, convIdx: map[string]int{},
		names: map[string]*yaml.Node{}, phaseNodes: map[string][]*yaml.Node{},
		targetNodes: map[string]*yaml.Node{}, targetURL: map[string]*url.URL{}, targetH2: map[string]bool{}, targetHTTP1: map[string]bool{},
		targetStreams: map[string]int{}, streamsNodes: map[string]*yaml.Node{},
		originIdx: map[string]int{}, stepOrigin: map[*yaml.Node]int{}, grpcSrcs: map[int]grpccall.Source{}}
	var doc yaml.Node
	if err := l.unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{file, 1, 1, "empty scenario: expected a mapping with at least a steps list"}
	}
	l.root = resolve(doc.Content[0])
	if err := l.load(); err != nil {
		return nil, err
	}
	return l.s, nil
}

// load compiles the whole file.
func (l *loader) load() error {
	if err := l.fields(l.root, "scenario", topKeys, func(key string, k, v *yaml.Node) error {
		l.nodes[key], l.keys[key] = v, k
		return nil
	}); err != nil {
		return err
	}
	connSet, maxRepeat, err := l.settings()
	if err != nil {
		return err
	}
	l.env = &template.Env{Vars: map[string]template.Value{}, LookupEnv: l.o.Env, Counters: map[string]*atomic.Uint64{}, MaxRepeat: maxRepeat,
		Pools: l.poolIdx, Captures: l.capIdx, Feeds: map[string]int{}}
	if err := l.variables(); err != nil {
		return err
	}
	if err := l.targets(); err != nil {
		return err
	}
	if err := l.base(); err != nil {
		return err
	}
	if err := l.prescanSteps(); err != nil {
		return err
	}
	if err := l.pools(); err != nil {
		return err
	}
	if err := l.feeds(); err != nil {
		return err
	}
	l.env.FeedList = l.s.Feeds
	if err := l.steps(); err != nil {
		return err
	}
	if err := l.flows(); err != nil {
		return err
	}
	if err := l.phases(); err != nil {
		return err
	}
	if err := l.checkOrigins(); err != nil {
		return err
	}
	if err := l.stages(connSet); err != nil {
		return err
	}
	if err := l.thresholds(); err != nil {
		return err
	}
	return l.finish()
}

// settings reads the top-level run settings (name, connections, rate,
// length, timeouts, engine …). It says whether connections was given and
// returns max_repeat, which the templates need.
func (l *loader) settings() (connSet bool, maxRepeat int, err error) {
	s := l.s
	st := &s.Settings
	st.KeepAlive, st.Engine, st.BodyLimit, st.Connections = true, "auto", defaultBodyLimit, 50
	maxRepeat = random.DefaultMaxRepeat
	for _, key := range topKeys {
		v, ok := l.nodes[key]
		if !ok {
			continue
		}
		var err error
		switch key {
		case "name":
			s.Name, err = l.str(v, "name")
		case "connections":
			var n int64
			n, err = l.integer(v, "connections", 1, maxConnections)
			st.Connections, connSet = int(n), true
		case "rate":
			st.Rate, err = l.number(v, "rate")
			if err == nil && st.Rate == 0 {
				err = l.errAt(v, "rate: expected requests per second > 0, found 0 (leave rate out for the closed model)")
			}
		case "duration":
			st.Duration, err = l.duration(v, "duration")
			if err == nil && st.Duration == 0 {
				err = l.errAt(v, "duration: expected a duration > 0 such as 30s, found %s", v.Value)
			}
		case "requests":
			var n int64
			n, err = l.integer(v, "requests", 1, math.MaxInt64)
			st.Requests = uint64(n)
		case "timeout":
			st.Timeout, err = l.duration(v, "timeout")
		case "connect_timeout":
			st.ConnectTimeout, err = l.duration(v, "connect_timeout")
		case "keepalive":
			st.KeepAlive, err = l.boolean(v, "keepalive")
		case "redirects":
			var n int64
			n, err = l.integer(v, "redirects", 0, 100)
			st.Redirects = int(n)
		case "engine":
			st.Engine, err = l.str(v, "engine")
			if err == nil && st.Engine != "net" && st.Engine != "uring" && st.Engine != "auto" {
				err = l.errAt(v, "engine: expected net, uring or auto, found %s", describe(v))
			}
		case "streams":
			var n int64
			n, err = l.integer(v, "streams", 1, maxStreams)
			st.Streams = int(n)
		case "insecure":
			st.Insecure, err = l.boolean(v, "insecure")
		case "seed":
			var n int64
			n, err = l.integer(v, "seed", 0, math.MaxInt64)
			st.Seed = uint64(n)
		case "max_repeat":
			var n int64
			n, err = l.integer(v, "max_repeat", 0, 1000)
			maxRepeat = int(n)
		case "body_limit":
			var n int64
			n, err = l.size(v, "body_limit", 1, maxBodyLimit)
			st.BodyLimit = int(n)
		case "think":
			s.think, err = l.thinkTime(v, "think")
			l.thinkNode = v
		}
		if err != nil {
			return false, 0, err
		}
	}
	if st.Rate > 0 && st.Requests == 0 && st.Duration == 0 && !l.o.LengthGiven && l.nodes["stages"] == nil {
		return false, 0, l.errAt(l.nodes["rate"], "rate: an open-model run needs a length: expected duration, requests or stages")
	}
	return connSet, maxRepeat, nil
}

// finish makes the final checks and builds the mix.
func (l *loader) finish() error {
	s := l.s
	if len(s.Origins) == 0 {
		return l.errAt(l.root, "scenario: expected base: http://HOST:PORT (or a url in each step)")
	}
	if l.thinkNode != nil {
		s.thinkErr = l.errAt(l.thinkNode, "think: a think time paces each virtual user of the closed model, but an open-model run (rate, rate stages or -q) sends on a fixed schedule whatever the users do: remove think, or the rate")
		if s.Settings.Rate > 0 || s.Settings.StageKind == "rate" {
			return s.thinkErr
		}
	}
	canStart := false
	for i, st := range s.Steps {
		if st.Weight > 0 && !l.firstNeeds[i] {
			canStart = true
		}
	}
	for _, f := range s.Flows {
		if !l.firstNeeds[f.steps[0]] {
			canStart = true
		}
	}
	if !canStart {
		return l.errAt(l.nodes["steps"], "steps: every step needs a captured value before it can run, so none can start: expected a weighted step (or a flow starting with one) without {{pick}}, {{take}} or {{last}} of an unseeded pool")
	}
	for _, st := range s.Steps {
		for _, c := range st.captures {
			if !l.poolUsed[l.poolIdx[c.name]] {
				c.pool = nil // only {{last}} reads it: keep nothing shared
			}
		}
	}
	for i, p := range s.Pools {
		if l.poolUsed[i] || l.seeded[i] {
			s.reported = append(s.reported, p)
		}
	}
	for _, c := range l.env.Counters {
		c.Store(0) // the sample requests checked at load count from 1 too
	}
	s.mix = newMix(s.Steps, s.Flows, -1)
	for k, o := range s.Origins {
		o.mix = newMix(s.Steps, s.Flows, k)
	}
	s.anyGRPC = l.anyGRPC
	s.anyLLM, s.convs = l.anyLLM, len(l.convIdx)
	if s.anyLLM {
		s.asked = new(llm.Asked)
	}
	s.feedEnd = newFeedEnd(s)
	s.seed = s.Settings.Seed
	if s.seed == 0 {
		s.seed = random.Seed()
	}
	for _, st := range s.Steps {
		if st.llm != nil {
			st.llm.spec.Seed = s.seed
		}
	}
	hs, _ := l.fileHeaders()
	for _, h := range hs {
		if !strings.Contains(h.v.Value, "{{") {
			s.Headers = append(s.Headers, [2]string{h.name, h.v.Value})
		}
	}
	return nil
}
