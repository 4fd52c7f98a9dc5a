package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine/uringengine"
	"github.com/hail-loadgen/hail/internal/enginetest"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/result"
)

// The causal verdict on a busy machine (the slow tier: HAIL_VERDICT=1,
// two CPUs that nothing else uses; .ci/run runs it after the fast tier).
// Each case gets three attempts: a noisy moment must not fail it, a wrong
// rule fails every attempt.

// slowTier skips t unless the busy-machine tests were asked for.
func slowTier(t *testing.T) {
	t.Helper()
	if os.Getenv("HAIL_VERDICT") == "" {
		t.Skip("set HAIL_VERDICT=1 (needs two quiet CPUs and taskset)")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("needs taskset (util-linux)")
	}
}

// hogs spins busy loops (pinned to cpu unless it is "", at the given nice
// level) until stop is called. Each loop is detached from this process (a
// shell starts it in the background and exits, so it is re-parented):
// this test process is the target (its Truth server is the loopback
// listener), and the target's processes include its descendants — a loop
// started as this process's child would be counted as the target's CPU,
// not as other processes'.
func hogs(t *testing.T, n int, cpu string, nice int) (stop func()) {
	t.Helper()
	loop := "sh -c 'while :; do :; done'"
	if cpu != "" {
		loop = "taskset -c " + cpu + " " + loop
	}
	var pids []int
	for range n {
		out, err := exec.Command("sh", "-c", fmt.Sprintf("nice -n %d %s >/dev/null 2>&1 & echo $!", nice, loop)).Output()
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if _, err := fmt.Sscan(string(out), &pid); err != nil || pid <= 0 {
			t.Fatalf("a busy loop's pid: %q", out)
		}
		pids = append(pids, pid)
	}
	return func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// attempts runs try up to three times until it reports the wanted verdict.
func attempts(t *testing.T, want string, try func() *result.Result) *result.Result {
	t.Helper()
	return attemptsIf(t, want, nil, try)
}

// attemptsIf is attempts for a case that holds only when the run met its
// premise: premise says why a run did not ("" when it did). A run that did
// not is no evidence either way; when none of the three did, the test
// skips, saying why.
func attemptsIf(t *testing.T, want string, premise func(*result.Result) string, try func() *result.Result) *result.Result {
	t.Helper()
	var res *result.Result
	var unmet []string
	for attempt := 1; attempt <= 3; attempt++ {
		res = try()
		v, g := res.Hail.Verdict, res.Hail.Generator
		t.Logf("attempt %d: %s (taken by %q): own lateness p99 %.2f ms, wait p99 %.1f ms; hail CPU %.0f%%, others %.0f%%: %s", attempt,
			v.Bottleneck, v.TakenBy, 1e3*res.Hail.SendDelay.Own.P99.Seconds(), 1e3*res.Hail.SendDelay.ConnWait.P99.Seconds(), 100*g.Utilization, 100*g.OthersCPU,
			strings.Join(v.Reasons, " | "))
		if v.Bottleneck == want && v.GeneratorLimited == report.GeneratorSide(want) {
			return res
		}
		if premise != nil {
			if why := premise(res); why != "" {
				t.Logf("attempt %d: not a test of this case: %s", attempt, why)
				unmet = append(unmet, why)
			}
		}
	}
	if len(unmet) == 3 {
		t.Skipf("no run met the case's premise (%s)", unmet[len(unmet)-1])
	}
	t.Errorf("bottleneck %q, want %q", res.Hail.Verdict.Bottleneck, want)
	return res
}

// A server that serves 10 requests at a time (20 ms each: 500/s), offered
// 2000/s over 10 connections while other processes keep the machine busy
// (at nice 19: they take the CPUs hail leaves idle, not hail's time): the
// target, on both engines — contention is context, not a cause, and the
// target's backpressure outranks it. With three busy loops at hail's own
// priority on hail's own core, at a rate the server sustains (served 1 ms
// each: 10,000/s) and that keeps hail busy (5000/s), hail cannot send on
// time with connections free: other processes. (A hail beside one loop
// wakes in time on this kernel — the uring engine at 6% of its core sent
// with lateness p99 0.2–0.7 ms —: it is not slowed, and the verdict
// rightly says none.)
func TestVerdictCappedTarget(t *testing.T) {
	slowTier(t)
	s := enginetest.StartTruth(t, enginetest.HTTP1)
	for _, engine := range []string{"net", "uring"} {
		t.Run(engine, func(t *testing.T) {
			if engine == "uring" && uringengine.Available() != nil {
				t.Skip("io_uring is not available here")
			}
			t.Run("busy machine", func(t *testing.T) {
				res := attempts(t, result.BottleneckTarget, func() *result.Result {
					stop := hogs(t, 2, "", 19)
					defer stop()
					return pinnedRun(t, "0", "--engine", engine, "-q", "2000", "-c", "10", "-z", "3s", s.URL+"/cap?d=20ms")
				})
				if g, why := res.Hail.Generator, strings.Join(res.Hail.Verdict.Reasons, " "); g.OthersCPU >= 0.2 &&
					!strings.Contains(why, "hail was not slowed") && !strings.Contains(why, "they slowed hail, the target limited the run") {
					t.Errorf("others used %.0f%% of hail's CPUs: the verdict should say so, as context: %s", 100*g.OthersCPU, why)
				}
			})
			t.Run("busy loop on hail's core", func(t *testing.T) {
				// 10 at a time for 1 ms each: 10,000/s, twice the rate asked,
				// which keeps hail busy enough to feel the loops beside it.
				// The target, in this test process and not pinned, may be
				// slowed too (its threads on the busy core, or a host that
				// steals from both): a run whose target could not serve
				// well above the rate asked is not this case.
				fast := func(res *result.Result) string {
					fb := res.Details.FirstByte.Average.Seconds()
					if capacity := 20 / max(fb, 1e-9); capacity < 1.25*5000 {
						return fmt.Sprintf("the target served in %.2f ms on average, %.0f req/s over 20 connections: not well above the 5000/s asked", 1e3*fb, capacity)
					}
					return ""
				}
				attemptsIf(t, result.BottleneckOthers, fast, func() *result.Result {
					stop := hogs(t, 3, "0", 0)
					defer stop()
					return pinnedRun(t, "0", "--engine", engine, "-q", "5000", "-c", "20", "-z", "3s", s.URL+"/cap?d=1ms")
				})
			})
		})
	}
}

// A target on hail's own core that burns CPU for every request (its own
// process, found as the loopback listener), offered more than it
// sustains: the target, and the report says it shares hail's machine; its
// CPU is the target's, not "other processes'".
func TestVerdictTargetSharesHailsCPU(t *testing.T) {
	slowTier(t)
	addr := startBurnServer(t, "0")
	res := attempts(t, result.BottleneckTarget, func() *result.Result {
		return pinnedRun(t, "0", "-q", "1000", "-c", "4", "-z", "3s", "http://"+addr+"/")
	})
	tg := res.Hail.Target
	if tg == nil || tg.Source != "loopback listener" || tg.OnHailCPUs < 0.2 {
		t.Fatalf("target %+v: want the listener's process, found, using a good part of hail's CPU", tg)
	}
	if why := strings.Join(res.Hail.Verdict.Reasons, " "); !strings.Contains(why, fmt.Sprintf("the target (pid %d", tg.PID)) || !strings.Contains(why, "runs on hail's machine") {
		t.Errorf("reasons %q: want the sharing noted", why)
	}
	if g := res.Hail.Generator; g.OthersCPU >= 0.2 {
		t.Errorf("others used %.0f%% of hail's CPUs: the target's CPU counted as other processes'", 100*g.OthersCPU)
	}
}

// The README's first example (hail serve, then hail -n 10k -c 64 against
// it) and hail demo do not warn about their own target, nor blame hail's
// own work. A warning that names the machine — the OS waking an idle hail
// late, or other processes (the hypervisor's steal among them) taking its
// CPU — is the verdict being right about a noisy guest (CI's, at times, in
// every run): each check tries up to three times for a run without one,
// and skips, saying so, when all three met the machine's noise.
func TestFirstExampleDoesNotBlameItsTarget(t *testing.T) {
	slowTier(t)
	base := pinnedServe(t, "0-1")
	var noisy []string
	for range 3 {
		res := pinnedRun(t, "0-1", "-n", "10k", "-c", "64", base+"/")
		v := res.Hail.Verdict
		t.Logf("%s (taken by %q): %s", v.Bottleneck, v.TakenBy, strings.Join(v.Reasons, " | "))
		if res.Hail.Target == nil || res.Hail.Target.Source != "loopback listener" {
			t.Fatalf("target %+v: hail serve's process should be found as the listener", res.Hail.Target)
		}
		if !v.GeneratorLimited {
			noisy = nil
			break
		}
		if !machineWarning(v) {
			t.Fatalf("the first example warns about its own target or hail: %s %q", v.Bottleneck, v.Reasons)
		}
		noisy = append(noisy, "the first example: "+v.Bottleneck)
	}
	if noisy != nil {
		t.Logf("the first example met the machine's noise in each of three runs (%s), which the verdict rightly named", strings.Join(noisy, ", "))
	}
	defer func() {
		if noisy != nil && !t.Failed() {
			t.Skip("the first example met the machine's noise in each of three runs: not checked")
		}
	}()
	for try := 1; try <= 3; try++ {
		out, err := exec.Command(hailBin, "demo", "--duration", "1s").CombinedOutput()
		if err != nil {
			t.Fatalf("hail demo: %v\n%s", err, out)
		}
		s := string(out)
		if !strings.Contains(s, "WARNING: the generator") {
			return
		}
		for _, own := range []string{"(the target's own process took", "(hail's own CPU)", "(hail read the stream late)"} {
			if strings.Contains(s, own) {
				t.Fatalf("hail demo warns about its own server or hail's own work (%s…):\n%s", own, s)
			}
		}
		t.Logf("hail demo warned about the machine (%d of 3):\n%s", try, s)
	}
	t.Skip("hail demo met the machine's noise (the OS's wake-ups or other processes) in each of three runs, which its verdict rightly named")
}

// machineWarning reports whether a verdict's warning names the machine —
// the OS's wake-ups, or processes other than the target (the hypervisor's
// steal among them) — rather than the target's process or hail's own work.
func machineWarning(v result.Verdict) bool {
	return v.Bottleneck == result.BottleneckWakeup || (v.Bottleneck == result.BottleneckOthers && v.TakenBy != "target")
}

// burnServerEnv makes the test binary a target that burns about 2 ms of
// CPU for every request (burnServer).
const burnServerEnv = "HAIL_TEST_BURN_SERVER"

// burnServer serves HTTP on a free loopback port, printing it first, and
// spends about 2 ms of CPU on each request before answering.
func burnServer() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(ln.Addr())
	runtime.GOMAXPROCS(1)
	var sink uint64
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for end := time.Now().Add(2 * time.Millisecond); time.Now().Before(end); {
			for i := range 1000 {
				sink += uint64(i) * sink
			}
		}
		fmt.Fprint(w, "ok")
	}))
	return 0
}

// startBurnServer runs burnServer pinned to cpu until t ends and returns
// its address.
func startBurnServer(t *testing.T, cpu string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("taskset", "-c", cpu, exe)
	cmd.Env = append(os.Environ(), burnServerEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the burning server did not start: %v", err)
	}
	return strings.TrimSpace(line)
}
