package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/testtier"
)

func TestExitsAtOnce(t *testing.T) {
	t.Parallel()
	term, intr := syscall.SIGTERM, os.Interrupt
	for _, tc := range []struct {
		first, sig os.Signal
		since      time.Duration
		want       bool
	}{
		{term, term, 20 * time.Microsecond, false}, // coreutils timeout: the child, then its group
		{intr, intr, time.Millisecond, false},      // Ctrl-C reaching hail twice through a pipeline
		{intr, term, 100 * time.Millisecond, false},
		{term, intr, time.Millisecond, true}, // a person at the terminal after a service manager
		{term, term, signalWindow, true},
		{intr, intr, 2 * time.Second, true},
	} {
		if got := exitsAtOnce(tc.first, tc.sig, tc.since); got != tc.want {
			t.Errorf("exitsAtOnce(%v, %v, %v) = %v, want %v", tc.first, tc.sig, tc.since, got, tc.want)
		}
	}
}

// checkResult fails unless path holds a complete JSON result of an
// interrupted run and no temporary file is left beside it.
func checkResult(t *testing.T, path string, wantInterrupted bool) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no result: %v", err)
		return
	}
	var doc struct {
		Hail struct {
			Interrupted bool
			Counts      struct{ Requests int64 }
		}
		ErrorDistribution      map[string]int64
		StatusCodeDistribution map[string]int64
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Errorf("%s is not valid JSON (%d bytes): %v", path, len(raw), err)
		return
	}
	var outcomes int64
	for _, n := range doc.ErrorDistribution {
		outcomes += n
	}
	for _, n := range doc.StatusCodeDistribution {
		outcomes += n
	}
	if doc.Hail.Interrupted != wantInterrupted || outcomes != doc.Hail.Counts.Requests {
		t.Errorf("%s: interrupted %v, %d requests, %d outcomes", path, doc.Hail.Interrupted, doc.Hail.Counts.Requests, outcomes)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// coreutils timeout sends SIGTERM to hail and to its process group
// microseconds apart: the two count as one, and -o is complete every time
// (it was lost in about a third of runs: "interrupted twice"). 24 runs here
// (a bug that struck a third of them passes all 24 once in 16,000), 100 in
// the soak tier.
func TestTimeoutKeepsResult(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("coreutils timeout not installed")
	}
	base := startServe(t)
	dir := t.TempDir()
	runs, parallel := 24, 4
	if testtier.On(testtier.Soak) {
		runs = 100
	}
	var wg sync.WaitGroup
	work := make(chan int)
	for range parallel {
		wg.Go(func() {
			for i := range work {
				out := filepath.Join(dir, fmt.Sprintf("r%d", i), "out.json")
				os.Mkdir(filepath.Dir(out), 0o755)
				after := fmt.Sprintf("0.%d", 4+i%5) // 0.4 s to 0.8 s
				cmd := exec.Command("timeout", "--preserve-status", after, hailBin, "-z", "30s", "-q", "300", "-c", "2",
					"--no-tui", "-j", "-o", out, base+"/?delay=1ms")
				b, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("run %d (timeout %s): %v, %s", i, after, err, b)
					continue
				}
				checkResult(t, out, true)
			}
		})
	}
	for i := range runs {
		work <- i
	}
	close(work)
	wg.Wait()
}

// startRun starts hail in its own process group, as a shell or service
// manager would.
func startRun(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(hailBin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd
}

// exitWithin waits for cmd up to limit and returns its exit code; -1 when
// it had to be killed.
func exitWithin(cmd *exec.Cmd, limit time.Duration) int {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return -1
	}
}

// One kill -TERM, and a systemd-style stop (SIGTERM to the process and
// its group, SIGCONT, SIGKILL after a grace period): hail stops within
// the grace and leaves a complete result.
func TestTermAndServiceStop(t *testing.T) {
	t.Parallel()
	base, srv := servetest.Start(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		group bool
	}{{"kill-TERM", false}, {"systemd-stop", true}} {
		out := filepath.Join(dir, tc.name+".json")
		before := srv.Stats().Requests
		cmd := startRun(t, "-z", "30s", "-q", "300", "-c", "2", "--no-tui", "-j", "-o", out, base+"/?delay=1ms")
		waitArrivals(t, srv, before+20)
		cmd.Process.Signal(syscall.SIGTERM)
		if tc.group {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		}
		if code := exitWithin(cmd, 5*time.Second); code != 0 {
			t.Errorf("%s: exit %d, want 0 within the 5 s grace", tc.name, code)
		}
		checkResult(t, out, true)
	}
}

// hangingServer never answers: each request waits until the client goes
// away. arrived receives a value as each request arrives.
func hangingServer(t *testing.T) (base string, arrived <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case ch <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

// With -w the first signal waits for in-flight requests (here bounded by
// -t 4s against a server that never answers). A second signal exits at once
// with 130 and removes the unfinished file when it is a SIGINT after a
// SIGTERM, or comes after the window; a duplicate inside the window does
// not, and the run ends with its full report.
func TestSecondSignal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		first, then syscall.Signal
		gap         time.Duration
		want        int
	}{
		// Inside the window, but apart enough that the kernel does not hold
		// both pending at once (it would deliver SIGINT, the lower number, first).
		{"TERM-then-INT", syscall.SIGTERM, syscall.SIGINT, 100 * time.Millisecond, 130},
		{"TERM-TERM-later", syscall.SIGTERM, syscall.SIGTERM, signalWindow + 200*time.Millisecond, 130},
		{"INT-INT-later", syscall.SIGINT, syscall.SIGINT, signalWindow + 200*time.Millisecond, 130},
		// Every request ends in its -t timeout: the full report, and the
		// exit code of a run in which no request succeeded.
		{"TERM-TERM-together", syscall.SIGTERM, syscall.SIGTERM, 50 * time.Microsecond, exitNoSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base, arrived := hangingServer(t)
			dir := t.TempDir()
			out := filepath.Join(dir, tc.name+".json")
			cmd := startRun(t, "-z", "60s", "-c", "2", "-w", "-t", "4s", "--no-tui", "-j", "-o", out, base+"/")
			for range 2 { // both connections' requests are in flight
				select {
				case <-arrived:
				case <-time.After(20 * time.Second):
					t.Fatal("no request arrived in 20 s")
				}
			}
			cmd.Process.Signal(tc.first)
			time.Sleep(tc.gap)
			sent := time.Now()
			cmd.Process.Signal(tc.then)
			code := exitWithin(cmd, 10*time.Second)
			if code != tc.want {
				t.Fatalf("exit %d, want %d", code, tc.want)
			}
			if tc.want == 130 {
				if el := time.Since(sent); el > time.Second {
					t.Errorf("exited %v after the second signal, want at once", el)
				}
				if entries, _ := os.ReadDir(dir); len(entries) > 0 {
					for _, e := range entries {
						if e.Name() != "TERM-TERM-together.json" {
							t.Errorf("left behind: %s", e.Name())
						}
					}
				}
				return
			}
			checkResult(t, out, true)
		})
	}
}

// A signal while the run is being set up (here: hail waits for its -D
// FIFO) is held, and stops the run as soon as it starts: exit 0 and a
// complete, empty result.
func TestSignalDuringSetup(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "body")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	out := filepath.Join(dir, "out.json")
	cmd := startRun(t, "-z", "30s", "-c", "2", "--no-tui", "-j", "-o", out, "-m", "POST", "-D", fifo, base+"/echo")
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once hail opened it
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(100 * time.Millisecond)
	w.Write([]byte("body"))
	w.Close()
	start := time.Now()
	if code := exitWithin(cmd, 10*time.Second); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("the run went on %v after setup", el)
	}
	checkResult(t, out, true)
}
