package report

// hail compare's model: sides of one or several runs each, one of them the
// baseline; every metric with each side's value (the median and spread of
// its runs), its change against the baseline and a noise-aware verdict;
// per-step and per-stage tables; the settings that differ; the warnings
// about unlike runs that come before any change. compare_settings.go
// finds the differing settings, compare_text.go and compare_html.go render.

import (
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"math"
	"slices"
	"sort"
	"strings"
)

// Comparison is hail compare's tables: the metrics of each side (one or
// several runs), each with its change against the baseline side and
// whether it is better, worse or noise.
type Comparison struct {
	// Sides are in the order given; Sides[Baseline] is the one the others
	// are compared with.
	Sides    []Side
	Baseline int
	Rows     []CompareRow
	Steps    []StepComparison
	Stages   []StageComparison
	// Settings are the configuration fields whose values differ between
	// the runs (flattened: "scenario.stages[1].connections").
	Settings []SettingDiff
	// Warnings say why the runs are unlike (a different offered rate or
	// connection count, a side the generator limited): printed before any
	// change.
	Warnings []string
	// Notes are information that does not make the runs incomparable:
	// different targets (implementations compared), a -w drain in
	// requests/s, what target memory at full throughput compares.
	Notes []string
}

// Side is one side of a comparison.
type Side struct {
	Label string   // "A", "B", … or the user's label (--label, NAME=FILE)
	Names []string // the result files
}

// StepComparison is the table of one scenario step.
type StepComparison struct {
	Name string
	Rows []CompareRow
}

// StageComparison is the table of one stage of a ramp (matched by
// number): Label and Load are the baseline's (or the first side's that
// has it).
type StageComparison struct {
	Stage       int
	Label, Load string
	Rows        []CompareRow
}

// Spread is a metric over a side's runs; N is 0 when the side has no
// value.
type Spread struct {
	Median, Min, Max float64
	N                int
}

// CompareRow is one metric of the comparison.
type CompareRow struct {
	Metric string
	// Unit formats values: "rps", "s" (a latency), "ratio", "Bps", "us",
	// "bytes", "cores", "count".
	Unit string
	// HigherBetter is the metric's direction.
	HigherBetter bool
	// Cells are the sides', in their order.
	Cells []CompareCell
}

// CompareCell is one side's value of a metric.
type CompareCell struct {
	Spread
	// Change is (value − baseline) / baseline of the medians, in percent:
	// NaN for the baseline itself, or when either has no value or the
	// baseline's is 0.
	Change float64
	// Verdict is "better", "worse", "noise" (the ranges of the runs
	// overlap) or "same"; "" for the baseline, a side without a value and
	// a metric that is not judged on its own (throughput: more bytes per
	// second may be bigger responses; open connections).
	Verdict string
}

type metricDef struct {
	name   string
	unit   string
	higher bool
	get    func(r *result.Result) (float64, bool)
}

// neutralMetrics are shown with their change but not judged better or
// worse on their own: more bytes per second may be bigger responses, more
// open connections is the load, not its outcome.
var neutralMetrics = map[string]bool{"throughput": true, "conns open": true}

func errorRate(r *result.Result) float64 {
	m := MeasureRun(r)
	return m.Value("error_rate", 0)
}

var runMetrics = []metricDef{
	// requests/s is the report's: every request that ended over the run's
	// whole time (oha's summary.requestsPerSec).
	{"requests/s", "rps", true, func(r *result.Result) (float64, bool) { return r.Summary.RequestsPerSec, true }},
	{"successful/s", "rps", true, func(r *result.Result) (float64, bool) {
		return r.Hail.Rates.SuccessfulPerSec, r.Hail.Rates.RequestsPerSec > 0 || r.Hail.Counts.Requests == 0
	}},
	{"mean", "s", false, func(r *result.Result) (float64, bool) { return r.Summary.Average.Seconds(), true }},
	{"p50", "s", false, func(r *result.Result) (float64, bool) { return r.LatencyPercentiles.P50.Seconds(), true }},
	{"p90", "s", false, func(r *result.Result) (float64, bool) { return r.LatencyPercentiles.P90.Seconds(), true }},
	{"p99", "s", false, func(r *result.Result) (float64, bool) { return r.LatencyPercentiles.P99.Seconds(), true }},
	{"p99.9", "s", false, func(r *result.Result) (float64, bool) { return r.LatencyPercentiles.P999.Seconds(), true }},
	{"max", "s", false, func(r *result.Result) (float64, bool) { return r.Summary.Slowest.Seconds(), true }},
	{"p99, all sent", "s", false, func(r *result.Result) (float64, bool) {
		return r.Hail.AllSent.P99.Seconds(), r.Hail.AllSent.Requests > 0
	}},
	{"max, all sent", "s", false, func(r *result.Result) (float64, bool) {
		return r.Hail.AllSent.Max.Seconds(), r.Hail.AllSent.Requests > 0
	}},
	{"error rate", "ratio", false, func(r *result.Result) (float64, bool) { return errorRate(r), true }},
	{"throughput", "Bps", true, func(r *result.Result) (float64, bool) { return r.Summary.SizePerSec, true }},
	{"generator CPU/request", "us", false, func(r *result.Result) (float64, bool) {
		return micros(r.Hail.Generator.CPUPerRequest), micros(r.Hail.Generator.CPUPerRequest) > 0
	}},
	{"target peak RSS", "bytes", false, func(r *result.Result) (float64, bool) {
		if r.Hail.Target == nil {
			return 0, false
		}
		return float64(r.Hail.Target.PeakRSSBytes), true
	}},
	{"target CPU", "cores", false, func(r *result.Result) (float64, bool) {
		if r.Hail.Target == nil {
			return 0, false
		}
		return r.Hail.Target.MeanCPU, true
	}},
	{"target CPU/request", "us", false, func(r *result.Result) (float64, bool) {
		if r.Hail.Target == nil || r.Hail.Counts.Requests == 0 {
			return 0, false
		}
		return r.Hail.Target.CPU.Seconds() * 1e6 / float64(r.Hail.Counts.Requests), true
	}},
	// hail llm's (docs/llm.md), where the run streamed tokens: TTFT from
	// the intended send first.
	llmMetric("TTFT p50", "s", false, func(l *result.LLM) (float64, bool) { return l.TTFT.P50.Seconds(), l.TTFT.Samples > 0 }),
	llmMetric("TTFT p99", "s", false, func(l *result.LLM) (float64, bool) { return l.TTFT.P99.Seconds(), l.TTFT.Samples > 0 }),
	llmMetric("TTFT p99, from send", "s", false, func(l *result.LLM) (float64, bool) { return l.TTFTFromSend.P99.Seconds(), l.TTFTFromSend.Samples > 0 }),
	llmMetric("TPOT p50", "s", false, func(l *result.LLM) (float64, bool) { return l.TPOT.P50.Seconds(), l.TPOT.Samples > 0 }),
	llmMetric("TPOT p99", "s", false, func(l *result.LLM) (float64, bool) { return l.TPOT.P99.Seconds(), l.TPOT.Samples > 0 }),
	llmMetric("ITL p99", "s", false, func(l *result.LLM) (float64, bool) { return l.ITL.P99.Seconds(), l.ITL.Samples > 0 }),
	llmMetric("output tokens/s", "rps", true, func(l *result.LLM) (float64, bool) { return l.OutputThroughput, true }),
	llmMetric("goodput/s", "rps", true, func(l *result.LLM) (float64, bool) { return l.Goodput.RequestsPerSec, l.SLO != nil }),
}

// llmMetric is a metric of hail.llm, absent from a run without it.
func llmMetric(name, unit string, higher bool, get func(l *result.LLM) (float64, bool)) metricDef {
	return metricDef{name, unit, higher, func(r *result.Result) (float64, bool) {
		if r.Hail.LLM == nil {
			return 0, false
		}
		return get(r.Hail.LLM)
	}}
}

// headlineMetrics are the rows of the summary table (the seed's QPS, P99
// and RSS), in its order.
var headlineMetrics = []string{"requests/s", "p99, all sent", "error rate", "target peak RSS"}

func stepMetrics(name string) []metricDef {
	step := func(r *result.Result) *result.StepResult {
		for i := range r.Hail.Steps {
			if r.Hail.Steps[i].Name == name {
				return &r.Hail.Steps[i]
			}
		}
		return nil
	}
	of := func(f func(s *result.StepResult) float64) func(r *result.Result) (float64, bool) {
		return func(r *result.Result) (float64, bool) {
			s := step(r)
			if s == nil {
				return 0, false
			}
			return f(s), true
		}
	}
	return []metricDef{
		{"requests/s", "rps", true, of(func(s *result.StepResult) float64 { return s.RPS })},
		{"mean", "s", false, of(func(s *result.StepResult) float64 { return s.Latency.Mean.Seconds() })},
		{"p50", "s", false, of(func(s *result.StepResult) float64 { return s.Latency.P50.Seconds() })},
		{"p90", "s", false, of(func(s *result.StepResult) float64 { return s.Latency.P90.Seconds() })},
		{"p99", "s", false, of(func(s *result.StepResult) float64 { return s.Latency.P99.Seconds() })},
		{"p99.9", "s", false, of(func(s *result.StepResult) float64 { return s.Latency.P999.Seconds() })},
		{"max", "s", false, of(func(s *result.StepResult) float64 { return s.Latency.Max.Seconds() })},
		{"p99, all sent", "s", false, func(r *result.Result) (float64, bool) {
			s := step(r)
			if s == nil || s.AllSent.Requests == 0 {
				return 0, false
			}
			return s.AllSent.P99.Seconds(), true
		}},
		{"error rate", "ratio", false, of(func(s *result.StepResult) float64 { return s.ErrorRate })},
	}
}

// stageMetrics are the rows of stage number n's table.
func stageMetrics(n int) []metricDef {
	stage := func(r *result.Result) *result.StageResult {
		for i := range r.Hail.Stages {
			if s := &r.Hail.Stages[i]; s.Stage == n && s.Measured.Seconds() > 0 {
				return s
			}
		}
		return nil
	}
	of := func(f func(s *result.StageResult) (float64, bool)) func(r *result.Result) (float64, bool) {
		return func(r *result.Result) (float64, bool) {
			s := stage(r)
			if s == nil {
				return 0, false
			}
			return f(s)
		}
	}
	lat := func(f func(l result.StepLatency) float64) func(r *result.Result) (float64, bool) {
		return of(func(s *result.StageResult) (float64, bool) { return f(s.Latency), s.Counts.Responses > 0 })
	}
	return []metricDef{
		{"requests/s", "rps", true, of(func(s *result.StageResult) (float64, bool) { return s.Rates.RequestsPerSec, true })},
		{"successful/s", "rps", true, of(func(s *result.StageResult) (float64, bool) { return s.Rates.SuccessfulPerSec, true })},
		{"p50", "s", false, lat(func(l result.StepLatency) float64 { return l.P50.Seconds() })},
		{"p99", "s", false, lat(func(l result.StepLatency) float64 { return l.P99.Seconds() })},
		{"p99, all sent", "s", false, of(func(s *result.StageResult) (float64, bool) { return s.AllSent.P99.Seconds(), s.AllSent.Requests > 0 })},
		{"max, all sent", "s", false, of(func(s *result.StageResult) (float64, bool) { return s.AllSent.Max.Seconds(), s.AllSent.Requests > 0 })},
		{"error rate", "ratio", false, of(func(s *result.StageResult) (float64, bool) { return s.ErrorRate, true })},
		{"conns open", "count", true, of(func(s *result.StageResult) (float64, bool) {
			if s.Load == nil {
				return 0, false
			}
			return s.Load.ConnsOpenMean, true
		})},
		{"target peak RSS", "bytes", false, of(func(s *result.StageResult) (float64, bool) {
			if s.Process == nil || s.Process.PeakRSSBytes == 0 {
				return 0, false
			}
			return float64(s.Process.PeakRSSBytes), true
		})},
		{"target CPU", "cores", false, of(func(s *result.StageResult) (float64, bool) {
			if s.Process == nil {
				return 0, false
			}
			return s.Process.MeanCPU, true
		})},
	}
}

// headlineStageMetrics are the per-stage rows of the summary table.
var headlineStageMetrics = []string{"requests/s", "p99, all sent", "target peak RSS"}

func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread{Median: med, Min: s[0], Max: s[n-1], N: n}
}

// SpreadOf is the median and min–max range of xs (N = 0 when empty).
func SpreadOf(xs []float64) Spread { return spreadOf(xs) }

// sameThreshold is the relative change below which two single runs are
// called the same.
const sameThreshold = 0.005

// compareRows measures each metric of defs on every side; a metric is
// kept when at least two sides have a value.
func compareRows(defs []metricDef, sides [][]*result.Result, base int) []CompareRow {
	var rows []CompareRow
	for _, d := range defs {
		row := CompareRow{Metric: d.name, Unit: d.unit, HigherBetter: d.higher, Cells: make([]CompareCell, len(sides))}
		have := 0
		for i, runs := range sides {
			var xs []float64
			for _, r := range runs {
				if v, ok := d.get(r); ok {
					xs = append(xs, v)
				}
			}
			row.Cells[i].Spread = spreadOf(xs)
			if len(xs) > 0 {
				have++
			}
		}
		if have < 2 {
			continue
		}
		b := row.Cells[base].Spread
		for i := range row.Cells {
			c := &row.Cells[i]
			c.Change = math.NaN()
			if i == base || c.N == 0 || b.N == 0 {
				continue
			}
			if b.Median != 0 {
				c.Change = 100 * (c.Median - b.Median) / math.Abs(b.Median)
			}
			if !neutralMetrics[d.name] {
				c.Verdict = Judge(b, c.Spread, d.higher)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// Judge is the verdict on value against base for a metric whose direction
// is higher (better when higher): "same" when their medians agree (within
// 0.5% for single runs), "noise" when several runs were given and their
// min–max ranges overlap, else "better" or "worse".
func Judge(base, value Spread, higher bool) string {
	a, b := base.Median, value.Median
	if a == b {
		return "same"
	}
	if Noisy(base, value) {
		if value.Min <= base.Max && base.Min <= value.Max {
			return "noise"
		}
	} else if den := math.Max(math.Abs(a), math.Abs(b)); den > 0 && math.Abs(b-a)/den < sameThreshold {
		return "same"
	}
	if (b > a) == higher {
		return "better"
	}
	return "worse"
}

// Noisy reports whether noise can be judged between two sides: one of them
// has several runs, so a spread to set the change against.
func Noisy(base, value Spread) bool { return base.N > 1 || value.N > 1 }

// Compare builds the comparison of sides (each one or several runs; names
// are their files), against side base. labels name the sides ("" or none:
// A, B, C, …).
func Compare(sides [][]*result.Result, names [][]string, labels []string, base int) *Comparison {
	c := &Comparison{Baseline: base}
	for i := range sides {
		s := Side{Label: sideLetter(i)}
		if i < len(labels) && labels[i] != "" {
			s.Label = labels[i]
		}
		if i < len(names) {
			s.Names = names[i]
		}
		c.Sides = append(c.Sides, s)
	}
	c.Rows = compareRows(runMetrics, sides, base)
	var steps []string
	var stages []*result.StageResult
	for _, k := range append([]int{base}, indices(len(sides))...) {
		for _, r := range sides[k] {
			for _, s := range r.Hail.Steps {
				if !slices.Contains(steps, s.Name) {
					steps = append(steps, s.Name)
				}
			}
			for i := range r.Hail.Stages {
				s := &r.Hail.Stages[i]
				if !slices.ContainsFunc(stages, func(o *result.StageResult) bool { return o.Stage == s.Stage }) && s.Measured.Seconds() > 0 {
					stages = append(stages, s)
				}
			}
		}
	}
	for _, n := range steps {
		if rows := compareRows(stepMetrics(n), sides, base); len(rows) > 0 {
			c.Steps = append(c.Steps, StepComparison{Name: n, Rows: rows})
		}
	}
	sort.Slice(stages, func(i, j int) bool { return stages[i].Stage < stages[j].Stage })
	for _, s := range stages {
		if rows := compareRows(stageMetrics(s.Stage), sides, base); len(rows) > 0 {
			c.Stages = append(c.Stages, StageComparison{Stage: s.Stage, Label: s.Label(), Load: s.LoadText(), Rows: rows})
		}
	}
	var all []*result.Result
	var files []string
	for i, runs := range sides {
		all = append(all, runs...)
		for k := range runs {
			if i < len(names) && k < len(names[i]) {
				files = append(files, names[i][k])
			} else {
				files = append(files, fmt.Sprintf("%s run %d", sideLetter(i), k+1))
			}
		}
	}
	c.Settings = settingDiffs(sides)
	c.Warnings, c.Notes = comparability(all, files, c.Sides, c.Settings)
	c.Warnings = append(c.Warnings, stagePlans(sides, c.Sides)...)
	return c
}

// indices is 0 … n−1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// sideLetter names side i by default: A, B, …, Z, S27, S28, …
func sideLetter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("S%d", i+1)
}

// Headline is the summary table, the seed's QPS/P99/RSS table: the run's
// headline metrics, then each stage's.
func (c *Comparison) Headline() []CompareRow {
	var out []CompareRow
	for _, m := range headlineMetrics {
		for _, r := range c.Rows {
			if r.Metric == m {
				out = append(out, r)
			}
		}
	}
	for _, s := range c.Stages {
		for _, m := range headlineStageMetrics {
			for _, r := range s.Rows {
				if r.Metric == m {
					r.Metric = fmt.Sprintf("%s, %s: %s", s.Label, s.Load, m)
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// OneRunEach reports whether every side has a single run: no spread to
// tell a change from noise.
func (c *Comparison) OneRunEach() bool {
	for _, s := range c.Sides {
		if len(s.Names) > 1 {
			return false
		}
	}
	return true
}

// comparedKeys are the configuration fields that make two runs measure
// different things; a difference is warned about.
var comparedKeys = []string{"url", "method", "model", "rate", "connections", "requests", "duration_seconds", "http_version", "bodies", "scenario"}

// comparability says what makes the runs measure different things
// (warnings) and what is worth knowing but does not (notes): a different
// URL alone is the normal case of comparing implementations. A difference
// in a setting is spelt out side by side; one in a structure (a scenario)
// points at the table of the settings that differ.
func comparability(all []*result.Result, names []string, sides []Side, settings []SettingDiff) (warns, notes []string) {
	label := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("run %d", i+1)
	}
	var diffs []string
	urlDiff := ""
	for _, k := range comparedKeys {
		d := ""
		for _, sd := range settings {
			if sd.Field == k {
				var parts []string
				for i, v := range sd.Values {
					parts = append(parts, sides[i].Label+" has "+v)
				}
				d = "(" + strings.Join(parts, "; ") + ")"
			}
		}
		if n := countPrefixed(settings, k); d == "" && n > 0 {
			d = fmt.Sprintf("(%d fields of it: see the settings that differ)", n)
		}
		switch {
		case d == "":
		case k == "url":
			urlDiff = d
		default:
			diffs = append(diffs, k+" differs "+d)
		}
	}
	switch {
	case urlDiff != "" && len(diffs) == 0:
		notes = append(notes, "different targets, the same load: "+urlDiff)
	case urlDiff != "":
		diffs = append([]string{"url differs " + urlDiff}, diffs...)
	}
	for _, d := range diffs {
		switch {
		case strings.HasPrefix(d, "rate "):
			warns = append(warns, "unlike runs, the offered rate (-q) "+strings.TrimPrefix(d, "rate ")+": latency and throughput depend on it")
		case strings.HasPrefix(d, "connections "):
			warns = append(warns, "unlike runs, the connection count (-c) "+strings.TrimPrefix(d, "connections ")+": latency and throughput depend on it")
		default:
			warns = append(warns, "not comparable: "+d)
		}
	}
	engines := map[string]bool{}
	for _, r := range all {
		engines[r.Hail.Engine] = true
	}
	if len(engines) > 1 {
		warns = append(warns, "the runs used different engines: generator CPU is not comparable")
	}
	var limited, why []string
	closed := false
	for i, r := range all {
		if v := r.Hail.Verdict; v.GeneratorLimited && !slices.Contains(limited, label(i)) {
			limited = append(limited, label(i))
			line := label(i)
			if head, _ := Headline(v); strings.Contains(head, "(") {
				line += " (" + head[strings.Index(head, "(")+1:strings.LastIndex(head, ")")] + ")"
			}
			if len(v.Reasons) > 0 {
				line += ": " + v.Reasons[0]
			}
			why = append(why, line)
		}
		if r.Hail.Interrupted {
			warns = append(warns, fmt.Sprintf("%s was interrupted: it covers only part of the planned run", label(i)))
		}
		if d := r.Hail.Drain; d != nil {
			notes = append(notes, fmt.Sprintf("%s: requests/s counts its -w drain too (%d requests ended in the %.2fs after it stopped sending), as the report does", label(i), d.Requests, d.Duration.Seconds()))
		}
		closed = closed || r.Hail.Model == "closed"
	}
	if len(limited) > 0 {
		warns = append(warns, fmt.Sprintf("the generator, not the target, limited %s: those numbers describe hail's limits", strings.Join(limited, ", ")))
		warns = append(warns, why...)
	}
	if allWatchTarget(all) && (closed || slices.ContainsFunc(diffs, func(d string) bool { return strings.HasPrefix(d, "rate ") })) {
		notes = append(notes, "target memory is compared at each run's own throughput (the closed model, or different -q): a server that serves more requests at once holds more, so the RSS compares throughput as much as memory; for memory alone compare runs at one fixed -q")
	}
	return warns, notes
}

// stagePlans warns when the sides' stages are not the same plan: another
// number of stages, or a stage with another load or length.
func stagePlans(sides [][]*result.Result, labels []Side) []string {
	plan := func(r *result.Result) string {
		var parts []string
		for _, s := range r.Hail.Stages {
			parts = append(parts, fmt.Sprintf("%s over %s s", s.LoadText(), trimFloat((s.End-s.Start).Seconds())))
		}
		return strings.Join(parts, ", ")
	}
	var ref string
	refSide := -1
	for i, runs := range sides {
		for _, r := range runs {
			p := plan(r)
			switch {
			case refSide < 0:
				ref, refSide = p, i
			case p != ref:
				none := func(s string) string {
					if s == "" {
						return "no stages"
					}
					return s
				}
				return []string{fmt.Sprintf("unlike runs, the stages differ (%s: %s; %s: %s): the stage tables compare stages by number", labels[refSide].Label, none(ref), labels[i].Label, none(p))}
			}
		}
	}
	return nil
}

// allWatchTarget reports whether every result monitored its target's process.
func allWatchTarget(rs []*result.Result) bool {
	for _, r := range rs {
		if r.Hail.Target == nil {
			return false
		}
	}
	return len(rs) > 0
}

// formatValue formats a metric value in its unit.
func formatValue(unit string, v float64) string {
	switch unit {
	case "rps":
		return fmt.Sprintf("%.1f", v)
	case "s":
		return fmtDur(v)
	case "ratio":
		return fmt.Sprintf("%.2f%%", 100*v)
	case "Bps":
		return bytesHuman(v) + "/s"
	case "us":
		return fmt.Sprintf("%.2f µs", v)
	case "bytes":
		return bytesHuman(v)
	case "cores":
		return fmt.Sprintf("%.2f cores", v)
	case "count":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}

func (s Spread) format(unit string) string {
	if s.N == 0 {
		return "n/a"
	}
	v := formatValue(unit, s.Median)
	if s.N > 1 {
		v += fmt.Sprintf(" (%s–%s)", formatValue(unit, s.Min), formatValue(unit, s.Max))
	}
	return v
}

// changeText is the cell's change against the baseline: "+12.3%", "0%",
// or "n/a".
func (c CompareCell) changeText(base Spread) string {
	if math.IsNaN(c.Change) {
		if c.N > 0 && base.N > 0 && c.Median == base.Median {
			return "0%"
		}
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", c.Change)
}
