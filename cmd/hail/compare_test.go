package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/grpcserve"
)

// hail compare takes three sides and more, against the first or a chosen
// baseline, and is a gate: --fail-on exits 2 on a significant regression,
// refuses (exit 1) to judge one run per side unless --fail-on-raw says to
// decide on the raw change.
func TestCompareThreeWayAndGate(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	dir := t.TempDir()
	run := func(name, query string) string {
		p := filepath.Join(dir, name)
		if _, se, code := hail(t, "-n", "300", "-c", "2", "-j", "-o", p, base+"/"+query); code != 0 {
			t.Fatal(se)
		}
		return p
	}
	fast1, fast2 := run("fast1.json", "?delay=1ms"), run("fast2.json", "?delay=1ms")
	slow1, slow2 := run("slow1.json", "?delay=6ms"), run("slow2.json", "?delay=6ms")
	mid := run("mid.json", "?delay=3ms")

	stdout, se, code := hailIn(t, "compare", "--output-format", "markdown", "Python REST="+slow1, "Go REST="+mid, "Go gRPC="+fast1)
	if code != 0 || !strings.Contains(stdout, "| metric | Python REST (baseline) | Go REST | Go gRPC |") || !strings.Contains(stdout, "✅ better") {
		t.Errorf("three sides: exit %d, %s\n%s", code, se, stdout)
	}
	stdout, _, code = hailIn(t, "compare", "--baseline", "Go gRPC", "Python REST="+slow1, "Go REST="+mid, "Go gRPC="+fast1)
	if code != 0 || !strings.Contains(stdout, "Go gRPC (baseline): ") || !strings.Contains(stdout, "worse") {
		t.Errorf("--baseline by label: exit %d\n%s", code, stdout)
	}
	if _, se, code := hailIn(t, "compare", "--baseline", "4", slow1, mid, fast1); code != 1 || !strings.Contains(se, `--baseline "4": names no side`) {
		t.Errorf("--baseline 4 of 3: exit %d, %s", code, se)
	}

	// Several runs per side: a significant regression exits 2, after the table.
	stdout, se, code = hailIn(t, "compare", "main="+fast1+","+fast2, "pr="+slow1+","+slow2, "--fail-on", "p50>+10%,rps<-5%")
	if code != 2 || !strings.Contains(se, "2 of 2 --fail-on checks failed: pr: p50>+10%") || !strings.Contains(stdout, "FAIL  p50>+10%  pr: p50 ") ||
		!strings.Contains(stdout, "outside the runs' spread") {
		t.Errorf("a regression: exit %d, stderr %q\n%s", code, se, stdout)
	}
	if _, se, code := hailIn(t, "compare", "main="+fast1+","+fast2, "pr="+slow1+","+slow2, "--fail-on", "p50<-10%"); code != 0 {
		t.Errorf("a rule the change does not meet: exit %d, %s", code, se)
	}
	// One run per side: noise cannot be judged.
	if stdout, se, code := hailIn(t, "compare", fast1, slow1, "--fail-on", "p99>+10%"); code != 1 || stdout != "" || !strings.Contains(se, "noise cannot be judged from one run per side") {
		t.Errorf("one run per side: exit %d, stdout %q, stderr %q", code, stdout, se)
	}
	if stdout, se, code := hailIn(t, "compare", fast1, slow1, "--fail-on", "p50>+10%", "--fail-on-raw"); code != 2 || !strings.Contains(stdout, "raw change: one run per side") {
		t.Errorf("--fail-on-raw: exit %d, %s\n%s", code, se, stdout)
	}
	if _, se, code := hailIn(t, "compare", fast1, slow1, "--fail-on", "p99 > 10"); code != 1 || !strings.Contains(se, "p99 is a latency") {
		t.Errorf("a bad rule: exit %d, %s", code, se)
	}
	if _, se, code := hailIn(t, "compare", fast1); code != 1 || !strings.Contains(se, "expected two or more sides") {
		t.Errorf("one side: exit %d, %s", code, se)
	}
}

// The worked example's scenarios (examples/controlplane) run against the
// built-in REST and gRPC servers; cut by -z before the peak plateau, the
// stages it reached are reported (the first with its warmup) and the peak's
// threshold fails as a check over nothing. Each virtual user thinks 10 ms after
// each request (a line added to a copy of the file): the stages, warmup and
// thresholds are the file's, at a quarter of full speed's CPU.
func TestControlPlaneExamples(t *testing.T) {
	t.Parallel()
	rest := startServe(t)
	grpcAddr, _ := startGRPCServer(t, grpcserve.Config{})
	for _, tc := range []struct{ file, base string }{{"rest.yaml", rest}, {"grpc.yaml", "http://" + grpcAddr}} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			controlPlaneExample(t, tc.file, tc.base)
		})
	}
}

// controlPlaneExample runs one of examples/controlplane against base, with a
// think time.
func controlPlaneExample(t *testing.T, file, base string) {
	path := withThink(t, "../../examples/controlplane/"+file, "10ms")
	out, se, code := hail(t, "run", path, "--base", base, "-z", "2200ms", "--no-tui", "-j")
	if code != 2 || !strings.Contains(se, "no such stage in this run") {
		t.Fatalf("%s: exit %d, %s", file, code, se)
	}
	var r struct {
		Hail struct {
			Counts struct{ Requests int64 }
			Stages []struct {
				Stage  int
				Name   string
				Counts struct{ Requests int64 }
				Warmup *struct{ Counts struct{ Requests int64 } }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	st := r.Hail.Stages
	if len(st) != 1 || st[0].Name != "low" || st[0].Warmup == nil || st[0].Counts.Requests+st[0].Warmup.Counts.Requests != r.Hail.Counts.Requests {
		t.Errorf("%s: stages %+v, %d requests in the run", file, st, r.Hail.Counts.Requests)
	}
}

// withThink copies the scenario file at path into a temporary directory with
// a file-wide think time added (a top-level key the file must not have), and
// returns the copy's path: an example's steps, stages and thresholds run as
// written at a fraction of full speed's CPU.
func withThink(t *testing.T, path, think string) string {
	t.Helper()
	yaml, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(yaml, []byte("\nthink:")) {
		t.Fatalf("%s has a think time of its own", path)
	}
	cp := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(cp, append(yaml, "\nthink: "+think+"\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	return cp
}
