package hail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/grpcload"
	iscenario "github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/scenario/runner"
	"github.com/hail-loadgen/hail/scenario"
)

// Scenario is a checked scenario, run by a Plan whose Scenario it is: a
// YAML file's (LoadScenario, ReadScenario; docs/scenarios.md) or a
// scenario.File built in Go (NewScenario). It is compiled again for every
// Run (its pools, counters and feeds start afresh), so one Scenario may
// run many times, and in several Runs at once. A scenario with gRPC steps
// and no grpc schema asks the server at its base by reflection when it is
// loaded and at each Run, as hail run does.
type Scenario struct {
	file    string // the file's path, or a name: messages say it; relative paths resolve against its directory
	data    []byte
	built   []posPath // a scenario.File's YAML: positions → paths
	vars    map[string]string
	base    string
	targets map[string]string
	env     func(string) (string, bool)
	limit   int64
}

// ScenarioOption adjusts how a Scenario compiles.
type ScenarioOption struct{ apply func(*Scenario) }

// ScenarioVars sets variables ({{var.NAME}}), replacing or adding to the
// scenario's own, taken literally (as hail run --var NAME=VALUE).
func ScenarioVars(vars map[string]string) ScenarioOption {
	return ScenarioOption{func(s *Scenario) { s.vars = vars }}
}

// ScenarioBase replaces the scenario's base URL (as hail run --base);
// Plan.URL replaces it again for one Run.
func ScenarioBase(url string) ScenarioOption {
	return ScenarioOption{func(s *Scenario) { s.base = url }}
}

// ScenarioTargets replaces the URLs of the scenario's named targets
// (targets:), name to URL (as hail run --target NAME=URL).
func ScenarioTargets(urls map[string]string) ScenarioOption {
	return ScenarioOption{func(s *Scenario) { s.targets = urls }}
}

// ScenarioEnv looks up the environment variables {{env.NAME}} reads
// (default os.LookupEnv).
func ScenarioEnv(lookup func(name string) (string, bool)) ScenarioOption {
	return ScenarioOption{func(s *Scenario) { s.env = lookup }}
}

// ScenarioFileLimit bounds the files the scenario reads into memory (the
// scenario, body_file, body_lines, pool and feed files; 0: 64 MiB).
func ScenarioFileLimit(bytes int64) ScenarioOption {
	return ScenarioOption{func(s *Scenario) { s.limit = bytes }}
}

// LoadScenario reads and checks the scenario file at path. A problem is a
// *ScenarioError at its line and column.
func LoadScenario(path string, opts ...ScenarioOption) (*Scenario, error) {
	s := newScenario(path, opts)
	data, err := bodyfile.Read(path, s.limit)
	if err != nil {
		return nil, errors.New(scenarioWords.Replace(err.Error()))
	}
	s.data = data
	return s.checked()
}

// ReadScenario reads and checks a scenario from r; name names it in
// messages, and relative paths in it resolve against name's directory.
func ReadScenario(name string, r io.Reader, opts ...ScenarioOption) (*Scenario, error) {
	s := newScenario(name, opts)
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	s.data = data
	return s.checked()
}

// NewScenario checks a scenario built in Go. A problem is a
// *ScenarioError at its Path in f ("steps[1].expect.status"). Relative
// paths in f resolve against the current directory.
func NewScenario(f *scenario.File, opts ...ScenarioOption) (*Scenario, error) {
	data, err := yaml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("scenario.File: %v", err)
	}
	s := newScenario("scenario.File", opts)
	s.data, s.built = data, yamlPaths(data)
	return s.checked()
}

func newScenario(file string, opts []ScenarioOption) *Scenario {
	s := &Scenario{file: file}
	for _, o := range opts {
		o.apply(s)
	}
	return s
}

// checked returns s once it compiles (a Plan may still bound its run).
func (s *Scenario) checked() (*Scenario, error) {
	if _, err := s.compile(context.Background(), "", true, false); err != nil {
		return nil, err
	}
	return s, nil
}

// compile compiles s for one run: base replaces the file's (""), the
// run's length is given by the Plan or not, insecure skips TLS
// verification for the reflection that finds gRPC steps' schema;
// cancelling ctx stops that reflection.
func (s *Scenario) compile(ctx context.Context, base string, lengthGiven, insecure bool) (*iscenario.Scenario, error) {
	if base == "" {
		base = s.base
	}
	o := iscenario.LoadOptions{Vars: s.vars, Base: base, Targets: s.targets, Env: s.env, LengthGiven: lengthGiven, FileLimit: s.limit,
		GRPC: func(b *url.URL, ins bool) (grpccall.Source, error) {
			return grpcload.ScenarioSource(ctx, b, ins || insecure)
		}}
	file := s.file
	if s.built != nil {
		file = "" // paths resolve against the current directory
	}
	sc, err := iscenario.Parse(file, s.data, o)
	if err != nil {
		return nil, s.error(err)
	}
	return sc, nil
}

// error is a compile error as the Go API says it.
func (s *Scenario) error(err error) error {
	var se *iscenario.Error
	if !errors.As(err, &se) {
		return errors.New(scenarioWords.Replace(apiWords(err).Error()))
	}
	msg := scenarioWords.Replace(se.Msg)
	if s.built == nil {
		return &ScenarioError{File: s.file, Line: se.Line, Column: se.Column, Problem: msg}
	}
	return &ScenarioError{File: s.file, Path: pathAt(s.built, se.Line, se.Column), Problem: msg}
}

// scenarioWords are hail run's flags in the Go API's words.
var scenarioWords = strings.NewReplacer("(or --base)", "(or ScenarioBase, or Plan.URL)", "--base ", "the base URL ", "--target ", "ScenarioTargets ",
	"raise it with --body-file-limit", "raise it with ScenarioFileLimit")

// compileScenario is the job of a Plan that runs a Scenario: the
// scenario compiled afresh, its settings with the Plan's overrides (as hail
// run's flags override a file's), its plan and workload. Cancelling ctx
// stops the reflection that finds gRPC steps' schema.
func (p Plan) compileScenario(ctx context.Context, connect bool) (*job, error) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"Method", p.Method != ""}, {"Header", len(p.Header) > 0}, {"Body", len(p.Body) > 0}, {"Host", p.Host != ""},
		{"Compression", p.Compression}, {"HTTPVersion", p.HTTPVersion != ""},
		{"BurstEvery", p.BurstEvery != 0}, {"BurstSize", p.BurstSize != 0}, {"MaxRedirects", p.MaxRedirects != 0},
		{"DisableKeepAlive", p.DisableKeepAlive}} {
		if f.set {
			return nil, &FieldError{Field: f.name, Problem: "a scenario says this in its file (its steps, redirects, keepalive): leave it zero with a Scenario"}
		}
	}
	lengthGiven := p.Duration > 0 || p.Requests > 0 || len(p.RateStages)+len(p.ConnectionStages) > 0
	sc, err := p.Scenario.compile(ctx, p.URL, lengthGiven, p.Insecure)
	if err != nil {
		return nil, err
	}
	st := &sc.Settings
	if p.Connections > 0 {
		st.Connections = p.Connections
		if st.StageKind == "connections" {
			st.Stages, st.StageKind = nil, ""
		}
	}
	if p.Rate > 0 {
		st.Rate, st.Stages, st.StageKind = p.Rate, nil, ""
	}
	if p.Duration > 0 {
		st.Duration = p.Duration
	}
	if p.Requests > 0 {
		st.Requests = p.Requests
	}
	if p.Timeout > 0 {
		st.Timeout = p.Timeout
	}
	if p.ConnectTimeout > 0 {
		st.ConnectTimeout = p.ConnectTimeout
	}
	if p.Engine != EngineAuto {
		st.Engine = string(p.Engine)
	}
	st.Insecure = st.Insecure || p.Insecure
	if p.Seed != 0 {
		sc.Reseed(p.Seed)
	}
	if p.Streams != 0 {
		if p.Streams < 0 || p.Streams > 100_000 {
			return nil, &FieldError{Field: "Streams", Problem: fmt.Sprintf("expected streams per connection from 1 to 100000, found %d", p.Streams)}
		}
		if err := sc.SetStreams(p.Streams); err != nil {
			return nil, &FieldError{Field: "Streams", Problem: "several streams per connection need HTTP/2, and every target of the scenario speaks HTTP/1.1 (give a Target Protocol h2)"}
		}
	}
	j := &job{sc: sc, thresholds: sc.Thresholds}
	if err := p.stages(j, st); err != nil {
		return nil, err
	}
	sched := st.Schedule()
	ip, err := sc.Plan(sched)
	if err != nil {
		return nil, apiWords(err)
	}
	ip.WaitOngoing, ip.PacingGranularity = p.WaitOngoing, p.PacingGranularity
	ip.UnixSocket = p.UnixSocket
	ip.CACert, ip.Cert, ip.Key, ip.ServerName = p.CACert, p.Cert, p.Key, p.ServerName
	if err := p.transport(ip); err != nil {
		return nil, err
	}
	if err := ip.Validate(); err != nil {
		return nil, public(err)
	}
	j.plan = ip
	j.workload = runner.Workload(sc, sched)
	if err := p.addThresholds(j, sc); err != nil {
		return nil, err
	}
	u := *ip.URL
	u.User = nil
	j.config = map[string]any{"url": u.String(), "connections": ip.Connections, "requests": ip.Requests,
		"duration_seconds": ip.Duration.Seconds(), "rate": ip.Rate, "model": model(ip, j.workload), "wait_ongoing": ip.WaitOngoing,
		"engine": ip.Engine, "keepalive": ip.KeepAlive, "redirects": ip.MaxRedirects, "timeout_seconds": ip.Timeout.Seconds(),
		"scenario": sc.Config(), "api": "go"}
	return j, nil
}

// posPath is a position in a YAML document and the path of the node there.
type posPath struct {
	line, col int
	path      string
}

// yamlPaths maps the nodes of a YAML document to their paths (steps[1].
// expect.status), in document order.
func yamlPaths(data []byte) []posPath {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return []posPath{}
	}
	out := []posPath{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		out = append(out, posPath{n.Line, n.Column, path})
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				out = append(out, posPath{k.Line, k.Column, p})
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, v := range n.Content {
				walk(v, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(doc.Content[0], "")
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].line < out[j].line || out[i].line == out[j].line && out[i].col < out[j].col
	})
	return out
}

// pathAt is the path of the node at (or last before) line and col.
func pathAt(paths []posPath, line, col int) string {
	path := "scenario"
	for _, p := range paths {
		if p.line > line || p.line == line && p.col > col {
			break
		}
		if p.path != "" {
			path = p.path
		}
	}
	return path
}
