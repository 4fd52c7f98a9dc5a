package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
)

// hail run with steps on two targets, REST and gRPC: --target points the
// file's targets at the test's servers; the text report has an Origins
// table and each origin's verdict; the JSON has hail.origins with each
// server's exact count; hail merge of two such results adds the origins.
func TestRunTwoTargets(t *testing.T) {
	t.Parallel()
	base, srv := servetest.Start(t)
	addr, gsrv := startGRPCServer(t, grpcserve.Config{})
	path := writeScenario(t, `
targets:
  web: http://127.0.0.1:1
  rpc: grpc://127.0.0.1:1
connections: 4
rate: 2000
requests: 400
steps:
  - {name: page, target: web, weight: 3, path: /}
  - {name: echo, target: rpc, weight: 1, grpc: {call: hail.v1.Target/Echo, data: {payload: hi}}}
`)
	dir := t.TempDir()
	var results []string
	for i, f := range []string{"text", "json"} {
		out := filepath.Join(dir, f)
		_, stderr, code := hail(t, "run", path, "--target", "web="+base, "--target", "rpc=grpc://"+addr, "--no-tui", "--output-format", f, "-o", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if f == "text" {
			for _, want := range []string{"Origins (one connection pool each", "web ", "rpc ", "HTTP/1.1", "h2c", "bottleneck: "} {
				if !strings.Contains(string(b), want) {
					t.Errorf("text report lacks %q:\n%s", want, b)
				}
			}
			continue
		}
		results = append(results, out)
		var res report.Result
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		o := res.Hail.Origins
		// Each run sent 300 requests to web and 100 to rpc (the schedule
		// deals 400 as 3 to 1); the servers' counts are cumulative.
		if len(o) != 2 || o[0].Name != "web" || o[1].Name != "rpc" || o[0].Counts.Requests != 300 || o[1].Counts.Requests != 100 {
			t.Fatalf("origins %+v", o)
		}
		if got, want := srv.Stats().Requests, uint64(300*(i+1)); got != want {
			t.Errorf("the web server counted %d requests, want %d", got, want)
		}
		if got, want := gsrv.Calls("/hail.v1.Target/Echo"), int64(100*(i+1)); got != want {
			t.Errorf("the gRPC server counted %d calls, want %d", got, want)
		}
		if res.Hail.Engine == "" || !strings.Contains(res.Hail.Engine, "h2") || !strings.Contains(res.Hail.Protocol, "h2c") {
			t.Errorf("engine %q protocol %q", res.Hail.Engine, res.Hail.Protocol)
		}
	}
	// A second JSON run to merge with the first.
	second := filepath.Join(dir, "json2")
	if _, stderr, code := hail(t, "run", path, "--target", "web="+base, "--target", "rpc=grpc://"+addr, "--no-tui", "-j", "-o", second); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	merged := filepath.Join(dir, "merged")
	if _, stderr, code := hail(t, "merge", results[0], second, "-o", merged); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(merged)
	var res report.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if o := res.Hail.Origins; len(o) != 2 || o[0].Counts.Requests != 600 || o[1].Counts.Requests != 200 || o[0].Connections != 6 {
		t.Errorf("merged origins %+v", o)
	}
}
