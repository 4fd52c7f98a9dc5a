package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"hail/internal/stats"
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
	if !strings.Contains(joined, "url differs") || !strings.Contains(joined, "connections differs") {
		t.Errorf("warnings %q", joined)
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
