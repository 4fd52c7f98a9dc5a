package report

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// stagedShard makes a shard's Result whose run had three slots: a stage
// with a warmup and a second stage; slots holds each slot's totals.
func stagedShard(t *testing.T, idx int, slots []*stats.Totals) *result.Result {
	t.Helper()
	all := stats.NewTotals()
	for _, s := range slots {
		all.Add(s)
	}
	clock := schedule.NewStageClock([]schedule.Stage{
		{Duration: 2 * time.Second, Target: 100, Step: true, Warmup: time.Second},
		{Duration: 2 * time.Second, Target: 300, Name: "peak"},
	}, 0)
	series := []stats.Second{{Index: 0, Span: time.Second, ConnsOpen: 2}, {Index: 1, Span: time.Second, ConnsOpen: 4, TargetRSS: 10 << 20, TargetCPU: 0.5},
		{Index: 2, Span: time.Second, ConnsOpen: 6, TargetRSS: 20 << 20, TargetCPU: 1}, {Index: 3, Span: time.Second, ConnsOpen: 8, TargetRSS: 30 << 20, TargetCPU: 1}}
	r := Build(Input{Totals: all, Series: series, Elapsed: 4 * time.Second, Cores: 2, Engine: "net", Open: true,
		Start: time.Unix(1700000000, 0), Config: map[string]any{"url": "http://127.0.0.1/"}, Version: "test"})
	r.Hail.Stages = BuildStages(StageInput{Clock: clock, Kind: "rate", Totals: slots, Series: series, Stopped: 4 * time.Second})
	r.Hail.Shard = &result.Shard{Index: idx, Count: 2}
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// A run's stages and warmups add up to the run's counts and histograms;
// hail merge adds shards' stages exactly (each stage as if its requests
// had been recorded in one run), and the text report shows every stage.
func TestStagesMergeExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sums := []*stats.Totals{stats.NewTotals(), stats.NewTotals(), stats.NewTotals()}
	var shards []*result.Result
	for i := range 2 {
		slots := []*stats.Totals{randomTotals(rng, 500+i), randomTotals(rng, 900+i), randomTotals(rng, 300+i)}
		for k, s := range slots {
			sums[k].Add(s)
		}
		shards = append(shards, stagedShard(t, i, slots))
	}
	for _, r := range shards {
		var n int64
		for _, s := range r.Hail.Stages {
			n += s.Counts.Requests
			if s.Warmup != nil {
				n += s.Warmup.Counts.Requests
			}
		}
		if n != r.Hail.Counts.Requests {
			t.Errorf("a shard's stages hold %d requests, the shard %d", n, r.Hail.Counts.Requests)
		}
	}
	m, err := Merge(shards, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Hail.Stages) != 2 {
		t.Fatalf("%d stages merged, want 2", len(m.Hail.Stages))
	}
	want := func(slot int, span time.Duration) result.StepResult {
		return BuildSteps([]string{""}, []*stats.Totals{sums[slot]}, nil, span)[0]
	}
	for k, s := range m.Hail.Stages {
		w := want(k, s.Measured)
		if s.Counts != w.Counts || s.Latency != w.Latency || s.AllSent != w.AllSent || s.Histograms != w.Histograms {
			t.Errorf("stage %d merged: counts %+v latency %+v; one run of the same requests: %+v %+v", k+1, s.Counts, s.Latency, w.Counts, w.Latency)
		}
	}
	wu := want(2, time.Second)
	if w := m.Hail.Stages[0].Warmup; w == nil || w.Counts != wu.Counts || w.Histograms != wu.Histograms || w.Duration != time.Second {
		t.Errorf("warmup merged %+v, want the counts %+v", w, wu.Counts)
	}
	if st := m.Hail.Stages[1]; st.Name != "peak" || st.Load == nil || st.Load.ConnsOpenMax != 12 || st.Process == nil || st.Process.PeakRSSBytes != 20<<20 {
		t.Errorf("stage 2 merged: name %q, load %+v, process %+v; want peak, 12 connections open at 3 s (two shards of 6), 20 MiB", st.Name, st.Load, st.Process)
	}
	var b strings.Builder
	if err := WriteText(&b, m, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stage 1", "stage 2 (peak)", "100 req/s", "100→300 req/s", "1–2 s", "2–4 s", "warmup 1 s left out", "= " + itoa(m.Hail.Counts.Requests) + ", the run's"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, b.String())
		}
	}
	if !slices.ContainsFunc(m.Hail.Merged.Notes, func(s string) bool { return strings.Contains(s, "exact") }) {
		t.Errorf("merge notes %v", m.Hail.Merged.Notes)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The HTML report charts connections and requests in flight with each
// stage's start, its warmup and the -w drain marked, and tables the
// stages; Markdown and csv-seconds carry them too.
func TestStagesRendered(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := stagedShard(t, 0, []*stats.Totals{randomTotals(rng, 400), randomTotals(rng, 600), randomTotals(rng, 200)})
	r.Hail.Drain = &result.Drain{Duration: 500 * time.Millisecond, Requests: 7, InRates: true}
	r.Summary.Total = 4500 * time.Millisecond
	r.Hail.Series = append(r.Hail.Series, stats.Second{Index: 4, Span: 500 * time.Millisecond, Drained: 7, InFlight: 1})
	var h strings.Builder
	if err := WriteHTML(&h, r); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	load := page[strings.Index(page, `id="chart-load"`):]
	load = load[:strings.Index(load, "</svg>")]
	for _, want := range []string{`class="boundary"`, `<text class="stagelabel"`, `>1</text>`, `>2</text>`, `class="warmup"`, `class="drain"`,
		"in flight", "ended in the drain"} {
		if !strings.Contains(load, want) && !strings.Contains(page, want) {
			t.Errorf("the load chart lacks %q", want)
		}
	}
	if strings.Count(load, `class="boundary"`) != 2 || strings.Count(load, `class="warmup"`) != 1 {
		t.Errorf("%d stage boundaries and %d warmups drawn, want 2 and 1", strings.Count(load, `class="boundary"`), strings.Count(load, `class="warmup"`))
	}
	for _, want := range []string{"<h2>Stages</h2>", "stage 2 (peak)", "100→300 req/s", "1–2 s"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	r.Hail.Stages[0].Kind, r.Hail.Stages[1].Kind = "connections", "connections"
	h.Reset()
	if err := WriteHTML(&h, r); err != nil || !strings.Contains(h.String(), "planned connections") {
		t.Errorf("connection stages: the load chart has no planned connections (%v)", err)
	}
	var md, csv strings.Builder
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| stage 2 (peak) | 100→300 conns |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := WriteCSV(&csv, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if !strings.HasSuffix(lines[0], ",drained,stage") || !strings.HasSuffix(lines[1], ",0,1") || !strings.HasSuffix(lines[3], ",0,2") || !strings.HasSuffix(lines[5], ",7,0") {
		t.Errorf("csv-seconds:\n%s", csv.String())
	}
}
