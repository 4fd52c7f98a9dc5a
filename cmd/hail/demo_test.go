package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hail demo without a terminal: a line for each run as it starts, then
// the one screen. The closed model lets at most its connections see the
// stall (every other request was sent after it ended: the server held
// only those in flight), the open model many more (the requests due
// during it): coordinated omission, made visible by the counts.
func TestDemoShowsCoordinatedOmission(t *testing.T) {
	t.Parallel()
	start := time.Now()
	stdout, stderr, code := hail(t, "demo", "--duration", "1s", "--connections", "8", "--rate", "600")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("%v\n%s", time.Since(start), stdout)
	lines := strings.Split(stdout, "\n")
	if !strings.HasPrefix(lines[0], "hail demo 1/2: closed model, -c 8 for 1s: GET http://127.0.0.1:") ||
		!strings.HasPrefix(lines[1], "hail demo 2/2: open model, -c 8 -q 600 for 1s: GET http://127.0.0.1:") {
		t.Errorf("the runs are not announced as they start:\n%s", stdout)
	}
	if n := len(lines); n > 40 {
		t.Errorf("%d lines: more than one screen", n)
	}
	for _, l := range lines[2:] { // the summary; the runs' lines hold their URLs
		if len([]rune(l)) > 100 {
			t.Errorf("line wider than 100: %q", l)
		}
	}
	for _, want := range []string{"closed model (-c 8)", "open model (-c 8 -q 600)", "latency p99", "coordinated omission",
		"Verdict, closed model:", "Verdict, open model:", "Try next:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("%q missing", want)
		}
	}
	for _, n := range demoNext {
		if !strings.Contains(stdout, n[0]) {
			t.Errorf("next command %q missing", n[0])
		}
	}
	if strings.Contains(stdout, "not counted as other processes") && strings.Contains(stdout, "pid") {
		t.Errorf("the summary talks about its own server's process:\n%s", stdout)
	}
	m := regexp.MustCompile(`slower than 166\.5ms +([\d,]+) \([\d.]+%\) +([\d,]+) \([\d.]+%\)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no 'slower than' row for half the 333ms stall:\n%s", stdout)
	}
	closed, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	open, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
	if closed > 8 {
		t.Errorf("closed model: %d requests slower than half the stall; only its 8 connections' could be", closed)
	}
	// At 600/s, the requests due in the stall's first half (about 100)
	// waited longer than half of it: counted from their intended times.
	if open < 60 {
		t.Errorf("open model: %d requests slower than half the stall, want about 100", open)
	}
}

// Bad flags get one line and exit 1, before any server starts.
func TestDemoRefusesBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--duration", "500ms"}, {"--connections", "0"}, {"--rate", "0"}} {
		stdout, stderr, code := hailIn(t, append([]string{"demo"}, args...)...)
		if code != 1 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, args[0]) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

// The summary's table and reading come from the runs' numbers; a run that
// did not happen (stopped) says so instead of inventing figures.
func TestDemoSummaryStopped(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	c := demoConfig{dur: 3 * time.Second, conns: 4, rate: 100}
	writeDemoSummary(&b, c, []*demoRun{{name: "closed model"}, {name: "open model", flag: "-q 100", rate: 100}}, 80)
	s := b.String()
	for _, want := range []string{"not run", "Stopped before both runs ended", "Try next:"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q missing:\n%s", want, s)
		}
	}
	if strings.Contains(s, "coordinated omission") {
		t.Errorf("a reading without runs:\n%s", s)
	}
}
