package tui

// End-to-end: the hail binary in a real terminal (tmux), against the
// built-in server. tmux is installed by .ci/run; without it these skip.

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/testtier"
)

var hailBin string // built by TestMain when tmux is there

func TestMain(m *testing.M) {
	testtier.WaitBound(8) // the end-to-end tests wait on tmux and hail
	code := func() int {
		if _, err := exec.LookPath("tmux"); err != nil || !testtier.On(testtier.Terminal) {
			return m.Run()
		}
		bin, unlock, err := buildHail()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer unlock()
		hailBin = bin
		return m.Run()
	}()
	os.Exit(code)
}

// buildHail builds hail at one path in the user's cache directory for
// this checkout, held under a lock until unlock (a run of these tests in
// the same checkout waits): go build leaves a binary that is up to date as
// it is, so a second run links nothing (a link of hail into a new
// directory costs 2 s of CPU).
func buildHail() (bin string, unlock func(), err error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	here, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(cache, "hail-tests", fmt.Sprintf("%x", sha256.Sum256([]byte(here)))[:16])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return "", nil, err
	}
	bin = filepath.Join(dir, "hail")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/hail-loadgen/hail/cmd/hail").CombinedOutput(); err != nil {
		lock.Close()
		return "", nil, fmt.Errorf("building hail: %v\n%s", err, out)
	}
	return bin, func() { lock.Close() }, nil
}

// tmuxServer is a private tmux server (its own socket, in the test's
// temporary directory), killed with the test.
type tmuxServer struct {
	t    *testing.T
	sock string
}

func newTmux(t *testing.T) *tmuxServer {
	t.Helper()
	testtier.Require(t, testtier.Terminal)
	if hailBin == "" {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	dir, err := os.MkdirTemp("", "hail-tmux") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	x := &tmuxServer{t: t, sock: filepath.Join(dir, "sock")}
	t.Cleanup(func() {
		exec.Command("tmux", "-S", x.sock, "kill-server").Run()
		os.RemoveAll(dir)
	})
	return x
}

func (x *tmuxServer) run(args ...string) string {
	x.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", x.sock}, args...)...)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		x.t.Fatalf("tmux %v: timed out", args)
	}
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs shell command line in a new detached w×h session; the pane
// stays after hail exits, showing its exit code.
func (x *tmuxServer) start(name string, w, h int, line string) {
	x.t.Helper()
	x.run("new-session", "-d", "-s", name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h),
		line+"; echo HAIL-EXIT=$?; sleep 60")
}

// capture returns the visible screen; with history, the scrollback too.
func (x *tmuxServer) capture(name string, history bool) string {
	x.t.Helper()
	args := []string{"capture-pane", "-p", "-t", name}
	if history {
		args = append(args, "-S", "-300")
	}
	return x.run(args...)
}

// waitFor polls the pane until every want shows up, or fails after limit.
func (x *tmuxServer) waitFor(name string, history bool, limit time.Duration, want ...string) string {
	x.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := x.capture(name, history)
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("%s: %q did not appear within %v; screen:\n%s", name, missing, limit, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func startServer(t *testing.T) string {
	u, _ := servetest.Start(t)
	return u
}

// hailLine is the shell command running hail with args (NO_COLOR keeps
// the captures plain; the escape codes are tmux's business anyway).
func hailLine(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + a + "'"
	}
	return "NO_COLOR=1 LANG=C.UTF-8 " + hailBin + " " + strings.Join(q, " ")
}

var (
	elapsedRe = regexp.MustCompile(`(\d+\.\d)s / 20\.0s`)
	totalRe   = regexp.MustCompile(`total ([\d,]+)`)
)

// The live view shows its panels with moving numbers, q stops the run,
// and the final report prints as with --no-tui.
func TestTUIInTmux(t *testing.T) {
	t.Parallel()
	x := newTmux(t)
	url := startServer(t)
	x.start("big", 120, 40, hailLine("-z", "20s", "-c", "4", url+"/?delay=1ms"))
	panels := []string{"Requests/s", "Latency (", "Latency histogram", "Status codes & errors", "[200]",
		"Connections & I/O", "Generator health", "CPU", "lag p99", "queued", "p50", "p90", "p99", "p99.9", "max", "q stop"}
	// Wait for the first collector tick, so the panels hold numbers.
	first := x.waitFor("big", false, 15*time.Second, append(panels, "total ")...)
	// Then for the next, which moves the numbers.
	second := first
	moved := func(re *regexp.Regexp) bool {
		a, b := re.FindStringSubmatch(first), re.FindStringSubmatch(second)
		return a != nil && b != nil && a[1] != b[1]
	}
	for end := time.Now().Add(10 * time.Second); !(moved(elapsedRe) && moved(totalRe)) && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		second = x.capture("big", false)
	}
	for _, p := range panels {
		if !strings.Contains(second, p) {
			t.Errorf("second capture lacks %q:\n%s", p, second)
		}
	}
	for _, s := range []string{first, second} {
		for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("line %d is %d wide: %q", i, n, l)
			}
		}
	}
	e1, e2 := elapsedRe.FindStringSubmatch(first), elapsedRe.FindStringSubmatch(second)
	n1, n2 := totalRe.FindStringSubmatch(first), totalRe.FindStringSubmatch(second)
	if e1 == nil || e2 == nil || e1[1] == e2[1] {
		t.Errorf("elapsed did not move between captures: %v, %v", e1, e2)
	}
	if n1 == nil || n2 == nil || n1[1] == n2[1] {
		t.Errorf("request total did not move between captures: %v, %v\n%s\n%s", n1, n2, first, second)
	}
	if testing.Verbose() {
		t.Logf("screen:\n%s", second)
	}
	x.run("send-keys", "-t", "big", "q")
	out := x.waitFor("big", true, 15*time.Second, "HAIL-EXIT=")
	for _, want := range []string{"Summary:", "Success rate:", "Requests/sec:", "Status code distribution:", "[200]", "Interrupted:", "HAIL-EXIT=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("after q: %q missing:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Requests/s ─") {
		t.Errorf("the live view was left on the screen after it quit:\n%s", out)
	}
}

// A tiny terminal gets the compact view, survives resizes, and the report
// still prints when the run ends by itself.
func TestTUITinyTerminal(t *testing.T) {
	t.Parallel()
	x := newTmux(t)
	url := startServer(t)
	x.start("tiny", 40, 12, hailLine("-z", "3s", "-c", "2", url+"/?delay=1ms"))
	s := x.waitFor("tiny", false, 15*time.Second, "hail", "req/s", "q stop")
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 40 {
			t.Errorf("line %d is %d wide: %q", i, n, l)
		}
	}
	x.run("resize-window", "-t", "tiny", "-x", "80", "-y", "24")
	x.waitFor("tiny", false, 5*time.Second, "Requests/s", "Latency histogram")
	x.run("resize-window", "-t", "tiny", "-x", "30", "-y", "8")
	time.Sleep(300 * time.Millisecond)
	out := x.waitFor("tiny", true, 15*time.Second, "HAIL-EXIT=")
	for _, want := range []string{"Summary:", "Success rate:", "HAIL-EXIT=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing:\n%s", want, out)
		}
	}
	if strings.Contains(out, "panic") {
		t.Errorf("panic:\n%s", out)
	}
}

// q twice exits at once (code 130, no report), as a second SIGINT does.
// Both presses arrive together, before the stopped run can end by itself.
func TestTUIQuitTwice(t *testing.T) {
	t.Parallel()
	x := newTmux(t)
	url := startServer(t)
	x.start("twice", 80, 24, hailLine("-z", "20s", "-c", "2", url+"/?delay=10s"))
	x.waitFor("twice", false, 15*time.Second, "Requests/s")
	x.run("send-keys", "-t", "twice", "q", "C-c")
	out := x.waitFor("twice", true, 10*time.Second, "HAIL-EXIT=")
	if !strings.Contains(out, "HAIL-EXIT=130") || !strings.Contains(out, "interrupted twice") {
		t.Errorf("second key did not exit at once with 130:\n%s", out)
	}
	if strings.Contains(out, "Summary:") {
		t.Errorf("a report printed after exiting at once:\n%s", out)
	}
}

// With stdout not a terminal hail runs as with --no-tui: no live view, and
// not one escape code in what it writes to stdout.
func TestTUINotOnAPipe(t *testing.T) {
	t.Parallel()
	x := newTmux(t)
	url := startServer(t)
	out := filepath.Join(t.TempDir(), "out.txt")
	x.start("pipe", 100, 30, hailLine("-n", "500", "-c", "2", url+"/")+" > "+out)
	screen := x.waitFor("pipe", false, 15*time.Second, "HAIL-EXIT=0")
	if strings.Contains(screen, "Requests/s") || strings.Contains(screen, "q stop") {
		t.Errorf("the live view showed with stdout redirected:\n%s", screen)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Summary:") {
		t.Errorf("no report on stdout:\n%s", b)
	}
	if strings.Contains(string(b), "\x1b") {
		t.Errorf("escape codes on stdout:\n%q", b)
	}
}

var stepsHeadRe = regexp.MustCompile(`step +requests +req/s +errors +checks +p50 (ns|µs|ms|s) +p99 (ns|µs|ms|s) +misses +yields +status codes`)

// A scenario's live view: the title names the scenario, its method mix and
// the stage in progress; the Steps panel has a row per step with requests,
// checks, latency with its unit, status codes, misses and yields; the
// Target panel shows --target-pid's RSS and CPU, now and over time.
func TestTUIScenarioInTmux(t *testing.T) {
	t.Parallel()
	x := newTmux(t)
	url := startServer(t)
	file := filepath.Join(t.TempDir(), "mix.yaml")
	src := `name: tui-mix
base: ` + url + `
steps:
  - {name: create, weight: 6, method: POST, path: /items, capture: {vms: {json: id}}, expect: {status: 201}}
  - {name: query, weight: 3, path: '/items/{{pick vms}}', expect: {status: 200, body_contains: never-there}}
  - {name: destroy, weight: 1, method: DELETE, path: '/items/{{take vms}}'}
stages:
  - {duration: 10s, connections: 4}
  - {duration: 10s, connections: 8}
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	x.start("scen", 160, 48, hailLine("run", file, "--target-pid", fmt.Sprint(os.Getpid())))
	want := []string{"hail tui-mix", "POST 60% · GET 30% · DELETE 10%", "stage 1/2:", "/ 4 connections",
		"Steps", "create", "201×", "query", "destroy", "204×",
		fmt.Sprintf("Target process (pid %d)", os.Getpid()), "RSS ", "CPU ", "RSS (MiB)", "CPU (% of a core)"}
	screen := x.waitFor("scen", false, 20*time.Second, want...)
	if !stepsHeadRe.MatchString(screen) {
		t.Errorf("no steps header with the latency unit:\n%s", screen)
	}
	var query []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "│query ") {
			query = strings.Fields(strings.Trim(l, "│ "))
		}
	}
	// step requests req/s errors checks p50 p99 misses yields codes…: every
	// query fails its body check.
	if len(query) < 9 || query[3] == "0" || query[3] != query[4] || query[1] == "0" {
		t.Errorf("query row %q: its errors should all be failed checks", query)
	}
	for i, l := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 160 {
			t.Errorf("line %d is %d wide: %q", i, n, l)
		}
	}
	if testing.Verbose() {
		t.Logf("screen:\n%s", screen)
	}
	x.run("send-keys", "-t", "scen", "q")
	out := x.waitFor("scen", true, 15*time.Second, "HAIL-EXIT=")
	for _, w := range []string{"Steps:", "check failed: body_contains", `query: check body contains "never-there" failed`} {
		if !strings.Contains(out, w) {
			t.Errorf("report after q lacks %q:\n%s", w, out)
		}
	}
}

// hail demo in a terminal: the live view shows at once for each of its two
// runs (the closed model, then the open one, each with its target's
// process), then the one screen with both runs, the verdicts and the next
// commands; the view is gone and no full report scrolls the screen away.
func TestDemoInTmux(t *testing.T) {
	t.Parallel()
	x := newTmux(t)
	x.start("demo", 150, 45, hailLine("demo", "--duration", "1500ms", "--connections", "8", "--rate", "500"))
	x.waitFor("demo", false, 10*time.Second, "stall=500ms@500ms", "8 connections · closed model", "Requests/s", "Target process")
	x.waitFor("demo", false, 15*time.Second, "stall=500ms@500ms", "open model, -q 500", "Requests/s", "Target process")
	out := x.waitFor("demo", false, 20*time.Second, "HAIL-EXIT=")
	for _, want := range []string{"closed model (-c 8)", "open model (-c 8 -q 500)", "slower than 250ms",
		"Verdict, closed model:", "Verdict, open model:", "Try next:", "hail serve &", "HAIL-EXIT=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing from the last screen:\n%s", want, out)
		}
	}
	for _, gone := range []string{"Requests/s ─", "Summary:", "Response time histogram"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q on the last screen:\n%s", gone, out)
		}
	}
}

// q in hail demo's live view stops the run in progress and skips the
// next: the screen shows what ran and says so, exit 0.
func TestDemoInTmuxStopped(t *testing.T) {
	t.Parallel()
	x := newTmux(t)
	x.start("demostop", 150, 45, hailLine("demo", "--duration", "20s", "--connections", "4"))
	x.waitFor("demostop", false, 10*time.Second, "closed model", "Requests/s")
	x.run("send-keys", "-t", "demostop", "q")
	out := x.waitFor("demostop", false, 15*time.Second, "HAIL-EXIT=")
	for _, want := range []string{"closed model (-c 4)", "not run", "Verdict, closed model:", "Stopped before both runs ended", "Try next:", "HAIL-EXIT=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing from the last screen:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Verdict, open model:") {
		t.Errorf("the open-model run ran after q:\n%s", out)
	}
}
