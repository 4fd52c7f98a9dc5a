package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// stagedRun is a run of two connection stages whose latencies are near
// lat1 and lat2, the target's RSS rss, against url, with a scenario
// configuration whose step path is path.
func stagedRun(lat1, lat2 time.Duration, rss int64, url, path string) *result.Result {
	slot := func(lat time.Duration, n int) *stats.Totals {
		tot := stats.NewTotals()
		for i := range n {
			v := int64(lat) + int64(i%100)*int64(lat)/1000
			_ = tot.LatencyOK.RecordValue(v)
			tot.LatencySum += v
			tot.Status[200]++
		}
		return tot
	}
	slots := []*stats.Totals{slot(lat1, 1000), slot(lat2, 3000)}
	all := stats.NewTotals()
	all.Add(slots[0])
	all.Add(slots[1])
	series := []stats.Second{{Index: 0, Span: time.Second, ConnsOpen: 500, TargetRSS: rss / 2, TargetCPU: 0.5}, {Index: 1, Span: time.Second, ConnsOpen: 500, TargetRSS: rss / 2},
		{Index: 2, Span: time.Second, ConnsOpen: 5000, TargetRSS: rss, TargetCPU: 1}, {Index: 3, Span: time.Second, ConnsOpen: 5000, TargetRSS: rss}}
	cfg := map[string]any{"url": url, "model": "closed", "connections": 5000.0,
		"scenario": map[string]any{"name": "vm", "steps": []any{map[string]any{"name": "create", "target": path, "weight": 70.0}}}}
	r := Build(Input{Totals: all, Series: series, Elapsed: 4 * time.Second, Cores: 2, Engine: "uring", Start: time.Unix(1700000000, 0),
		Config: cfg, Version: "test", Target: &result.TargetUse{PID: 7, PeakRSSBytes: rss, Samples: 4}})
	clock := schedule.NewStageClock([]schedule.Stage{{Duration: 2 * time.Second, Target: 500, Step: true}, {Duration: 2 * time.Second, Target: 5000, Step: true, Name: "peak"}}, 0)
	r.Hail.Stages = BuildStages(StageInput{Clock: clock, Kind: "connections", Totals: slots, Series: series, Stopped: 4 * time.Second})
	return r
}

// Three sides (the seed's Python REST, Go REST, Go gRPC) against a chosen
// baseline: every side a column, each change against the baseline with
// its verdict, a summary table with the run's and each stage's
// requests/s, p99 and target RSS, and the settings that differ as a short
// table of fields — not the scenario's JSON.
func TestCompareThreeSides(t *testing.T) {
	py := stagedRun(2*time.Millisecond, 40*time.Millisecond, 300<<20, "http://127.0.0.1:5000", "/vms")
	goREST := stagedRun(time.Millisecond, 4*time.Millisecond, 40<<20, "http://127.0.0.1:8080", "/vms")
	grpc := stagedRun(800*time.Microsecond, 3*time.Millisecond, 30<<20, "grpc://127.0.0.1:9090", "vm.v1.VMs/Create")
	c := Compare([][]*result.Result{{py}, {goREST}, {grpc}}, [][]string{{"py.json"}, {"go.json"}, {"grpc.json"}}, []string{"Python REST", "Go REST", "Go gRPC"}, 0)
	if len(c.Stages) != 2 || c.Stages[1].Label != "stage 2 (peak)" || c.Stages[1].Load != "5000 conns" {
		t.Fatalf("stages %+v", c.Stages)
	}
	p99 := func(rows []CompareRow) CompareRow {
		for _, r := range rows {
			if r.Metric == "p99, all sent" {
				return r
			}
		}
		t.Fatal("no p99 row")
		return CompareRow{}
	}
	if r := p99(c.Stages[1].Rows); r.Cells[1].Verdict != "better" || r.Cells[2].Verdict != "better" || r.Cells[1].Change > -80 {
		t.Errorf("stage 2's p99: %+v; Go is ten times faster than Python at 5000 connections", r.Cells)
	}
	h := c.Headline()
	var names []string
	for _, r := range h {
		names = append(names, r.Metric)
	}
	for _, want := range []string{"requests/s", "p99, all sent", "target peak RSS", "stage 1, 500 conns: p99, all sent", "stage 2 (peak), 5000 conns: target peak RSS"} {
		if !strings.Contains(strings.Join(names, "|"), want) {
			t.Errorf("the summary lacks %q: %q", want, names)
		}
	}
	if len(c.Settings) != 2 || c.Settings[0].Field != "scenario.steps[0].target" || c.Settings[1].Field != "url" ||
		c.Settings[0].Values[2] != "vm.v1.VMs/Create" {
		t.Errorf("settings that differ: %+v", c.Settings)
	}
	for _, w := range c.Warnings {
		if strings.Contains(w, "{") {
			t.Errorf("a warning dumps JSON: %q", w)
		}
	}
	txt, md := text(t, c, CompareOutput{})
	for _, want := range []string{"Python REST (baseline): py.json", "Summary:", "Every metric:", "Settings that differ:", "Stage 2 (peak) (5000 conns):"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	if !strings.Contains(md, "| metric | Python REST (baseline) | Go REST | Go gRPC |") || !strings.Contains(md, "| stage 2 (peak), 5000 conns: target peak RSS | 300.00 MiB | 40.00 MiB (-86.7% ✅ better) | 30.00 MiB (-90.0% ✅ better) |") {
		t.Errorf("markdown:\n%s", md)
	}
	// Another baseline: the changes are against it.
	c = Compare([][]*result.Result{{py}, {goREST}, {grpc}}, nil, nil, 1)
	if r := p99(c.Stages[1].Rows); r.Cells[1].Verdict != "" || r.Cells[0].Verdict != "worse" || r.Cells[2].Verdict != "better" {
		t.Errorf("against Go REST: %+v", r.Cells)
	}
	var page bytes.Buffer
	if err := WriteCompareHTML(&page, c, CompareOutput{Checks: []ChangeCheck{{Rule: "p99>+10%", Side: "C", Measured: "p99 1ms → 2ms (+100%)", Fail: true, Why: "raw change"}}}, "test"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Summary</h2>", "<h2>Settings that differ</h2>", "class=\"worse\"", "class=\"better\"", "Stage 2 (peak) (5000 conns)", "FAIL"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
}

// Sides whose stages are not the same plan are warned about.
func TestCompareWarnsOtherStages(t *testing.T) {
	a := stagedRun(time.Millisecond, time.Millisecond, 1<<20, "u", "/")
	b := stagedRun(time.Millisecond, time.Millisecond, 1<<20, "u", "/")
	b.Hail.Stages[1].Target = 2000
	c := Compare([][]*result.Result{{a}, {b}}, nil, nil, 0)
	if w := strings.Join(c.Warnings, "\n"); !strings.Contains(w, "the stages differ (A: 500 conns over 2 s, 5000 conns over 2 s; B: 500 conns over 2 s, 2000 conns over 2 s)") {
		t.Errorf("warnings %q", c.Warnings)
	}
}
