package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hail-loadgen/hail/internal/engine/uringengine"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"github.com/hail-loadgen/hail/internal/serve"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// engines are the engines a test runs on: net always, uring where the
// kernel allows it.
func engines(t *testing.T) []string {
	if err := uringengine.Available(); err != nil {
		t.Logf("uring engine unavailable here: %v", err)
		return []string{"net"}
	}
	return []string{"net", "uring"}
}

// uringTurn lets one run on the uring engine go at a time among this
// package's parallel tests: each uring worker holds a P while it waits in
// io_uring_enter, and the engine sizes GOMAXPROCS for one run per process,
// so two uring runs in one process starve each other (seconds a run).
// Runs on the net engine go side by side.
var uringTurn sync.Mutex

// turn waits for p's turn when it runs on the uring engine ("auto" may
// choose it) and returns what ends the turn.
func turn(p *plan.Plan) (done func()) {
	if e, _, err := run.Select(p); err == nil && e.Name() == "uring" {
		uringTurn.Lock()
		return uringTurn.Unlock
	}
	return func() {}
}

// runFile loads src against base, lets adjust change its settings, and runs it.
func runFile(t *testing.T, src, base string, adjust func(*scenario.Scenario), observe func(*stats.Collector)) (*result.Result, *scenario.Scenario) {
	t.Helper()
	s, err := scenario.Parse("it.yaml", []byte(src), scenario.LoadOptions{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	if adjust != nil {
		adjust(s)
	}
	sched := s.Settings.Schedule()
	p, err := s.Plan(sched)
	if err != nil {
		t.Fatal(err)
	}
	w := Workload(s, sched)
	d := mustTargets(t, s, p).Route(w)
	done := turn(p)
	res, err := run.Run(context.Background(), p, run.Options{Workload: w, Dialer: d, Observe: observe})
	done()
	if err != nil {
		t.Fatal(err)
	}
	s.Annotate(res)
	threshold.Evaluate(s.Thresholds, res)
	return res, s
}

// runOn runs src on engine eng against a fresh hail serve target, and
// returns the result, the scenario and the target.
func runOn(t *testing.T, eng, src string) (*result.Result, *scenario.Scenario, *serve.Server) {
	t.Helper()
	base, srv := servetest.Start(t)
	res, s := runFile(t, src, base, func(s *scenario.Scenario) { s.Settings.Engine = eng }, nil)
	return res, s, srv
}

// mustTargets prepares s's targets for runs of p.
func mustTargets(t *testing.T, s *scenario.Scenario, p *plan.Plan) *Targets {
	t.Helper()
	tg, err := NewTargets(context.Background(), s, p)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func step(t *testing.T, res *result.Result, name string) *result.StepResult {
	t.Helper()
	for i := range res.Hail.Steps {
		if res.Hail.Steps[i].Name == name {
			return &res.Hail.Steps[i]
		}
	}
	t.Fatalf("no step %q in the result", name)
	return nil
}

// recorder is a target of the test's own that records every request's path.
type recorder struct {
	mu    sync.Mutex
	paths []string
}

func startRecorder(t *testing.T) (*recorder, string) {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.paths = append(rec.paths, r.URL.Path)
		rec.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

func (r *recorder) counts(prefix string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, p := range r.paths {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			out[rest]++
		}
	}
	return out
}

// writeUsers writes n users as CSV and as JSON Lines, and returns both paths.
func writeUsers(t *testing.T, n int) (csvPath, jsonlPath string) {
	dir := t.TempDir()
	var c, j strings.Builder
	c.WriteString("id,email\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&c, "u%d,\"u%d@x.org\"\n", i, i)
		fmt.Fprintf(&j, "{\"id\": \"u%d\", \"email\": \"u%d@x.org\"}\n", i, i)
	}
	csvPath, jsonlPath = filepath.Join(dir, "users.csv"), filepath.Join(dir, "users.jsonl")
	if err := os.WriteFile(csvPath, []byte(c.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonlPath, []byte(j.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return csvPath, jsonlPath
}
