package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
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
// (it was lost in about a third of runs: "interrupted twice"). 12 runs here
// at 100 requests/s (a bug that struck a third of them passes all 12 once
// in 130), 100 in the soak tier.
func TestTimeoutKeepsResult(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("coreutils timeout not installed")
	}
	base := startServe(t)
	dir := t.TempDir()
	runs, parallel := 10, 5 // each of the five timeouts twice
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
				after := fmt.Sprintf("1.%d", i%5) // 1.0 s to 1.4 s: hail, started by timeout, may take 0.4 s to catch signals on a loaded machine
				cmd := exec.Command("timeout", "--preserve-status", after, hailBin, "-z", "30s", "-q", "100", "-c", "2",
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

// stallServer answers every request but the first, which it holds until
// the client goes away, after 2 ms (a closed-model loop on another
// connection stays gentle). answered receives a value as a request is
// answered; idleClosed as a connection hail left idle closes — which hail
// does once a signal or -z has stopped the load, while it lets the held
// request finish (-w): the test's evidence that hail stopped sending.
func stallServer(t *testing.T) (base string, answered, idleClosed <-chan struct{}) {
	t.Helper()
	ans, closed := make(chan struct{}, 100), make(chan struct{}, 100)
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done()
			return
		}
		time.Sleep(2 * time.Millisecond)
		w.Write([]byte("ok"))
		select {
		case ans <- struct{}{}:
		default:
		}
	}))
	var mu sync.Mutex
	idle := map[net.Conn]bool{}
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateIdle:
			idle[c] = true
		case http.StateActive:
			delete(idle, c)
		case http.StateClosed:
			if idle[c] {
				closed <- struct{}{}
			}
			delete(idle, c)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, ans, closed
}

// With -w the first signal waits for in-flight requests (here one the
// server holds, bounded by -t 4s). A second signal exits at once with 130
// and removes the unfinished file when it is a SIGINT after a SIGTERM, or
// comes after the window; a duplicate inside the window does not, and the
// run ends with its full report. The second signal is sent once hail has
// taken the first (it closed its idle connection), then the window after
// that: on a loaded machine hail may take a signal late, and a fixed gap
// from the first signal's sending was not a gap hail saw.
func TestSecondSignal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		first, then syscall.Signal
		gap         time.Duration // after hail took the first; together: after sending it
		together    bool
		want        int
	}{
		{"TERM-then-INT", syscall.SIGTERM, syscall.SIGINT, 0, false, 130},
		{"TERM-TERM-later", syscall.SIGTERM, syscall.SIGTERM, signalWindow + 100*time.Millisecond, false, 130},
		{"INT-INT-later", syscall.SIGINT, syscall.SIGINT, signalWindow + 100*time.Millisecond, false, 130},
		// The held request ends in its -t timeout: the full report, the
		// other requests' responses in it.
		{"TERM-TERM-together", syscall.SIGTERM, syscall.SIGTERM, 50 * time.Microsecond, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base, answered, idleClosed := stallServer(t)
			dir := t.TempDir()
			out := filepath.Join(dir, tc.name+".json")
			cmd := startRun(t, "-z", "60s", "-c", "2", "-q", "4", "-w", "-t", "4s", "--no-tui", "-j", "-o", out, base+"/")
			select { // one request held, another answered: one connection idle
			case <-answered:
			case <-time.After(20 * time.Second):
				t.Fatal("no request was answered in 20 s")
			}
			cmd.Process.Signal(tc.first)
			if !tc.together {
				select {
				case <-idleClosed:
				case <-time.After(20 * time.Second):
					t.Fatal("hail did not stop the load within 20 s of the first signal")
				}
			}
			time.Sleep(tc.gap) // the window, from when hail took the first signal
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
						t.Errorf("left behind: %s", e.Name())
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
