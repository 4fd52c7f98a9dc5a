package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/grpcserve"
)

// Checks on gRPC steps: status names (an expected NotFound is a response,
// not a failure; an unexpected one fails its check), and body checks read
// the response message as protojson. Header checks are refused: the run
// speaks HTTP/2.
func TestGRPCScenarioChecks(t *testing.T) {
	t.Parallel()
	addr, _ := startGRPCServer(t, grpcserve.Config{})
	dir := t.TempDir()
	file := filepath.Join(dir, "checks.yaml")
	os.WriteFile(file, []byte(`
base: http://`+addr+`
connections: 2
requests: 90
steps:
  - name: create
    grpc: {call: hail.v1.Items/Create, data: {name: 'vm-{{counter}}', tenant: acme, cpus: 2}}
    expect: {status: OK, body_contains: '"id"', json: {tenant: acme}}
  - name: missing
    grpc: {call: hail.v1.Items/Get, data: '{"id":"nope"}'}
    expect: {status: [NotFound]}
  - name: wrong
    grpc: {call: hail.v1.Items/Get, data: '{"id":"nope"}'}
    expect: {status: OK}
`), 0o644)
	out, errOut, code := hail(t, "run", file, "--no-tui", "-j", "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Hail struct {
			Steps []struct {
				Name              string
				Counts            struct{ Requests, Failed, Expected int64 }
				ErrorDistribution map[string]int64 `json:"errorDistribution"`
				CheckFailures     map[string]int64 `json:"check_failures"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Hail.Steps {
		c := s.Counts
		switch s.Name {
		case "create":
			if c.Requests == 0 || c.Failed != 0 || len(s.CheckFailures) != 0 {
				t.Errorf("create: %+v, checks %v", c, s.CheckFailures)
			}
		case "missing":
			if c.Requests == 0 || c.Failed != 0 || c.Expected != c.Requests {
				t.Errorf("missing (NotFound expected): %+v", c)
			}
		case "wrong":
			if c.Requests == 0 || c.Failed != c.Requests || s.ErrorDistribution["check failed: status"] != c.Requests || s.CheckFailures["status OK"] != c.Requests {
				t.Errorf("wrong (OK expected): %+v, errors %v, checks %v", c, s.ErrorDistribution, s.CheckFailures)
			}
		}
	}
	os.WriteFile(file, []byte("base: http://"+addr+"\nrequests: 1\nsteps:\n  - name: s\n    grpc: {call: hail.v1.Target/Echo}\n    expect: {header: {X-A: b}}\n"), 0o644)
	if _, errOut, code := hail(t, "run", file, "--no-tui"); code != 1 || !strings.Contains(errOut, "header checks need HTTP/1.1") {
		t.Errorf("a header check on a gRPC file: exit %d, %q", code, errOut)
	}
}
