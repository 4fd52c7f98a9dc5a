package hail_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/scenario"
)

// A scenario.File with every field set compiles (each writes a key the
// loader knows, in the form it wants), and runs against the built-in
// target with the file's numbers: 2 connections, think times, flows,
// feeds, pools, setup and teardown.
func TestScenarioFileEveryField(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := &scenario.File{
		Name:      "every-field",
		Base:      srv.URL,
		Headers:   map[string]string{"X-Run": "{{var.run}}"},
		Variables: map[string]any{"run": "r1", "sizes": []string{"1", "2"}, "n": 3},
		Pools:     map[string]scenario.Pool{"seeded": {Max: 100, Values: []string{"a", "b"}, File: write("pool.txt", "c\nd\n")}},
		Feeds:     map[string]scenario.Feed{"users": {File: write("users.csv", "id,name\n1,ann\n2,bob\n"), Order: "random", Format: "csv"}},
		Steps: []scenario.Step{
			{Name: "create", Weight: 2, Method: "POST", Path: "/items", Headers: map[string]string{"X-User": "{{feed.users.name}}"},
				BodyJSON: map[string]any{"n": "{{int 1 9}}"}, Capture: map[string]scenario.Capture{"items": {JSON: "id"}, "where": {Header: "Location"},
					"code": {Status: true}}, Expect: &scenario.Expect{Status: []string{"201"}, BodyContains: []string{`"id"`},
					Header: map[string]string{"Content-Type": "application/json"}}, Think: scenario.Think{Min: time.Millisecond, Max: 2 * time.Millisecond}},
			{Name: "get", URL: srv.URL + "/items/{{pick items}}", Expect: &scenario.Expect{JSON: map[string]any{"data.n": 0}}}, // fails
			{Name: "echo", Method: "POST", Path: "/echo", Body: "{{choice var.sizes}}-{{pick seeded}}",
				Capture: map[string]scenario.Capture{"echoed": {Regex: "([0-9])-"}}},
			{Name: "file", Method: "POST", Path: "/echo", BodyFile: write("body.bin", "abc")},
			{Name: "lines", Method: "POST", Path: "/echo", BodyLines: write("lines.txt", "x\ny\n")},
			{Name: "again", Path: "/?n={{last echoed}}"},
		},
		Flows:            []scenario.Flow{{Name: "session", Weight: 1, Steps: []string{"echo", "again"}, Think: scenario.Think{Min: time.Millisecond}}},
		Setup:            []scenario.Step{{Name: "seed", Method: "POST", Path: "/items", Capture: map[string]scenario.Capture{"items": {JSON: "id"}}, Repeat: 3}},
		Teardown:         []scenario.Step{{Name: "cleanup", Method: "DELETE", Path: "/items/{{take items}}", Repeat: scenario.RepeatAll}},
		ConnectionStages: []scenario.Stage{{Duration: 300 * time.Millisecond, Target: 2, Step: true}, {Duration: 200 * time.Millisecond, Target: 1}},
		Thresholds:       []scenario.Threshold{{Expr: "p99 < 10s"}, {Expr: "error_rate < 50%", Step: "echo", AbortOnFail: true, AbortAfter: time.Second}},
		Requests:         5000,
		Timeout:          5 * time.Second,
		ConnectTimeout:   2 * time.Second,
		DisableKeepAlive: true,
		Redirects:        1,
		Engine:           "net",
		Insecure:         true,
		Seed:             7,
		MaxRepeat:        2,
		BodyLimit:        4096,
		Think:            scenario.Think{Min: time.Millisecond},
	}
	sc, err := hail.NewScenario(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hail
	if h.Engine != "net" || h.Scenario == nil || h.Scenario.Name != "every-field" || len(h.Steps) != 6 || h.Setup.Steps[0].Counts.Requests != 3 {
		t.Errorf("engine %s, scenario %+v, steps %d, setup %+v", h.Engine, h.Scenario, len(h.Steps), h.Setup)
	}
	if h.Config["keepalive"] != false || len(h.Thresholds) != 2 || srv.Stats().Items.Live != 0 {
		t.Errorf("keepalive %v, thresholds %+v, items left %d", h.Config["keepalive"], h.Thresholds, srv.Stats().Items.Live)
	}
	if h.Steps[1].CheckFailures[`json data.n = 0`] == 0 {
		t.Errorf("the get step's check failures: %v", h.Steps[1].CheckFailures)
	}
	hailtest.AssertExact(t, srv, res) // the failed checks' responses too
}

// A gRPC step and the file's schema (a .proto beside it).
func TestScenarioFileGRPC(t *testing.T) {
	t.Parallel()
	addr, stop := grpcTarget()
	defer stop()
	dir := t.TempDir()
	proto := filepath.Join(dir, "hail", "v1", "hail.proto")
	if err := os.MkdirAll(filepath.Dir(proto), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proto, grpcserve.Proto(), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := hail.NewScenario(&scenario.File{
		Base:     "http://" + addr,
		Requests: 50,
		GRPC:     &scenario.Schema{Proto: []string{proto}, ImportPaths: []string{dir}},
		Steps: []scenario.Step{{Name: "echo", GRPC: &scenario.Call{Method: "hail.v1.Target/Echo", Data: map[string]any{"payload": "p{{counter}}"},
			Metadata: map[string]string{"x-tenant": "blue"}}, Expect: &scenario.Expect{Status: []string{"OK"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := hail.Run(context.Background(), hail.Plan{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCodeDistribution["OK"] != 50 || res.Hail.Protocol != "h2c" {
		t.Errorf("statuses %v, protocol %s", res.StatusCodeDistribution, res.Hail.Protocol)
	}
	if cfg, _ := res.Hail.Config["scenario"].(map[string]any); cfg == nil || !strings.Contains(fmt.Sprint(cfg["steps"]), "echo") {
		t.Errorf("configuration %v", res.Hail.Config)
	}
}
