package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// runWith makes a result whose latencies are all near lat and which lasted
// 1 s for n requests.
func runWith(lat time.Duration, n int, url string) *result.Result {
	tot := stats.NewTotals()
	for i := range n {
		v := int64(lat) + int64(i%100)*int64(lat)/1000
		_ = tot.LatencyOK.RecordValue(v)
		tot.LatencySum += v
		tot.Status[200]++
	}
	tot.BodyBytes = int64(n) * 12
	return Build(Input{Totals: tot, Elapsed: time.Second, Cores: 2, Usage: stats.Usage{User: time.Duration(n) * 10 * time.Microsecond},
		Engine: "net", Start: time.Unix(1700000000, 0), Config: map[string]any{"url": url, "model": "closed", "connections": 8.0}, Version: "test"})
}

func row(c *Comparison, metric string) CompareRow {
	for _, r := range c.Rows {
		if r.Metric == metric {
			return r
		}
	}
	return CompareRow{Metric: "missing", Cells: make([]CompareCell, 2)}
}

// two compares side a with side b (the baseline).
func two(a, b []*result.Result, an, bn []string) *Comparison {
	return Compare([][]*result.Result{a, b}, [][]string{an, bn}, nil, 0)
}

// cell is side i's cell of metric in c.
func cell(c *Comparison, metric string, i int) CompareCell { return row(c, metric).Cells[i] }

func text(t *testing.T, c *Comparison, o CompareOutput) (string, string) {
	t.Helper()
	var txt, md bytes.Buffer
	if err := WriteCompareText(&txt, c, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareMarkdown(&md, c, o); err != nil {
		t.Fatal(err)
	}
	return txt.String(), md.String()
}

func TestCompareSingleRuns(t *testing.T) {
	a := runWith(2*time.Millisecond, 1000, "http://x/")
	b := runWith(time.Millisecond, 2000, "http://x/")
	c := two([]*result.Result{a}, []*result.Result{b}, []string{"a.json"}, []string{"b.json"})
	if r := cell(c, "p99", 1); r.Verdict != "better" || math.Abs(r.Change+50) > 1 {
		t.Errorf("p99 %+v", r)
	}
	if r := cell(c, "requests/s", 1); r.Verdict != "better" || math.Abs(r.Change-100) > 0.01 {
		t.Errorf("rps %+v", r)
	}
	if r := cell(c, "error rate", 1); r.Verdict != "same" {
		t.Errorf("error rate %+v", r)
	}
	if r := cell(c, "p99", 0); r.Verdict != "" || !math.IsNaN(r.Change) {
		t.Errorf("the baseline's own cell %+v", r)
	}
	c = two([]*result.Result{b}, []*result.Result{a}, nil, nil)
	if r := cell(c, "p50", 1); r.Verdict != "worse" {
		t.Errorf("p50 %+v", r)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %v", c.Warnings)
	}
	for _, m := range []string{"requests/s", "mean", "p50", "p90", "p99", "p99.9", "max", "error rate", "throughput", "generator CPU/request"} {
		if row(c, m).Metric != m {
			t.Errorf("no %s row", m)
		}
	}
	if row(c, "target peak RSS").Metric != "missing" {
		t.Error("target rows without a target")
	}
}

// Several runs per side: medians, min–max, and a change inside the spread is noise.
func TestCompareSpreadAndNoise(t *testing.T) {
	a := []*result.Result{runWith(1000*time.Microsecond, 1000, "u"), runWith(1100*time.Microsecond, 1000, "u"), runWith(1300*time.Microsecond, 1000, "u")}
	b := []*result.Result{runWith(1050*time.Microsecond, 1000, "u"), runWith(1200*time.Microsecond, 1000, "u"), runWith(1250*time.Microsecond, 1000, "u")}
	c := two(a, b, []string{"a1", "a2", "a3"}, []string{"b1", "b2", "b3"})
	r := row(c, "p50")
	if a := r.Cells[0]; r.Cells[1].Verdict != "noise" || a.N != 3 || a.Min >= a.Median || a.Max <= a.Median {
		t.Errorf("p50 %+v", r)
	}
	far := []*result.Result{runWith(3*time.Millisecond, 1000, "u"), runWith(3100*time.Microsecond, 1000, "u")}
	if r := cell(two(a, far, nil, nil), "p50", 1); r.Verdict != "worse" {
		t.Errorf("clear regression called %s", r.Verdict)
	}
	txt, md := text(t, c, CompareOutput{})
	if !strings.Contains(txt, "noise") || !strings.Contains(txt, "A (baseline): a1, a2, a3 (3 runs: their median, and min–max)") {
		t.Errorf("text:\n%s", txt)
	}
	if !strings.Contains(md, "| metric | A (baseline) | B |") || !strings.Contains(md, "〰️ noise") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestCompareWarnsNotComparable(t *testing.T) {
	a := runWith(time.Millisecond, 100, "http://a/")
	b := runWith(time.Millisecond, 100, "http://b/")
	b.Hail.Config["connections"] = 64.0
	c := two([]*result.Result{a}, []*result.Result{b}, []string{"a.json"}, []string{"b.json"})
	joined := strings.Join(c.Warnings, "\n")
	if !strings.Contains(joined, "not comparable: url differs") || !strings.Contains(joined, "the connection count (-c) differs") || len(c.Notes) != 0 {
		t.Errorf("warnings %q, notes %q: with more than the URL different, the URL is a warning too", joined, c.Notes)
	}
}

func TestCompareSteps(t *testing.T) {
	mk := func(lat time.Duration) *result.Result {
		r := runWith(lat, 100, "u")
		tot := stats.NewTotals()
		_ = tot.LatencyOK.RecordValue(int64(lat))
		tot.Status[200] = 1
		tot.LatencySum = int64(lat)
		r.Hail.Steps = BuildSteps([]string{"login"}, []*stats.Totals{tot}, nil, time.Second)
		return r
	}
	c := two([]*result.Result{mk(time.Millisecond)}, []*result.Result{mk(2 * time.Millisecond)}, nil, nil)
	if len(c.Steps) != 1 || c.Steps[0].Name != "login" || c.Steps[0].Rows[2].Metric != "p50" || c.Steps[0].Rows[2].Cells[1].Verdict != "worse" {
		t.Errorf("steps %+v", c.Steps)
	}
}

// Two implementations under the same load: a different URL alone is a
// note, not a warning; the labels head the columns; throughput is shown,
// not judged; a generator-limited warning comes once, naming every file.
func TestCompareTwoImplementations(t *testing.T) {
	a := runWith(2*time.Millisecond, 1000, "http://127.0.0.1:5000/")
	b := runWith(time.Millisecond, 2000, "http://127.0.0.1:8080/")
	for _, r := range []*result.Result{a, b} {
		r.Hail.Verdict.GeneratorLimited = true
		r.Hail.Verdict.Reasons = []string{"CPU at 95% of its cores"}
	}
	c := Compare([][]*result.Result{{a}, {b}}, [][]string{{"py.json"}, {"go.json"}}, []string{"Python VMM", "Go VMM"}, 0)
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "different targets") || !strings.Contains(c.Notes[0], "Python VMM has http://127.0.0.1:5000/; Go VMM has http://127.0.0.1:8080/") {
		t.Errorf("notes %q", c.Notes)
	}
	if len(c.Warnings) != 3 || !strings.Contains(c.Warnings[0], "limited py.json, go.json") || !strings.HasPrefix(c.Warnings[1], "py.json: CPU at 95%") || !strings.HasPrefix(c.Warnings[2], "go.json: CPU at 95%") {
		t.Errorf("warnings %q: want one generator warning naming both files, then each file's reasons", c.Warnings)
	}
	if r := cell(c, "throughput", 1); r.Verdict != "" || math.Abs(r.Change-100) > 0.01 {
		t.Errorf("throughput %+v: shown with its change, not judged", r)
	}
	txt, md := text(t, c, CompareOutput{})
	for _, want := range []string{"Python VMM (baseline): py.json", "Go VMM: go.json", "metric", "Python VMM", "Go VMM", "Note: different targets"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	if !strings.Contains(md, "| metric | Python VMM (baseline) | Go VMM |") || !strings.Contains(md, "(not judged)") {
		t.Errorf("markdown:\n%s", md)
	}
}

// requests/s is the report's own (every ended request over the run's whole
// time, a -w drain included), never a figure of compare's own; a note
// says what a drain added.
func TestCompareWaitDrain(t *testing.T) {
	mk := func(drain bool) *result.Result {
		r := runWith(time.Millisecond, 3000, "u")
		r.Hail.Config["duration_seconds"], r.Hail.Config["wait_ongoing"] = 3.0, drain
		r.Summary.Total, r.Summary.RequestsPerSec = 3*time.Second, 1000
		if drain {
			r.Summary.Total, r.Summary.RequestsPerSec = 3500*time.Millisecond, 3010/3.5
			r.Hail.Drain = &result.Drain{Duration: 500 * time.Millisecond, Requests: 10, InRates: true}
		}
		return r
	}
	c := two([]*result.Result{mk(false)}, []*result.Result{mk(true)}, []string{"a.json"}, []string{"b.json"})
	if r := row(c, "requests/s"); r.Cells[0].Median != 1000 || r.Cells[1].Median != 3010/3.5 {
		t.Errorf("requests/s %+v: want each report's own", r)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "b.json: requests/s counts its -w drain too (10 requests ended in the 0.50s") {
		t.Errorf("notes %q", c.Notes)
	}
}

// Unlike runs are warned about before any change is printed: another
// offered rate, another connection count, a side the generator limited;
// target memory at each run's own throughput gets a note.
func TestCompareUnlikeRunsFirst(t *testing.T) {
	a, b := runWith(time.Millisecond, 1000, "u"), runWith(time.Millisecond, 1000, "u")
	a.Hail.Config["rate"], b.Hail.Config["rate"] = 1000.0, 2000.0
	b.Hail.Config["connections"] = 128.0
	b.Hail.Verdict = result.Verdict{Bottleneck: result.BottleneckOthers, GeneratorLimited: true, Reasons: []string{"own lateness p99 3ms"}}
	for _, r := range []*result.Result{a, b} {
		r.Hail.Target = &result.TargetUse{PID: 1, PeakRSSBytes: 1 << 20}
	}
	c := two([]*result.Result{a}, []*result.Result{b}, []string{"a.json"}, []string{"b.json"})
	txt, md := text(t, c, CompareOutput{})
	for _, out := range []string{txt, md} {
		first := strings.Index(out, "%")
		for _, want := range []string{"the offered rate (-q) differs (A has 1000; B has 2000)", "the connection count (-c) differs",
			"the generator, not the target, limited b.json"} {
			if i := strings.Index(out, want); i < 0 || i > first {
				t.Errorf("%q missing or after the first percentage (at %d):\n%s", want, first, out)
			}
		}
		if !strings.Contains(out, "for memory alone compare runs at one fixed -q") {
			t.Errorf("no note on target memory at different throughputs:\n%s", out)
		}
	}
	// A side whose verdict is not generator-side is never said to show hail's limits.
	b.Hail.Verdict = result.Verdict{Bottleneck: result.BottleneckTarget, Reasons: []string{"waited for a free connection"}}
	if c := two([]*result.Result{a}, []*result.Result{b}, nil, nil); strings.Contains(strings.Join(c.Warnings, " "), "hail's limits") {
		t.Errorf("warnings %q: the target's limit attributed to hail", c.Warnings)
	}
}
