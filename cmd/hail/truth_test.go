package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/enginetest"
	"github.com/hail-loadgen/hail/result"
)

// A server that never answers one request in 20, -t 200ms: every output
// shows the latency of every sent request (the timeouts at ≥ 200 ms) beside
// oha's responses-only numbers, with how many failed — text, JSON,
// markdown, HTML, csv-seconds and the SQLite log.
func TestFailuresInEveryOutput(t *testing.T) {
	t.Parallel()
	s := enginetest.StartTruth(t, enginetest.HTTP1)
	dir := t.TempDir()
	out, db := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.db")
	mustRun(t, "--no-tui", "-n", "400", "-c", "20", "-t", "200ms", "-j", "-o", out, "--db-url", db, s.URL+"/drop?every=20")
	if s.Dropped() != 20 {
		t.Fatalf("the server left %d unanswered, want 20", s.Dropped())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res result.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	a := res.Hail.AllSent
	if a.Failed != 20 || a.P99 < 200*time.Millisecond || res.LatencyPercentiles.P99 >= 200*time.Millisecond {
		t.Fatalf("JSON: all sent %+v, responses p99 %.1f ms", a, 1e3*res.LatencyPercentiles.P99.Seconds())
	}
	render := func(format string) string {
		// The text report's unit follows the slowest response, which is
		// well under a millisecond on a quiet machine: ask for ms.
		stdout, stderr, code := hailIn(t, "report", out, "--output-format", format, "--time-unit", "ms")
		if code != 0 {
			t.Fatalf("hail report --output-format %s: exit %d: %s", format, code, stderr)
		}
		return stdout
	}
	ms := regexp.MustCompile(`[0-9.]+ ?ms`)
	for format, want := range map[string]*regexp.Regexp{
		"text":     regexp.MustCompile(`(?s)Slowest:\t[0-9.]+ ms \(responses only; of all sent: 2[0-9][0-9]\.[0-9]+ ms\).*Latency of all sent requests.*p99 2[0-9][0-9]\.[0-9]+ ms.*400 sent: 380 responses, 20 failed`),
		"markdown": regexp.MustCompile(`\| all sent: 20 failed, 0 cut off \| [^|]+ \| [^|]+ \| [^|]+ \| 2[0-9][0-9]\.[0-9]+ms \|`),
		"html":     regexp.MustCompile(`p99, all sent \(20 failed, 0 cut off\)`),
	} {
		if got := render(format); !want.MatchString(got) {
			t.Errorf("%s report lacks the all-sent latency (%s):\n%s", format, want, got)
		}
	}
	if !ms.MatchString(render("text")) {
		t.Error("no latency in the text report")
	}
	csv := strings.Split(strings.TrimSpace(render("csv")), "\n")
	head := strings.Split(csv[0], ",")
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("csv-seconds has no %s column: %s", name, csv[0])
		return -1
	}
	var worst float64
	var perSecond int64
	for _, line := range csv[1:] {
		cells := strings.Split(line, ",")
		v, _ := strconv.ParseFloat(cells[col("all_sent_max")], 64)
		worst = max(worst, v)
		n, _ := strconv.ParseInt(cells[col("failed")], 10, 64)
		perSecond += n
	}
	if worst < 0.2 || perSecond != 20 {
		t.Errorf("csv-seconds: all_sent_max at most %.3f s, %d failed: want the 20 timeouts, at ≥ 0.2 s", worst, perSecond)
	}
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var failed, p99 int64
	if err := conn.QueryRow(`SELECT failed, p99_ns FROM latency WHERE scope = 'all_sent'`).Scan(&failed, &p99); err != nil || failed != 20 || p99 < 200e6 {
		t.Errorf("SQLite latency table: all_sent failed %d, p99 %d ns (%v)", failed, p99, err)
	}
}

// A run against nothing (every connect refused) says so first with the
// likely cause, writes its result, prints n/a and no NaN, and exits 3;
// JSON keeps oha's null for the latencies.
func TestNothingListening(t *testing.T) {
	t.Parallel()
	dead := enginetest.DeadURL(t, enginetest.HTTP1)
	addr := strings.TrimPrefix(dead, "http://")
	stdout, stderr, code := hail(t, "--no-tui", "-n", "100", dead+"/")
	if code != exitNoSuccess {
		t.Errorf("exit %d, want %d", code, exitNoSuccess)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.HasPrefix(first, "NO REQUEST SUCCEEDED") || !strings.Contains(first, "nothing is listening on "+addr) {
		t.Errorf("first line %q: want the failure and its likely cause", first)
	}
	if strings.Contains(stdout, "NaN") || !strings.Contains(stdout, "Slowest:\tn/a") || !strings.Contains(stderr, "no request succeeded") {
		t.Errorf("stdout:\n%s\nstderr: %s", stdout, stderr)
	}
	if strings.Contains(stdout, "WARNING: the generator") || !strings.Contains(stdout, "Bottleneck: the target") {
		t.Errorf("a dead target is the target's problem, not hail's:\n%s", stdout)
	}
	js, _, code := hail(t, "--no-tui", "-n", "10", "-j", dead+"/")
	var r map[string]any
	if err := json.Unmarshal([]byte(js), &r); err != nil || code != exitNoSuccess {
		t.Fatalf("JSON (exit %d): %v\n%s", code, err, js)
	}
	if sum := r["summary"].(map[string]any); sum["slowest"] != nil || r["hail"].(map[string]any)["counts"].(map[string]any)["not_sent"] != 10.0 {
		t.Errorf("summary %v, counts %v: want oha's null and 10 not sent", sum, r["hail"].(map[string]any)["counts"])
	}
}
