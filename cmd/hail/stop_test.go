package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine/uringengine"
	"github.com/hail-loadgen/hail/result"
)

// hail stopped (SIGSTOP) for 100 ms mid-run sees it in its own lateness,
// within ±20%, on both engines and in both models: in the open model the
// requests due during the stop leave late although connections were free;
// in the closed model the next request on a connection leaves that long
// after the previous response arrived (its kernel receive time). Ground
// truth is the stop itself, timed by the test. A noisy moment on a shared
// machine may spoil one attempt; a wrong measure fails every attempt.
func TestStoppedHailShowsInItsLateness(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	for _, engine := range []string{"net", "uring"} {
		for _, model := range []string{"open", "closed"} {
			t.Run(engine+"/"+model, func(t *testing.T) {
				t.Parallel()
				if engine == "uring" && uringengine.Available() != nil {
					t.Skip("io_uring is not available here")
				}
				args := []string{"--engine", engine, "-c", "8", "-z", "1500ms", base + "/?delay=8ms"}
				if model == "open" {
					args = append([]string{"-q", "500"}, args...)
				}
				var last string
				for attempt := 1; attempt <= 3; attempt++ {
					stop, res := stoppedRun(t, args)
					own := res.Hail.SendDelay.Own
					last = fmt.Sprintf("attempt %d: stopped %v; own lateness max %.1f ms, p99 %.2f ms (%d samples); verdict %s",
						attempt, stop.Round(time.Millisecond), 1e3*own.Max.Seconds(), 1e3*own.P99.Seconds(), own.Samples, res.Hail.Verdict.Bottleneck)
					t.Log(last)
					if got := own.Max; got >= stop*8/10 && got <= stop*12/10 {
						return
					}
				}
				t.Errorf("own lateness does not show the stop within ±20%%: %s", last)
			})
		}
	}
}

// stoppedRun runs hail with args, stops it for 100 ms after 700 ms, and
// returns how long it was stopped (as this process saw it) and its result.
func stoppedRun(t *testing.T, args []string) (time.Duration, *result.Result) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := startRun(t, append([]string{"--no-tui", "-j", "-o", out}, args...)...)
	time.Sleep(700 * time.Millisecond)
	t0 := time.Now()
	cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGCONT)
	stop := time.Since(t0)
	if code := exitWithin(cmd, 10*time.Second); code != 0 {
		t.Fatalf("hail %v: exit %d", args, code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res result.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return stop, &res
}
