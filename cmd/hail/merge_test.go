package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/hail-loadgen/hail/result"
)

func readResultFile(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := readResult(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dbLatencies returns every latency_ns in a --db-url file.
func dbLatencies(t *testing.T, path string) []int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), "SELECT latency_ns FROM requests WHERE error IS NULL")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// exactQuantile is the value at quantile q (0–100) of sorted xs, as
// HdrHistogram's ValueAtQuantile counts: the value of rank q% × n, rounded.
func exactQuantile(xs []int64, q float64) int64 {
	rank := int64(q/100*float64(len(xs)) + 0.5)
	return xs[max(min(rank, int64(len(xs))), 1)-1]
}

// Three shard processes started together (--shard I/3 --start-at), merged,
// equal one process's totals: counts exactly; percentiles equal, within
// HdrHistogram's precision, those of every request the shards logged.
func TestShardsMergeEqualOneProcess(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	dir := t.TempDir()
	const n = 3000
	at := time.Now().Add(1500*time.Millisecond).Unix() + 1
	var cmds []*exec.Cmd
	var errs []*bytes.Buffer
	for i := range 3 {
		cmd := exec.Command(hailBin, "-n", fmt.Sprint(n), "-c", "6", "--no-tui", "--shard", fmt.Sprintf("%d/3", i),
			"--start-at", fmt.Sprint(at), "--db-url", filepath.Join(dir, fmt.Sprintf("s%d.db", i)),
			"-j", "-o", filepath.Join(dir, fmt.Sprintf("s%d.json", i)), base+"/?delay=200us")
		var se bytes.Buffer
		cmd.Stderr = &se
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, errs = append(cmds, cmd), append(errs, &se)
	}
	for i, cmd := range cmds {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("shard %d: %v: %s", i, err, errs[i])
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("shard %d did not finish", i)
		}
	}
	one := filepath.Join(dir, "one.json")
	if _, se, code := hail(t, "-n", fmt.Sprint(n), "-c", "6", "--no-tui", "-j", "-o", one, base+"/?delay=200us"); code != 0 {
		t.Fatalf("single run: %s", se)
	}
	total := filepath.Join(dir, "total.json")
	// The pattern as a shell-less container passes it: hail expands it.
	if _, se, code := hailIn(t, "merge", "-o", total, filepath.Join(dir, "s[0-9].json")); code != 0 {
		t.Fatalf("merge: %s", se)
	}
	m, single := readResultFile(t, total), readResultFile(t, one)
	var starts []int64
	for i := range 3 {
		s := readResultFile(t, filepath.Join(dir, fmt.Sprintf("s%d.json", i)))
		if s.Hail.Shard == nil || s.Hail.Shard.Index != i || s.Hail.Shard.Requests != n/3 || s.Hail.Shard.Connections != 2 {
			t.Errorf("shard %d: %+v", i, s.Hail.Shard)
		}
		starts = append(starts, s.Hail.Start.UnixNano())
	}
	if spread := slices.Max(starts) - slices.Min(starts); spread > int64(100*time.Millisecond) || slices.Min(starts) < at*1e9 {
		t.Errorf("shards started %v apart, first at %d (want at or after %d)", time.Duration(spread), slices.Min(starts), at*1e9)
	}
	mc, sc := m.Hail.Counts, single.Hail.Counts
	if mc.Requests != n || mc.Requests != sc.Requests || mc.Responses != sc.Responses || mc.BodyBytes != sc.BodyBytes ||
		m.StatusCodeDistribution["200"] != single.StatusCodeDistribution["200"] {
		t.Errorf("merged counts %+v, single %+v", mc, sc)
	}
	var lat []int64
	for i := range 3 {
		lat = append(lat, dbLatencies(t, filepath.Join(dir, fmt.Sprintf("s%d.db", i)))...)
	}
	if int64(len(lat)) != mc.Responses {
		t.Fatalf("%d requests logged, %d responses merged", len(lat), mc.Responses)
	}
	slices.Sort(lat)
	p := m.LatencyPercentiles
	for _, c := range []struct {
		q   float64
		got float64
	}{{50, p.P50.Seconds()}, {90, p.P90.Seconds()}, {99, p.P99.Seconds()}, {99.9, p.P999.Seconds()}} {
		want := float64(exactQuantile(lat, c.q)) / 1e9
		if d := (c.got - want) / want; d < -0.001 || d > 0.001 {
			t.Errorf("p%g: merged %v s, exact %v s (%.4f%% off, beyond HdrHistogram's 0.1%%)", c.q, c.got, want, 100*d)
		}
	}
	if want := float64(lat[len(lat)-1]) / 1e9; m.Summary.Slowest.Seconds() < want*0.999 || m.Summary.Slowest.Seconds() > want*1.001 {
		t.Errorf("max %v, exact %v", m.Summary.Slowest, want)
	}
	if m.Hail.Merged == nil || len(m.Hail.Merged.Shards) != 3 || m.Hail.Config["connections"] != 6.0 {
		t.Errorf("merged %+v config %v", m.Hail.Merged, m.Hail.Config)
	}
	if len(m.Hail.Series) == 0 {
		t.Error("no merged series")
	}
}

// A merge of results that are not one run's shards fails naming the field.
func TestMergeMismatch(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	hail(t, "-n", "20", "-c", "2", "--shard", "0/2", "-j", "-o", a, base+"/")
	hail(t, "-n", "20", "-c", "4", "--shard", "1/2", "-j", "-o", b, base+"/")
	_, se, code := hailIn(t, "merge", a, b, "-o", filepath.Join(dir, "t.json"))
	if code != 1 || !strings.Contains(se, "config.connections") {
		t.Errorf("exit %d, %q", code, se)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.json")); err == nil {
		t.Error("a failed merge wrote its output")
	}
	_, se, code = hailIn(t, "merge", a, "-o", filepath.Join(dir, "t.json"))
	if code != 1 || !strings.Contains(se, "shard 1/2 missing") {
		t.Errorf("exit %d, %q", code, se)
	}
}

// Bad results-toolkit flags: one line naming the flag, nothing written.
func TestResultsBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	past := fmt.Sprint(time.Now().Add(-time.Hour).Unix())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "3/3", "http://127.0.0.1:1/"}, "--shard"},
		{[]string{"--shard", "x", "http://127.0.0.1:1/"}, "I/N"},
		{[]string{"--shard", "0/5", "-n", "3", "http://127.0.0.1:1/"}, "fewer requests than shards"},
		{[]string{"--start-at", past, "http://127.0.0.1:1/"}, "in the past"},
		{[]string{"--start-at", "2999-01-01T00:00:00Z", "http://127.0.0.1:1/"}, "more than 24h ahead"},
		{[]string{"--start-at", "soon", "http://127.0.0.1:1/"}, "RFC 3339"},
		{[]string{"--target-pid", "999999999", "http://127.0.0.1:1/"}, "no such process"},
		{[]string{"--target-pid", "1", "--target-pid", "999999999", "http://127.0.0.1:1/"}, "--target-pid 999999999: no such process"},
		{[]string{"--target-cmd", "no-such-hail-proc", "http://127.0.0.1:1/"}, "--target-cmd no-such-hail-proc: no process of that name"},
		{[]string{"--target-cgroup", "/no/such/hail/cgroup", "http://127.0.0.1:1/"}, "--target-cgroup /no/such/hail/cgroup: no such cgroup"},
		{[]string{"--db-url", dir, "http://127.0.0.1:1/"}, "is a directory"},
		{[]string{"--db-url", filepath.Join(dir, "r.db"), "http://host.invalid/"}, "dns lookup"},
		{[]string{"report", filepath.Join(dir, "none.json")}, "none.json"},
		{[]string{"compare", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}, "a.json"},
	} {
		stdout, stderr, code := hailIn(t, tc.args...)
		if code != 1 || stdout != "" || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want %q)", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("bad input left files behind: %v", names)
	}
}

func jsonField(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// A shard whose --start-at has passed starts late, says so, and records by
// how much; hail merge marks the run incomplete, names the shard, writes
// the result and exits 2. A failed shard is merged the same way.
func TestMergeLateAndFailedShard(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	dir := t.TempDir()
	s0, s1 := filepath.Join(dir, "s0.json"), filepath.Join(dir, "s1.json")
	at := time.Now().Add(-3 * time.Second).Format(time.RFC3339Nano)
	if _, se, code := hail(t, "-n", "40", "-c", "2", "--no-tui", "--shard", "0/2", "--start-at", at, "-j", "-o", s0, base+"/"); code != 0 || !strings.Contains(se, "shard 0/2 starts now, late") {
		t.Fatalf("late shard 0: exit %d, %s", code, se)
	}
	if _, se, code := hail(t, "-n", "40", "-c", "2", "--no-tui", "--shard", "1/2", "--start-at", at, "-j", "-o", s1, base+"/"); code != 0 {
		t.Fatalf("late shard 1: exit %d, %s", code, se)
	}
	if r := readResultFile(t, s1); r.Hail.Shard.Late < 3*time.Second || r.Hail.Generator.Machine == "" {
		t.Errorf("shard 1 late %v, machine %q", r.Hail.Shard.Late, r.Hail.Generator.Machine)
	}
	total := filepath.Join(dir, "total.json")
	// Shard 1 starts at least 3 s late (checked above), more when shard
	// 0's run took a while on a slow machine.
	_, se, code := hailIn(t, "merge", s0, s1, "-o", total)
	if code != 2 || !regexp.MustCompile(`incomplete: shard 1/2 started \d+(\.\d+)?s after --start-at`).MatchString(se) || !strings.Contains(se, "hail merge: 2 results (shards [0 1]) -> "+total+": 40 requests") {
		t.Errorf("merge of late shards: exit %d, %q", code, se)
	}
	if m := readResultFile(t, total); len(m.Hail.Merged.Incomplete) != 2 || m.Hail.Counts.Requests != 40 {
		t.Errorf("merged %+v", m.Hail.Merged)
	}
	// Cores: both shards ran here, so the merge counts this machine's once.
	if m := readResultFile(t, total); m.Hail.Generator.Cores != readResultFile(t, s0).Hail.Generator.Cores {
		t.Errorf("merged cores %d, one shard's %d", m.Hail.Generator.Cores, readResultFile(t, s0).Hail.Generator.Cores)
	}

	_, se, code = hailIn(t, "merge", s0, "-o", total, "--failed", "1=OOMKilled (exit code 137)")
	if code != 2 || !strings.Contains(se, "incomplete: shard 1/2 failed: OOMKilled (exit code 137)") {
		t.Errorf("merge with a failed shard: exit %d, %q", code, se)
	}
	if m := readResultFile(t, total); m.Hail.Counts.Requests != 20 || !slices.Contains(m.Hail.Merged.Incomplete, "shard 1/2 failed: OOMKilled (exit code 137)") {
		t.Errorf("merged %d requests, %q", m.Hail.Counts.Requests, m.Hail.Merged.Incomplete)
	}
	_, se, code = hailIn(t, "merge", s0, "--partial", "--output-format", "text")
	if code != 2 || !strings.Contains(se, "incomplete: shard 1/2: no result") {
		t.Errorf("--partial: exit %d, %q", code, se)
	}
	_, se, code = hailIn(t, "merge", s0, "--failed", "x=y")
	if code != 1 || !strings.Contains(se, "--failed \"x=y\": write it as I=REASON") {
		t.Errorf("bad --failed: exit %d, %q", code, se)
	}
}
