package main

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/serve/servetest"
)

// hail report re-renders a saved result in every format; hail compare
// reads several results per side.
func TestReportAndCompare(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, p := range []string{a, b} {
		if _, se, code := hail(t, "-n", "500", "-c", "4", "-j", "-o", p, base+"/"); code != 0 {
			t.Fatal(se)
		}
	}
	for format, want := range map[string]string{"text": "Summary:", "json": `"summary"`, "csv": "second,span,", "markdown": "| requests | requests/s |", "html": `id="chart-spectrum"`} {
		stdout, se, code := hailIn(t, "report", a, "--output-format", format)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("report %s: exit %d, %q, stderr %q", format, code, stdout[:min(len(stdout), 200)], se)
		}
	}
	page := filepath.Join(dir, "r.html")
	if _, se, code := hailIn(t, "report", a, "--output-format", "html", "-o", page); code != 0 {
		t.Fatal(se)
	}
	stdout, se, code := hailIn(t, "compare", a+","+b, b+","+a)
	if code != 0 || !strings.Contains(stdout, "requests/s") || !strings.Contains(stdout, "(2 runs: their median, and min–max)") || !strings.Contains(stdout, "noise") {
		t.Errorf("compare: exit %d, %s %s", code, stdout, se)
	}
	stdout, _, code = hailIn(t, "compare", "--output-format", "markdown", a, b)
	if code != 0 || !strings.Contains(stdout, "| metric | A (baseline) | B |") {
		t.Errorf("compare markdown: exit %d, %s", code, stdout)
	}
}

// --output-format html works directly on a run.
func TestHTMLFromRun(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	stdout, se, code := hail(t, "-n", "200", "-c", "2", "--output-format", "html", base+"/")
	if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(stdout, `id="chart-histogram"`) {
		t.Errorf("exit %d, %.200q %s", code, stdout, se)
	}
}

func countRows(t *testing.T, path string) (n, complete, records int64) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM requests").Scan(&n); err != nil {
		t.Fatal(err)
	}
	var ok string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %q %v", ok, err)
	}
	_ = db.QueryRowContext(ctx, "SELECT complete, records FROM runs ORDER BY id DESC LIMIT 1").Scan(&complete, &records)
	return
}

// --db-url logs every request; Ctrl-C still writes every measured request
// and closes the file cleanly; a second Ctrl-C exits at once and leaves a
// file that is not corrupt.
func TestDBURLAndInterrupts(t *testing.T) {
	t.Parallel()
	base, srv := servetest.Start(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	out := filepath.Join(dir, "r.json")
	if _, se, code := hail(t, "-n", "2000", "-c", "4", "--db-url", db, "-j", "-o", out, base+"/"); code != 0 {
		t.Fatal(se)
	}
	if n, complete, rec := countRows(t, db); n != 2000 || complete != 1 || rec != 2000 {
		t.Errorf("rows %d complete %d records %d, want 2000", n, complete, rec)
	}

	// One Ctrl-C: everything measured is in the file.
	db2 := filepath.Join(dir, "i.db")
	cmd := exec.Command(hailBin, "-z", "60s", "-c", "4", "--no-tui", "--db-url", db2, "-j", "-o", out, base+"/?delay=1ms")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitArrivals(t, srv, 2000+100)
	cmd.Process.Signal(syscall.SIGINT)
	waitExit(t, cmd, 0)
	raw, _ := os.ReadFile(out)
	var doc struct {
		Hail struct{ Counts struct{ Requests int64 } }
	}
	jsonField(t, raw, &doc)
	if n, complete, rec := countRows(t, db2); n != doc.Hail.Counts.Requests || n == 0 || complete != 1 || rec != n {
		t.Errorf("after Ctrl-C: %d rows (complete %d, records %d), the report counts %d", n, complete, rec, doc.Hail.Counts.Requests)
	}

	// Two Ctrl-Cs: exit 130 at once; the file may lack the last batch but
	// opens cleanly. (The second signal comes after the window in which it
	// would count as the first; -w keeps the run waiting for its slow
	// requests meanwhile, unless none was in flight: then it may already
	// have finished cleanly, with 0.)
	db3 := filepath.Join(dir, "k.db")
	cmd = exec.Command(hailBin, "-z", "60s", "-c", "4", "-w", "-t", "10s", "--no-tui", "--db-url", db3, base+"/?delay=1ms:99,20s:1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitRows(t, db3)
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(signalWindow + 100*time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	waitExit(t, cmd, 130, 0)
	if n, _, _ := countRows(t, db3); n == 0 {
		t.Error("no row survived a double Ctrl-C after the first batch was written")
	}
}

// waitRows waits until a run logging to the SQLite file at path has
// committed its first batch of rows, failing the test after 20 s.
func waitRows(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int64
		if db.QueryRow("SELECT count(*) FROM requests").Scan(&n) == nil && n > 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("no row in %s after 20 s", path)
		}
	}
}

func waitExit(t *testing.T, cmd *exec.Cmd, want ...int) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("hail did not exit")
	}
	if got := cmd.ProcessState.ExitCode(); !slices.Contains(want, got) {
		t.Errorf("exit %d, want %v", got, want)
	}
}

// --metrics-addr serves Prometheus/OpenMetrics metrics during the run;
// --target-pid samples a process (this test process serves the target).
func TestMetricsAndTarget(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(hailBin, "-z", "3s", "-c", "2", "-q", "500", "--no-tui", "--metrics-addr", "127.0.0.1:0",
		"--target-pid", strconv.Itoa(os.Getpid()), "-j", "-o", out, base+"/")
	addr, se := startMetrics(t, cmd)
	// Scrape until the first target sample is in (a second into the run).
	wants := []string{"hail_requests_total ", `hail_responses_total{code="200"}`, `hail_request_duration_seconds_bucket{le="0.001"}`,
		"hail_in_flight_requests ", "hail_schedule_lag_seconds_count ", "hail_target_rss_bytes ", "hail_run_info{"}
	var text, ctype string
	var lack []string
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		text, ctype, lack = scrape(addr), "", nil
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			ctype, text = text[:i], text[i+1:]
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				lack = append(lack, want)
			}
		}
		if len(lack) == 0 || time.Now().After(end) {
			break
		}
	}
	if len(lack) > 0 {
		cmd.Process.Kill()
		t.Fatalf("metrics lack %q (%s)\n%s", lack, se.String(), text)
	}
	if !strings.Contains(ctype, "openmetrics") {
		t.Errorf("content type %q", ctype)
	}
	waitExit(t, cmd, 0)
	r := readResultFile(t, out)
	tg := r.Hail.Target
	if tg == nil || tg.PID != os.Getpid() || tg.PeakRSSBytes < 1<<20 || tg.Samples < 2 || tg.CPU.Seconds() <= 0 {
		t.Fatalf("target %+v", tg)
	}
	if s := r.Hail.Series; len(s) < 2 || s[1].TargetRSS == 0 {
		t.Errorf("series without target samples: %+v", s)
	}
	stdout, _, _ := hailIn(t, "report", out)
	if !strings.Contains(stdout, "Target process (pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("text report lacks the target:\n%s", stdout)
	}
}

// scrape returns the OpenMetrics scrape of addr's /metrics, its content
// type on the first line; "" until it answers.
func scrape(addr string) string {
	req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Content-Type") + "\n" + string(body)
}

// Two implementations of a service under the same load: hail compare names
// the sides (--label, or NAME=FILE), notes the different targets instead of
// calling the runs not comparable, and does not judge throughput.
func TestCompareLabelsTwoTargets(t *testing.T) {
	t.Parallel()
	one, two := startServe(t), startServe(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "py.json"), filepath.Join(dir, "go.json")
	for p, base := range map[string]string{a: one, b: two} {
		if _, se, code := hail(t, "-n", "300", "-c", "2", "-j", "-o", p, base+"/"); code != 0 {
			t.Fatal(se)
		}
	}
	for _, args := range [][]string{
		{"compare", "--label", "Python VMM", "--label", "Go VMM", a, b},
		{"compare", "Python VMM=" + a, "Go VMM=" + b},
	} {
		stdout, se, code := hail(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", args, code, se)
		}
		header := ""
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(l, "metric") {
				header = l
			}
		}
		if !strings.Contains(header, "Python VMM") || !strings.Contains(header, "Go VMM") || strings.Contains(stdout, "not comparable") ||
			!strings.Contains(stdout, "Note: different targets") || !strings.Contains(stdout, "Python VMM (baseline): "+a) {
			t.Errorf("%v:\n%s", args, stdout)
		}
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(l, "throughput") && (strings.Contains(l, "better") || strings.Contains(l, "worse")) {
				t.Errorf("throughput judged: %q", l)
			}
		}
	}
	if _, se, code := hailIn(t, "compare", "--label", "x", "--label", "x", a, b); code != 1 || !strings.Contains(se, "are both named \"x\"") {
		t.Errorf("same labels: exit %d, %s", code, se)
	}
}
