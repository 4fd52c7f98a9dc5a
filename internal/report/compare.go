package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
)

// Comparison is hail compare's table: the metrics of side A and side B
// (each one or several runs), the change, and whether it is better, worse
// or noise.
type Comparison struct {
	A, B  Side
	Rows  []CompareRow
	Steps []StepComparison
	// Warnings say why the runs are unlike (a different offered rate or
	// connection count, a side the generator limited): printed before any
	// change.
	Warnings []string
	// Notes are information that does not make the runs incomparable:
	// different targets (two implementations compared), a -w drain in
	// requests/s, what target memory at full throughput compares.
	Notes []string
}

// Side is one side of a comparison.
type Side struct {
	Label string   // "A", "B", or the user's label (--label, NAME=FILE)
	Names []string // the result files
}

// StepComparison is the table of one scenario step present on both sides.
type StepComparison struct {
	Name string
	Rows []CompareRow
}

// Spread is a metric over a side's runs.
type Spread struct {
	Median, Min, Max float64
	N                int
}

// CompareRow is one metric of the comparison.
type CompareRow struct {
	Metric string
	// Unit formats values: "rps", "s" (a latency), "ratio", "Bps", "us", "bytes", "cores".
	Unit string
	// HigherBetter is the metric's direction.
	HigherBetter bool
	A, B         Spread
	// Change is (B − A) / A of the medians, in percent; NaN when A is 0.
	Change float64
	// Verdict is "better", "worse", "noise" (the change lies inside the
	// spread of the runs) or "same"; "" for a metric that is not judged on
	// its own (throughput: more bytes per second may be bigger responses).
	Verdict string
}

type metricDef struct {
	name   string
	unit   string
	higher bool
	get    func(r *Result) (float64, bool)
}

// neutralMetrics are shown with their change but not judged better or
// worse on their own: more bytes per second may be bigger responses.
var neutralMetrics = map[string]bool{"throughput": true}

func errorRate(r *Result) float64 {
	m := r.Measure()
	return m.Value("error_rate", 0)
}

var runMetrics = []metricDef{
	// requests/s is the report's: every request that ended over the run's
	// whole time (oha's summary.requestsPerSec).
	{"requests/s", "rps", true, func(r *Result) (float64, bool) { return r.Summary.RequestsPerSec, true }},
	{"successful/s", "rps", true, func(r *Result) (float64, bool) {
		return r.Hail.Rates.SuccessfulPerSec, r.Hail.Rates.RequestsPerSec > 0 || r.Hail.Counts.Requests == 0
	}},
	{"mean", "s", false, func(r *Result) (float64, bool) { return r.Summary.Average, true }},
	{"p50", "s", false, func(r *Result) (float64, bool) { return r.LatencyPercentiles.P50, true }},
	{"p90", "s", false, func(r *Result) (float64, bool) { return r.LatencyPercentiles.P90, true }},
	{"p99", "s", false, func(r *Result) (float64, bool) { return r.LatencyPercentiles.P99, true }},
	{"p99.9", "s", false, func(r *Result) (float64, bool) { return r.LatencyPercentiles.P999, true }},
	{"max", "s", false, func(r *Result) (float64, bool) { return r.Summary.Slowest, true }},
	{"p99, all sent", "s", false, func(r *Result) (float64, bool) { return r.Hail.AllSent.P99, r.Hail.AllSent.Requests > 0 }},
	{"max, all sent", "s", false, func(r *Result) (float64, bool) { return r.Hail.AllSent.Max, r.Hail.AllSent.Requests > 0 }},
	{"error rate", "ratio", false, func(r *Result) (float64, bool) { return errorRate(r), true }},
	{"throughput", "Bps", true, func(r *Result) (float64, bool) { return r.Summary.SizePerSec, true }},
	{"generator CPU/request", "us", false, func(r *Result) (float64, bool) {
		return r.Hail.Generator.CPUPerRequestUS, r.Hail.Generator.CPUPerRequestUS > 0
	}},
	{"target peak RSS", "bytes", false, func(r *Result) (float64, bool) {
		if r.Hail.Target == nil {
			return 0, false
		}
		return float64(r.Hail.Target.PeakRSSBytes), true
	}},
	{"target CPU", "cores", false, func(r *Result) (float64, bool) {
		if r.Hail.Target == nil {
			return 0, false
		}
		return r.Hail.Target.MeanCPU, true
	}},
	{"target CPU/request", "us", false, func(r *Result) (float64, bool) {
		if r.Hail.Target == nil || r.Hail.Counts.Requests == 0 {
			return 0, false
		}
		return r.Hail.Target.CPUSeconds * 1e6 / float64(r.Hail.Counts.Requests), true
	}},
}

func stepMetrics(name string) []metricDef {
	step := func(r *Result) *Step {
		for i := range r.Hail.Steps {
			if r.Hail.Steps[i].Name == name {
				return &r.Hail.Steps[i]
			}
		}
		return nil
	}
	lat := func(f func(l StepLatency) float64) func(r *Result) (float64, bool) {
		return func(r *Result) (float64, bool) {
			s := step(r)
			if s == nil {
				return 0, false
			}
			return f(s.Latency), true
		}
	}
	return []metricDef{
		{"requests/s", "rps", true, func(r *Result) (float64, bool) {
			s := step(r)
			if s == nil {
				return 0, false
			}
			return s.RPS, true
		}},
		{"mean", "s", false, lat(func(l StepLatency) float64 { return l.Mean })},
		{"p50", "s", false, lat(func(l StepLatency) float64 { return l.P50 })},
		{"p90", "s", false, lat(func(l StepLatency) float64 { return l.P90 })},
		{"p99", "s", false, lat(func(l StepLatency) float64 { return l.P99 })},
		{"p99.9", "s", false, lat(func(l StepLatency) float64 { return l.P999 })},
		{"max", "s", false, lat(func(l StepLatency) float64 { return l.Max })},
		{"error rate", "ratio", false, func(r *Result) (float64, bool) {
			s := step(r)
			if s == nil {
				return 0, false
			}
			return s.ErrorRate, true
		}},
	}
}

func spreadOf(xs []float64) Spread {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread{Median: med, Min: s[0], Max: s[n-1], N: n}
}

// sameThreshold is the relative change below which two single runs are
// called the same.
const sameThreshold = 0.005

func compareRows(defs []metricDef, a, b []*Result) []CompareRow {
	var rows []CompareRow
	for _, d := range defs {
		var xa, xb []float64
		for _, r := range a {
			if v, ok := d.get(r); ok {
				xa = append(xa, v)
			}
		}
		for _, r := range b {
			if v, ok := d.get(r); ok {
				xb = append(xb, v)
			}
		}
		if len(xa) == 0 || len(xb) == 0 {
			continue
		}
		row := CompareRow{Metric: d.name, Unit: d.unit, HigherBetter: d.higher, A: spreadOf(xa), B: spreadOf(xb)}
		row.Change = math.NaN()
		if row.A.Median != 0 {
			row.Change = 100 * (row.B.Median - row.A.Median) / math.Abs(row.A.Median)
		}
		if !neutralMetrics[d.name] {
			row.Verdict = verdictOf(row)
		}
		rows = append(rows, row)
	}
	return rows
}

func verdictOf(r CompareRow) string {
	a, b := r.A.Median, r.B.Median
	if a == b {
		return "same"
	}
	if r.A.N > 1 || r.B.N > 1 {
		// Several runs: a change inside the spread of the runs is noise.
		if r.B.Min <= r.A.Max && r.A.Min <= r.B.Max {
			return "noise"
		}
	} else if den := math.Max(math.Abs(a), math.Abs(b)); den > 0 && math.Abs(b-a)/den < sameThreshold {
		return "same"
	}
	if (b > a) == r.HigherBetter {
		return "better"
	}
	return "worse"
}

// Compare builds the comparison of runs a (side A) and b (side B).
func Compare(a, b []*Result, aNames, bNames []string) *Comparison {
	c := &Comparison{A: Side{Label: "A", Names: aNames}, B: Side{Label: "B", Names: bNames}}
	c.Rows = compareRows(runMetrics, a, b)
	var names []string
	for _, r := range a {
		for _, s := range r.Hail.Steps {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	for _, n := range names {
		rows := compareRows(stepMetrics(n), a, b)
		if len(rows) > 0 {
			c.Steps = append(c.Steps, StepComparison{Name: n, Rows: rows})
		}
	}
	c.Warnings, c.Notes = comparability(a, b, aNames, bNames)
	return c
}

// comparedKeys are the configuration fields that make two runs measure
// different things; a difference is warned about.
var comparedKeys = []string{"url", "method", "model", "rate", "connections", "requests", "duration_seconds", "http_version", "bodies", "scenario"}

// comparability says what makes the runs measure different things
// (warnings) and what is worth knowing but does not (notes): a different
// URL alone is the normal case of comparing two implementations.
func comparability(a, b []*Result, aNames, bNames []string) (warns, notes []string) {
	all := append(slices.Clone(a), b...)
	names := append(slices.Clone(aNames), bNames...)
	label := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("run %d", i+1)
	}
	ref := all[0]
	var diffs []string
	urlDiff := ""
	for _, k := range comparedKeys {
		want, _ := json.Marshal(ref.Hail.Config[k])
		var differ []string
		for i, r := range all[1:] {
			got, _ := json.Marshal(r.Hail.Config[k])
			if string(got) != string(want) {
				differ = append(differ, fmt.Sprintf("%s has %s", label(i+1), got))
			}
		}
		if len(differ) > 0 {
			d := fmt.Sprintf("(%s has %s; %s)", label(0), want, strings.Join(differ, "; "))
			if k == "url" {
				urlDiff = d
			} else {
				diffs = append(diffs, k+" differs "+d)
			}
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
		if r.Hail.Verdict.GeneratorLimited {
			limited = append(limited, label(i))
			why = append(why, label(i)+": "+strings.Join(r.Hail.Verdict.Reasons, "; "))
		}
		if r.Hail.Interrupted {
			warns = append(warns, fmt.Sprintf("%s was interrupted: it covers only part of the planned run", label(i)))
		}
		if d := r.Hail.Drain; d != nil {
			notes = append(notes, fmt.Sprintf("%s: requests/s counts its -w drain too (%d requests ended in the %.2fs after it stopped sending), as the report does", label(i), d.Requests, d.Seconds))
		}
		closed = closed || r.Hail.Model == "closed"
	}
	if len(limited) > 0 {
		warns = append(warns, fmt.Sprintf("the generator, not the target, limited %s: those numbers describe hail's limits (%s)", strings.Join(limited, ", "), strings.Join(why, " · ")))
	}
	if allWatchTarget(all) && (closed || slices.ContainsFunc(diffs, func(d string) bool { return strings.HasPrefix(d, "rate ") })) {
		notes = append(notes, "target memory is compared at each run's own throughput (the closed model, or different -q): a server that serves more requests at once holds more, so the RSS compares throughput as much as memory; for memory alone compare runs at one fixed -q")
	}
	return warns, notes
}

// allWatchTarget reports whether every result monitored its target's process.
func allWatchTarget(rs []*Result) bool {
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
	}
	return fmt.Sprintf("%g", v)
}

func (s Spread) format(unit string) string {
	v := formatValue(unit, s.Median)
	if s.N > 1 {
		v += fmt.Sprintf(" (%s–%s)", formatValue(unit, s.Min), formatValue(unit, s.Max))
	}
	return v
}

func (r CompareRow) changeText() string {
	if math.IsNaN(r.Change) {
		if r.B.Median == r.A.Median {
			return "0%"
		}
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", r.Change)
}

func sideHeader(s Side) string {
	if len(s.Names) > 1 {
		return fmt.Sprintf("%s (median of %d, min–max)", s.Label, len(s.Names))
	}
	return s.Label
}

// WriteCompareText writes the comparison as an aligned text table.
func WriteCompareText(w io.Writer, c *Comparison) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s: %s\n%s: %s\n\n", c.A.Label, strings.Join(c.A.Names, ", "), c.B.Label, strings.Join(c.B.Names, ", "))
	if len(c.Warnings) > 0 { // before any change is read
		fmt.Fprintf(b, "WARNING:\n")
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "  - %s\n", w)
		}
		fmt.Fprintln(b)
	}
	table := func(rows []CompareRow) {
		cells := [][]string{{"metric", sideHeader(c.A), sideHeader(c.B), "change", ""}}
		for _, r := range rows {
			cells = append(cells, []string{r.Metric, r.A.format(r.Unit), r.B.format(r.Unit), r.changeText(), r.Verdict})
		}
		widths := make([]int, 5)
		for _, row := range cells {
			for i, cell := range row {
				widths[i] = max(widths[i], len([]rune(cell)))
			}
		}
		for _, row := range cells {
			line := ""
			for i, cell := range row {
				pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
				if i == 0 || i == 4 {
					line += cell + pad
				} else {
					line += pad + cell
				}
				if i < 4 {
					line += "  "
				}
			}
			fmt.Fprintln(b, "  "+strings.TrimRight(line, " "))
		}
	}
	table(c.Rows)
	for _, s := range c.Steps {
		fmt.Fprintf(b, "\nStep %s:\n", s.Name)
		table(s.Rows)
	}
	writeCompareNotes(b, c, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCompareNotes(b *strings.Builder, c *Comparison, bullet string) {
	if len(c.A.Names) == 1 && len(c.B.Names) == 1 {
		fmt.Fprintf(b, "\n%sOne run per side: no spread to tell a change from noise. Give several runs per side (A1.json,A2.json,A3.json) for that.\n", bullet)
	} else {
		fmt.Fprintf(b, "\n%sA change is called noise when the min–max ranges of the two sides overlap.\n", bullet)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(b, "%sNote: %s\n", bullet, n)
	}
}

var verdictMark = map[string]string{"better": "✅ better", "worse": "❌ worse", "noise": "〰️ noise", "same": "same", "": "(not judged)"}

// WriteCompareMarkdown writes the comparison as a Markdown table, for
// pasting into a review.
func WriteCompareMarkdown(w io.Writer, c *Comparison) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "**%s**: %s  \n**%s**: %s\n\n", mdEscape(c.A.Label), mdCode(c.A.Names), mdEscape(c.B.Label), mdCode(c.B.Names))
	if len(c.Warnings) > 0 { // before any change is read
		fmt.Fprintf(b, "> **Warning**\n")
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "> - %s\n", mdEscape(w))
		}
		fmt.Fprintln(b)
	}
	table := func(rows []CompareRow) {
		fmt.Fprintf(b, "| metric | %s | %s | change |\n| --- | ---: | ---: | --- |\n", sideHeader(c.A), sideHeader(c.B))
		for _, r := range rows {
			fmt.Fprintf(b, "| %s | %s | %s | %s %s |\n", r.Metric, r.A.format(r.Unit), r.B.format(r.Unit), r.changeText(), verdictMark[r.Verdict])
		}
	}
	table(c.Rows)
	for _, s := range c.Steps {
		fmt.Fprintf(b, "\n**Step %s**\n\n", mdEscape(s.Name))
		table(s.Rows)
	}
	if len(c.A.Names) == 1 && len(c.B.Names) == 1 {
		fmt.Fprintf(b, "\n_One run per side: no spread to tell a change from noise._\n")
	} else {
		fmt.Fprintf(b, "\n_A change is called noise when the min–max ranges of the two sides overlap._\n")
	}
	for _, n := range c.Notes {
		fmt.Fprintf(b, "\n_Note: %s_\n", mdEscape(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCode(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + strings.ReplaceAll(n, "`", "'") + "`"
	}
	return strings.Join(out, ", ")
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(s)
}
