package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// runWith makes a result whose latencies are all near lat and which lasted
// 1 s for n requests.
func runWith(lat time.Duration, n int, url string) *Result {
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
	return CompareRow{Metric: "missing"}
}

func TestCompareSingleRuns(t *testing.T) {
	a := runWith(2*time.Millisecond, 1000, "http://x/")
	b := runWith(time.Millisecond, 2000, "http://x/")
	c := Compare([]*Result{a}, []*Result{b}, []string{"a.json"}, []string{"b.json"})
	if r := row(c, "p99"); r.Verdict != "better" || math.Abs(r.Change+50) > 1 {
		t.Errorf("p99 %+v", r)
	}
	if r := row(c, "requests/s"); r.Verdict != "better" || math.Abs(r.Change-100) > 0.01 {
		t.Errorf("rps %+v", r)
	}
	if r := row(c, "error rate"); r.Verdict != "same" {
		t.Errorf("error rate %+v", r)
	}
	c = Compare([]*Result{b}, []*Result{a}, nil, nil)
	if r := row(c, "p50"); r.Verdict != "worse" {
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
	a := []*Result{runWith(1000*time.Microsecond, 1000, "u"), runWith(1100*time.Microsecond, 1000, "u"), runWith(1300*time.Microsecond, 1000, "u")}
	b := []*Result{runWith(1050*time.Microsecond, 1000, "u"), runWith(1200*time.Microsecond, 1000, "u"), runWith(1250*time.Microsecond, 1000, "u")}
	c := Compare(a, b, []string{"a1", "a2", "a3"}, []string{"b1", "b2", "b3"})
	r := row(c, "p50")
	if r.Verdict != "noise" || r.A.N != 3 || r.A.Min >= r.A.Median || r.A.Max <= r.A.Median {
		t.Errorf("p50 %+v", r)
	}
	far := []*Result{runWith(3*time.Millisecond, 1000, "u"), runWith(3100*time.Microsecond, 1000, "u")}
	if r := row(Compare(a, far, nil, nil), "p50"); r.Verdict != "worse" {
		t.Errorf("clear regression called %s", r.Verdict)
	}
	var txt, md bytes.Buffer
	_ = WriteCompareText(&txt, c)
	_ = WriteCompareMarkdown(&md, c)
	if !strings.Contains(txt.String(), "noise") || !strings.Contains(txt.String(), "A (median of 3, min–max)") {
		t.Errorf("text:\n%s", txt.String())
	}
	if !strings.Contains(md.String(), "| metric | A (median of 3, min–max) |") || !strings.Contains(md.String(), "〰️ noise") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

func TestCompareWarnsNotComparable(t *testing.T) {
	a := runWith(time.Millisecond, 100, "http://a/")
	b := runWith(time.Millisecond, 100, "http://b/")
	b.Hail.Config["connections"] = 64.0
	c := Compare([]*Result{a}, []*Result{b}, []string{"a.json"}, []string{"b.json"})
	joined := strings.Join(c.Warnings, "\n")
	if !strings.Contains(joined, "not comparable: url differs") || !strings.Contains(joined, "the connection count (-c) differs") || len(c.Notes) != 0 {
		t.Errorf("warnings %q, notes %q: with more than the URL different, the URL is a warning too", joined, c.Notes)
	}
}

func TestCompareSteps(t *testing.T) {
	mk := func(lat time.Duration) *Result {
		r := runWith(lat, 100, "u")
		tot := stats.NewTotals()
		_ = tot.LatencyOK.RecordValue(int64(lat))
		tot.Status[200] = 1
		tot.LatencySum = int64(lat)
		r.Hail.Steps = BuildSteps([]string{"login"}, []*stats.Totals{tot}, nil, time.Second)
		return r
	}
	c := Compare([]*Result{mk(time.Millisecond)}, []*Result{mk(2 * time.Millisecond)}, nil, nil)
	if len(c.Steps) != 1 || c.Steps[0].Name != "login" || c.Steps[0].Rows[2].Metric != "p50" || c.Steps[0].Rows[2].Verdict != "worse" {
		t.Errorf("steps %+v", c.Steps)
	}
}

// Two implementations under the same load: a different URL alone is a
// note, not a warning; the labels head the columns; throughput is shown,
// not judged; a generator-limited warning comes once, naming every file.
func TestCompareTwoImplementations(t *testing.T) {
	a := runWith(2*time.Millisecond, 1000, "http://127.0.0.1:5000/")
	b := runWith(time.Millisecond, 2000, "http://127.0.0.1:8080/")
	for _, r := range []*Result{a, b} {
		r.Hail.Verdict.GeneratorLimited = true
		r.Hail.Verdict.Reasons = []string{"CPU at 95% of its cores"}
	}
	c := Compare([]*Result{a}, []*Result{b}, []string{"py.json"}, []string{"go.json"})
	c.A.Label, c.B.Label = "Python VMM", "Go VMM"
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "different targets") || !strings.Contains(c.Notes[0], "http://127.0.0.1:5000/") {
		t.Errorf("notes %q", c.Notes)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "limited py.json, go.json") || strings.Count(c.Warnings[0], "CPU at 95%") != 2 {
		t.Errorf("warnings %q: want one generator warning naming both files", c.Warnings)
	}
	if r := row(c, "throughput"); r.Verdict != "" || math.Abs(r.Change-100) > 0.01 {
		t.Errorf("throughput %+v: shown with its change, not judged", r)
	}
	var txt, md bytes.Buffer
	_ = WriteCompareText(&txt, c)
	_ = WriteCompareMarkdown(&md, c)
	for _, want := range []string{"Python VMM: py.json", "Go VMM: go.json", "metric", "Python VMM", "Go VMM", "Note: different targets"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if !strings.Contains(md.String(), "| metric | Python VMM | Go VMM | change |") || !strings.Contains(md.String(), "(not judged)") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// requests/s is the report's own (every ended request over the run's whole
// time, a -w drain included), never a figure of compare's own; a note
// says what a drain added.
func TestCompareWaitDrain(t *testing.T) {
	mk := func(drain bool) *Result {
		r := runWith(time.Millisecond, 3000, "u")
		r.Hail.Config["duration_seconds"], r.Hail.Config["wait_ongoing"] = 3.0, drain
		r.Summary.Total, r.Summary.RequestsPerSec = 3, 1000
		if drain {
			r.Summary.Total, r.Summary.RequestsPerSec = 3.5, 3010/3.5
			r.Hail.Drain = &Drain{Seconds: 0.5, Requests: 10, InRates: true}
		}
		return r
	}
	c := Compare([]*Result{mk(false)}, []*Result{mk(true)}, []string{"a.json"}, []string{"b.json"})
	if r := row(c, "requests/s"); r.A.Median != 1000 || r.B.Median != 3010/3.5 {
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
	b.Hail.Verdict = Verdict{Bottleneck: BottleneckOthers, GeneratorLimited: true, Reasons: []string{"own lateness p99 3ms"}}
	for _, r := range []*Result{a, b} {
		r.Hail.Target = &Target{PID: 1, PeakRSSBytes: 1 << 20}
	}
	c := Compare([]*Result{a}, []*Result{b}, []string{"a.json"}, []string{"b.json"})
	var txt, md bytes.Buffer
	_ = WriteCompareText(&txt, c)
	_ = WriteCompareMarkdown(&md, c)
	for _, out := range []string{txt.String(), md.String()} {
		first := strings.Index(out, "%")
		for _, want := range []string{"the offered rate (-q) differs (a.json has 1000; b.json has 2000)", "the connection count (-c) differs",
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
	b.Hail.Verdict = Verdict{Bottleneck: BottleneckTarget, Reasons: []string{"waited for a free connection"}}
	if c := Compare([]*Result{a}, []*Result{b}, nil, nil); strings.Contains(strings.Join(c.Warnings, " "), "hail's limits") {
		t.Errorf("warnings %q: the target's limit attributed to hail", c.Warnings)
	}
}
