package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/result"
)

// The verdict's bottleneck kinds, each reproduced on this machine with the
// binary pinned to one core and hail serve to the other (as bench/ does):
// a comfortable rate stays "none", busy loops on hail's core are "other
// processes", a rate beyond one core is "generator". (A server with a
// concurrency cap, "target", is in every engine's conformance table.)
// They need two quiet CPUs, so they run when HAIL_VERDICT is set: .ci/run
// runs them in a step of their own.
func TestVerdictOnThisMachine(t *testing.T) {
	if os.Getenv("HAIL_VERDICT") == "" {
		t.Skip("set HAIL_VERDICT=1 (needs two quiet CPUs and taskset)")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("needs taskset (util-linux)")
	}
	base := pinnedServe(t, "1")
	for _, tc := range []struct {
		name string
		busy bool // a busy loop pinned to hail's core
		args []string
		want string
	}{
		{"comfortable", false, []string{"-q", "1000", "-c", "16", "-z", "3s"}, result.BottleneckNone},
		{"busy loop on hail's core", true, []string{"-q", "5000", "-c", "64", "-z", "3s"}, result.BottleneckOthers},
		{"rate beyond one core", false, []string{"-q", "1000000", "-c", "64", "-z", "3s"}, result.BottleneckGenerator},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Three attempts: a noisy moment must not fail it; a wrong rule
			// fails every attempt. An attempt in which the hypervisor stole
			// 2% or more of hail's CPU (quietSteal) does not count when the
			// case needs a quiet machine (the comfortable rate: CI once saw
			// 10–12% in three attempts in a row, and 7–10% made hail wake
			// 2–3 ms late at p99, which hail rightly named) or when its
			// verdict names other processes, which steal is (CI saw 14–21%
			// while hail ran beyond one core, three times).
			var last result.Verdict
			counted, stolen := 0, 0
			for attempt := 1; counted < 3 && attempt <= 6; attempt++ {
				var stop func()
				if tc.busy {
					stop = hogs(t, 3, "0", 0) // one loop beside it no longer slows hail at 5000/s
				}
				res := pinnedRun(t, "0", append(tc.args, base+"/")...)
				if stop != nil {
					stop()
				}
				last = res.Hail.Verdict
				t.Logf("attempt %d: %s: %s", attempt, last.Bottleneck, strings.Join(last.Reasons, " | "))
				if last.Bottleneck == tc.want && last.GeneratorLimited == (tc.want != result.BottleneckNone) {
					return
				}
				if res.Hail.Generator.Steal >= quietSteal && (tc.want == result.BottleneckNone || last.Bottleneck == result.BottleneckOthers) {
					stolen++
					continue
				}
				counted++
			}
			if counted == 0 {
				t.Skipf("the hypervisor stole %.0f%% or more of hail's CPU in all %d attempts: not the quiet machine this case needs", 100*quietSteal, stolen)
			}
			t.Errorf("bottleneck %q, want %q: %q", last.Bottleneck, tc.want, last.Reasons)
		})
	}
}

// pinnedServe runs hail serve pinned to cpu until t ends and returns its URL.
func pinnedServe(t *testing.T, cpu string) string {
	t.Helper()
	addr, _ := startListening(t, exec.Command("taskset", "-c", cpu, hailBin, "serve", "--addr", "127.0.0.1:0"), "hail serve: listening on ")
	return "http://" + addr
}

// pinnedRun runs the binary pinned to cpu with JSON output and returns the result.
func pinnedRun(t *testing.T, cpu string, args ...string) *result.Result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command("taskset", append([]string{"-c", cpu, hailBin, "--no-tui", "-j", "-o", out}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hail %v: %v\n%s", args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res result.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(fmt.Errorf("%s: %v", out, err))
	}
	return &res
}
