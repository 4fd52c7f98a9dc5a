package report

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hail/internal/stats"
)

// HTML charts are inline SVG drawn here: a few line and bar charts need far
// less than a plotting library, and the page stays one self-contained file
// that opens offline.

// Chart ids every HTML report has (a test checks them).
var HTMLCharts = []string{"chart-rps", "chart-latency-time", "chart-spectrum", "chart-histogram", "chart-status"}

const (
	chartW   = 920
	chartH   = 280
	padLeft  = 78
	padRight = 24
	padTop   = 34
	padBot   = 44
)

var palette = struct{ blue, green, orange, red, purple, grey, teal string }{
	"#2563eb", "#16a34a", "#ea580c", "#dc2626", "#7c3aed", "#6b7280", "#0d9488"}

// WriteHTML writes r as one self-contained HTML page with inline SVG charts.
func WriteHTML(w io.Writer, r *Result) error {
	b := &strings.Builder{}
	h := r.Hail
	url, _ := h.Config["url"].(string)
	title := "hail report"
	if url != "" {
		title += " — " + url
	}
	fmt.Fprintf(b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="hail %s">
<title>%s</title>
<script>
window.onerror = function (msg) {
  var d = document.documentElement;
  d.setAttribute("data-errors", String((+d.getAttribute("data-errors") || 0) + 1));
  d.setAttribute("data-error-message", String(msg));
};
</script>
<style>%s</style>
</head><body>
`, esc(h.Version), esc(title), htmlCSS)
	fmt.Fprintf(b, "<header><h1>hail report</h1><div class=\"sub\">%s</div></header>\n<main>\n", esc(subtitle(r)))

	writeKPIs(b, r)
	writeVerdict(b, r)

	series := h.Series
	section(b, "Throughput", "Requests ended per second and the errors among them, second by second.")
	b.WriteString(rpsChart("chart-rps", series))
	section(b, "Latency over time", "Latency percentiles of the responses that ended in each second (log scale).")
	b.WriteString(latencyTimeChart("chart-latency-time", series))

	lat := latencyHist(h.Histograms)
	section(b, "Percentile spectrum", "Latency at each percentile, on HdrHistogram's log axis: every step right is ten times rarer.")
	b.WriteString(spectrumChart("chart-spectrum", lat, "all responses"))
	writePercentileTable(b, r)
	section(b, "Latency histogram", "How many responses took how long (log-spaced bins).")
	b.WriteString(histogramChart("chart-histogram", lat))

	section(b, "Status codes and errors", "")
	b.WriteString(statusChart("chart-status", r.StatusCodeDistribution, r.ErrorDistribution))
	if len(h.Hints) > 0 {
		b.WriteString("<ul class=\"hints\">")
		for _, hint := range h.Hints {
			fmt.Fprintf(b, "<li>hint: %s</li>", esc(hint))
		}
		b.WriteString("</ul>\n")
	}

	if hasTarget(series) || h.Target != nil {
		section(b, "Target process", "")
		writeTarget(b, r)
		if hasTarget(series) {
			b.WriteString(targetCharts(series))
		}
	}
	section(b, "Generator", "hail's own resource use: if it was saturated, the numbers above measure hail rather than the target.")
	writeGenerator(b, r)
	b.WriteString(generatorChart("chart-generator", series, h.Model == "open"))

	if len(h.Steps) > 0 {
		writeStepsHTML(b, r)
	}
	if len(h.Thresholds) > 0 {
		writeThresholdsHTML(b, r)
	}
	if h.Merged != nil || h.Shard != nil {
		writeDistributed(b, r)
	}
	section(b, "Configuration", "The run's settings, secrets redacted.")
	writeConfig(b, h.Config)
	fmt.Fprintf(b, "</main>\n<footer>hail %s · started %s · engine %s (%s)</footer>\n", esc(h.Version),
		esc(time.Unix(0, h.StartUnixNano).UTC().Format(time.RFC3339)), esc(h.Engine), esc(h.EngineReason))
	b.WriteString(`<script>
(function () {
  var d = document.documentElement;
  d.setAttribute("data-charts", String(document.querySelectorAll("svg.chart").length));
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    var tip = svg.parentNode.querySelector(".tip");
    svg.querySelectorAll("[data-tip]").forEach(function (el) {
      el.addEventListener("mouseenter", function () { tip.textContent = el.getAttribute("data-tip"); });
      el.addEventListener("mouseleave", function () { tip.textContent = ""; });
    });
  });
  d.setAttribute("data-ready", "1");
})();
</script>
</body></html>
`)
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

func subtitle(r *Result) string {
	h := r.Hail
	url, _ := h.Config["url"].(string)
	method, _ := h.Config["method"].(string)
	parts := []string{strings.TrimSpace(method + " " + url)}
	parts = append(parts, h.Model+" model")
	if c, ok := h.Config["connections"].(float64); ok {
		parts = append(parts, fmt.Sprintf("%g connections", c))
	} else if c, ok := h.Config["connections"].(int); ok {
		parts = append(parts, fmt.Sprintf("%d connections", c))
	}
	if q := configFloat(h.Config, "rate"); q > 0 {
		parts = append(parts, fmt.Sprintf("-q %g", q))
	}
	parts = append(parts, fmt.Sprintf("%.2f s", r.Summary.Total))
	if h.Scenario != nil && h.Scenario.Name != "" {
		parts = append(parts, "scenario "+h.Scenario.Name)
	}
	return strings.Join(parts, " · ")
}

func configFloat(c map[string]any, k string) float64 {
	switch v := c[k].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	case uint64:
		return float64(v)
	case int64:
		return float64(v)
	}
	return 0
}

func section(b *strings.Builder, title, note string) {
	fmt.Fprintf(b, "<h2>%s</h2>\n", esc(title))
	if note != "" {
		fmt.Fprintf(b, "<p class=\"note\">%s</p>\n", esc(note))
	}
}

func writeKPIs(b *strings.Builder, r *Result) {
	h := r.Hail
	p := r.LatencyPercentiles
	kpi := func(label, value, cls string) {
		fmt.Fprintf(b, "<div class=\"kpi %s\"><div class=\"v\">%s</div><div class=\"l\">%s</div></div>", cls, esc(value), esc(label))
	}
	b.WriteString("<section class=\"kpis\">")
	kpi("requests", strconv.FormatInt(h.Counts.Requests, 10), "")
	kpi("requests/s", fmt.Sprintf("%.1f", r.Summary.RequestsPerSec), "")
	cls := "ok"
	if r.Summary.SuccessRate < 0.999 {
		cls = "bad"
	}
	kpi("success rate", fmt.Sprintf("%.2f%%", 100*r.Summary.SuccessRate), cls)
	kpi("p50", fmtDur(p.P50), "")
	kpi("p99", fmtDur(p.P99), "")
	kpi("p99.9", fmtDur(p.P999), "")
	kpi("max", fmtDur(r.Summary.Slowest), "")
	kpi("throughput", bytesHuman(r.Summary.SizePerSec)+"/s", "")
	b.WriteString("</section>\n")
}

func writeVerdict(b *strings.Builder, r *Result) {
	v := r.Hail.Verdict
	if v.GeneratorLimited {
		b.WriteString("<section class=\"verdict warn\" id=\"verdict\"><strong>WARNING: the generator, not the target, limited this test.</strong><ul>")
		for _, why := range v.Reasons {
			fmt.Fprintf(b, "<li>%s</li>", esc(why))
		}
		b.WriteString("</ul></section>\n")
	} else {
		b.WriteString("<section class=\"verdict ok\" id=\"verdict\"><strong>Generator health: OK.</strong> hail kept up (schedule lag, achieved rate and its own CPU within bounds): the numbers measure the target.</section>\n")
	}
	if r.Hail.Interrupted {
		b.WriteString("<section class=\"verdict info\">Interrupted: the run was stopped by a signal; the numbers cover what was done.</section>\n")
	}
	if r.Hail.StoppedBy != "" {
		fmt.Fprintf(b, "<section class=\"verdict warn\">Stopped early: %s</section>\n", esc(r.Hail.StoppedBy))
	}
	if m := r.Hail.Merged; m != nil && len(m.Incomplete) > 0 {
		b.WriteString("<section class=\"verdict warn\" id=\"incomplete\"><strong>INCOMPLETE: the merged result is not the whole run as asked.</strong><ul>")
		for _, why := range m.Incomplete {
			fmt.Fprintf(b, "<li>%s</li>", esc(why))
		}
		b.WriteString("</ul></section>\n")
	}
}

func writePercentileTable(b *strings.Builder, r *Result) {
	rows := []struct {
		name string
		p    *Percentiles
	}{{"all", &r.LatencyPercentiles}, {"2xx", r.LatencyPercentileSuccessful}, {"not 2xx", r.LatencyPercentileNotSuccessful}, {"first byte", &r.FirstBytePercentiles}}
	b.WriteString("<table class=\"num\"><tr><th></th><th>p10</th><th>p25</th><th>p50</th><th>p75</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>p99.99</th></tr>")
	for _, row := range rows {
		if row.p == nil {
			continue
		}
		p := row.p
		fmt.Fprintf(b, "<tr><th>%s</th>", esc(row.name))
		for _, v := range []float64{p.P10, p.P25, p.P50, p.P75, p.P90, p.P95, p.P99, p.P999, p.P9999} {
			fmt.Fprintf(b, "<td>%s</td>", esc(fmtDur(v)))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>\n")
}

func writeGenerator(b *strings.Builder, r *Result) {
	h := r.Hail
	g := h.Generator
	rows := [][2]string{
		{"engine", h.Engine + " — " + h.EngineReason},
		{"CPU", fmt.Sprintf("%.2f s user, %.2f s system, %.2f µs/request, %.0f%% of %d core(s)", g.UserSeconds, g.SystemSeconds, g.CPUPerRequestUS, 100*g.Utilization, g.Cores)},
		{"context switches", fmt.Sprintf("%d voluntary, %d involuntary", g.VoluntarySwitches, g.ForcedSwitches)},
		{"peak RSS", bytesHuman(float64(g.MaxRSSBytes))},
	}
	if h.Model == "open" {
		rows = append(rows, [2]string{"schedule lag", fmt.Sprintf("p50 %s, p99 %s, p99.9 %s, max %s", fmtDur(h.Lag.P50), fmtDur(h.Lag.P99), fmtDur(h.Lag.P999), fmtDur(h.Lag.Max))},
			[2]string{"queued", fmt.Sprintf("%d requests waited for a free connection", h.Counts.Queued)})
	}
	kvTable(b, rows)
}

func writeTarget(b *strings.Builder, r *Result) {
	t := r.Hail.Target
	if t == nil {
		return
	}
	rows := [][2]string{
		{"process", fmt.Sprintf("pid %d (%s)", t.PID, t.Command)},
		{"RSS", fmt.Sprintf("peak %s, mean %s, %s at the start → %s at the end", bytesHuman(float64(t.PeakRSSBytes)), bytesHuman(float64(t.MeanRSSBytes)), bytesHuman(float64(t.StartRSSBytes)), bytesHuman(float64(t.EndRSSBytes)))},
		{"CPU", fmt.Sprintf("%.2f s (%.2f cores mean, %.2f peak)", t.CPUSeconds, t.MeanCPU, t.PeakCPU)},
	}
	if r.Hail.Counts.Requests > 0 {
		rows = append(rows, [2]string{"CPU per request", fmt.Sprintf("%.2f µs", t.CPUSeconds*1e6/float64(r.Hail.Counts.Requests))})
	}
	if t.Exited {
		rows = append(rows, [2]string{"note", "the process exited during the run"})
	}
	kvTable(b, rows)
}

func writeDistributed(b *strings.Builder, r *Result) {
	section(b, "Distributed run", "")
	var rows [][2]string
	if s := r.Hail.Shard; s != nil {
		rows = append(rows, [2]string{"shard", fmt.Sprintf("%d of %d (from 0): %d requests, rate %g, %d connections", s.Index, s.Count, s.Requests, s.Rate, s.Connections)})
		if s.StartAt != "" {
			rows = append(rows, [2]string{"start at", s.StartAt})
		}
	}
	if m := r.Hail.Merged; m != nil {
		rows = append(rows, [2]string{"merged", fmt.Sprintf("%d results, shards %v", m.Results, m.Shards)})
		for _, n := range m.Notes {
			rows = append(rows, [2]string{"note", n})
		}

	}
	kvTable(b, rows)
}

func kvTable(b *strings.Builder, rows [][2]string) {
	b.WriteString("<table class=\"kv\">")
	for _, r := range rows {
		fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>", esc(r[0]), esc(r[1]))
	}
	b.WriteString("</table>\n")
}

func writeConfig(b *strings.Builder, c map[string]any) {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows := make([][2]string, 0, len(keys))
	for _, k := range keys {
		v := c[k]
		var s string
		switch x := v.(type) {
		case string:
			s = x
		default:
			j, _ := json.Marshal(x)
			s = string(j)
		}
		rows = append(rows, [2]string{k, s})
	}
	kvTable(b, rows)
}

func writeStepsHTML(b *strings.Builder, r *Result) {
	section(b, "Steps", "Each step of the scenario on its own.")
	b.WriteString("<table class=\"num\"><tr><th>step</th><th>requests</th><th>share</th><th>requests/s</th><th>error rate</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>")
	for _, s := range r.Hail.Steps {
		l := s.Latency
		fmt.Fprintf(b, "<tr><th>%s</th><td>%d</td><td>%.1f%%</td><td>%.1f</td><td>%.2f%%</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			esc(s.Name), s.Counts.Requests, 100*s.Share, s.RPS, 100*s.ErrorRate, fmtDur(l.Mean), fmtDur(l.P50), fmtDur(l.P90), fmtDur(l.P99), fmtDur(l.P999), fmtDur(l.Max))
	}
	b.WriteString("</table>\n")
	for i, s := range r.Hail.Steps {
		fmt.Fprintf(b, "<section class=\"step\"><h3>Step %s</h3>\n", esc(s.Name))
		b.WriteString(rpsChart(fmt.Sprintf("chart-step-%d-rps", i), s.Series))
		b.WriteString(spectrumChart(fmt.Sprintf("chart-step-%d-spectrum", i), latencyHist(s.Histograms), s.Name))
		if len(s.StatusCodeDistribution) > 0 || len(s.ErrorDistribution) > 0 {
			var parts []string
			for _, k := range sortedByCount(s.StatusCodeDistribution) {
				parts = append(parts, fmt.Sprintf("[%s] %d", k, s.StatusCodeDistribution[k]))
			}
			for _, k := range sortedByCount(s.ErrorDistribution) {
				parts = append(parts, fmt.Sprintf("%s: %d", k, s.ErrorDistribution[k]))
			}
			fmt.Fprintf(b, "<p class=\"note\">%s</p>", esc(strings.Join(parts, " · ")))
		}
		b.WriteString("</section>\n")
	}
}

func writeThresholdsHTML(b *strings.Builder, r *Result) {
	section(b, "Thresholds", "")
	b.WriteString("<table class=\"kv\">")
	for _, t := range r.Hail.Thresholds {
		cls, word := "ok", "pass"
		if !t.Pass {
			cls, word = "bad", "FAIL"
		}
		expr := t.Expr
		if t.Step != "" {
			expr = t.Step + ": " + expr
		}
		fmt.Fprintf(b, "<tr><th><code>%s</code></th><td>%s</td><td class=\"%s\">%s</td></tr>", esc(expr), esc(t.Measured), cls, word)
	}
	b.WriteString("</table>\n")
}

func latencyHist(hs Histograms) *hdr.Histogram {
	h := stats.NewHist()
	for _, s := range []string{hs.LatencyOK, hs.LatencyBad} {
		if d, err := DecodeHist(s); err == nil {
			h.Merge(d)
		}
	}
	return h
}

func hasTarget(series []stats.Second) bool {
	for _, s := range series {
		if s.TargetRSS > 0 {
			return true
		}
	}
	return false
}

// ---- charts ----

type line struct {
	name, color string
	ys          []float64
	dash        bool
}

type tick struct {
	v     float64
	label string
}

type axis struct {
	lo, hi float64
	log    bool
	ticks  []tick
}

func (a axis) pos(v float64, from, to float64) float64 {
	var f float64
	if a.log {
		if v <= 0 {
			v = a.lo
		}
		f = (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	} else {
		f = (v - a.lo) / (a.hi - a.lo)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	f = math.Max(0, math.Min(1, f))
	return from + f*(to-from)
}

// linearAxis makes a 0-based axis up to a round number above hi.
func linearAxis(hi float64, format func(float64) string) axis {
	if hi <= 0 {
		hi = 1
	}
	step := niceStep(hi / 4)
	top := math.Ceil(hi/step) * step
	a := axis{lo: 0, hi: top}
	for v := 0.0; v <= top+step/2; v += step {
		a.ticks = append(a.ticks, tick{v, format(v)})
	}
	return a
}

func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// logAxis makes a log axis over [lo, hi] with 1-2-5 ticks.
func logAxis(lo, hi float64, format func(float64) string) axis {
	if lo <= 0 {
		lo = hi / 1000
	}
	if hi <= lo {
		hi = lo * 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	a := axis{lo: lo, hi: hi, log: true}
	decades := math.Log10(hi / lo)
	mults := []float64{1, 2, 5}
	if decades > 4 {
		mults = []float64{1}
	}
	for d := lo; d <= hi*1.0001; d *= 10 {
		for _, m := range mults {
			if v := d * m; v <= hi*1.0001 {
				a.ticks = append(a.ticks, tick{v, format(v)})
			}
		}
	}
	return a
}

type chart struct {
	b              *strings.Builder
	id, title      string
	x, y           axis
	left, right    float64
	top, bottom    float64
	xLabel, yLabel string
}

func newChart(id, title string, x, y axis, xLabel, yLabel string) *chart {
	c := &chart{b: &strings.Builder{}, id: id, title: title, x: x, y: y, left: padLeft, right: chartW - padRight,
		top: padTop, bottom: chartH - padBot, xLabel: xLabel, yLabel: yLabel}
	fmt.Fprintf(c.b, "<figure class=\"fig\"><svg class=\"chart\" id=\"%s\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\" xmlns=\"http://www.w3.org/2000/svg\">", esc(id), chartW, chartH, esc(title))
	fmt.Fprintf(c.b, "<text class=\"title\" x=\"%d\" y=\"20\">%s</text>", padLeft, esc(title))
	for _, t := range y.ticks {
		py := y.pos(t.v, c.bottom, c.top)
		fmt.Fprintf(c.b, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c.left, c.right, py, py)
		fmt.Fprintf(c.b, "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\">%s</text>", c.left-6, py+4, esc(t.label))
	}
	for _, t := range x.ticks {
		px := x.pos(t.v, c.left, c.right)
		fmt.Fprintf(c.b, "<line class=\"xgrid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", px, px, c.top, c.bottom)
		fmt.Fprintf(c.b, "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\">%s</text>", px, c.bottom+16, esc(t.label))
	}
	fmt.Fprintf(c.b, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c.left, c.right, c.bottom, c.bottom)
	fmt.Fprintf(c.b, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c.left, c.left, c.top, c.bottom)
	if xLabel != "" {
		fmt.Fprintf(c.b, "<text class=\"xlabel\" x=\"%.1f\" y=\"%d\">%s</text>", (c.left+c.right)/2, chartH-6, esc(xLabel))
	}
	if yLabel != "" {
		fmt.Fprintf(c.b, "<text class=\"ylabel\" transform=\"translate(14 %.1f) rotate(-90)\">%s</text>", (c.top+c.bottom)/2, esc(yLabel))
	}
	return c
}

func (c *chart) polyline(xs []float64, l line) {
	var pts []string
	for i, y := range l.ys {
		if i >= len(xs) || math.IsNaN(y) {
			continue
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", c.x.pos(xs[i], c.left, c.right), c.y.pos(y, c.bottom, c.top)))
	}
	if len(pts) == 0 {
		return
	}
	dash := ""
	if l.dash {
		dash = ` stroke-dasharray="5 4"`
	}
	if len(pts) == 1 {
		var x, y string
		x, y, _ = strings.Cut(pts[0], ",")
		fmt.Fprintf(c.b, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\"/>", x, y, l.color)
		return
	}
	fmt.Fprintf(c.b, "<polyline class=\"line\" fill=\"none\" stroke=\"%s\"%s points=\"%s\"/>", l.color, dash, strings.Join(pts, " "))
}

// hoverColumns adds invisible per-x hit areas carrying a tooltip.
func (c *chart) hoverColumns(xs []float64, tips []string) {
	if len(xs) == 0 {
		return
	}
	w := (c.right - c.left) / float64(max(len(xs), 1))
	for i, x := range xs {
		if i >= len(tips) {
			break
		}
		px := c.x.pos(x, c.left, c.right)
		fmt.Fprintf(c.b, "<rect class=\"hit\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-tip=\"%s\"><title>%s</title></rect>",
			px-w/2, c.top, w, c.bottom-c.top, esc(tips[i]), esc(tips[i]))
	}
}

func (c *chart) legend(ls []line) {
	x := c.right
	for i := len(ls) - 1; i >= 0; i-- {
		l := ls[i]
		wd := float64(len(l.name))*7 + 26
		x -= wd
		fmt.Fprintf(c.b, "<rect x=\"%.1f\" y=\"10\" width=\"14\" height=\"4\" fill=\"%s\"/><text class=\"legend\" x=\"%.1f\" y=\"16\">%s</text>", x, l.color, x+18, esc(l.name))
	}
}

func (c *chart) empty(msg string) {
	fmt.Fprintf(c.b, "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\">%s</text>", (c.left+c.right)/2, (c.top+c.bottom)/2, esc(msg))
}

func (c *chart) done() string {
	c.b.WriteString("</svg><div class=\"tip\"></div></figure>\n")
	return c.b.String()
}

// chartSeries drops a run's last entry when it covers only a sliver of a
// second: its per-second rates would be noise (a few requests over a few
// milliseconds).
func chartSeries(series []stats.Second) []stats.Second {
	if n := len(series); n > 1 && series[n-1].Span < 0.25 {
		return series[:n-1]
	}
	return series
}

// timeAxis places each second at its end, on an axis from 0 to the run's end.
func timeAxis(series []stats.Second) ([]float64, axis) {
	xs := make([]float64, len(series))
	end := 1.0
	for i, s := range series {
		xs[i] = float64(s.Index) + s.Span
		end = math.Max(end, xs[i])
	}
	step := niceStep(end / 6)
	a := axis{lo: 0, hi: end}
	for v := 0.0; v <= end+1e-9; v += step {
		a.ticks = append(a.ticks, tick{v, strconv.FormatFloat(v, 'f', -1, 64) + "s"})
	}
	return xs, a
}

func rpsChart(id string, series []stats.Second) string {
	series = chartSeries(series)
	xs, xa := timeAxis(series)
	rps := make([]float64, len(series))
	errs := make([]float64, len(series))
	tips := make([]string, len(series))
	top := 0.0
	for i, s := range series {
		if s.Span > 0 {
			rps[i] = float64(s.Requests) / s.Span
			errs[i] = float64(s.Errors) / s.Span
		}
		top = math.Max(top, rps[i])
		tips[i] = fmt.Sprintf("second %d: %.0f req/s, %.0f errors/s", s.Index+1, rps[i], errs[i])
	}
	ya := linearAxis(top*1.05, compactNum)
	c := newChart(id, "Requests/s and errors/s", xa, ya, "time into the run", "per second")
	ls := []line{{name: "requests/s", color: palette.blue, ys: rps}, {name: "errors/s", color: palette.red, ys: errs}}
	if len(series) == 0 {
		c.empty("no whole second in this run")
	}
	for _, l := range ls {
		c.polyline(xs, l)
	}
	c.legend(ls)
	c.hoverColumns(xs, tips)
	return c.done()
}

func latencyTimeChart(id string, series []stats.Second) string {
	series = chartSeries(series)
	xs, xa := timeAxis(series)
	get := func(f func(s stats.Second) int64) []float64 {
		out := make([]float64, len(series))
		for i, s := range series {
			out[i] = math.NaN()
			if s.Requests-s.Errors > 0 || f(s) > 0 {
				out[i] = float64(f(s)) / 1e9
			}
		}
		return out
	}
	ls := []line{
		{name: "p50", color: palette.green, ys: get(func(s stats.Second) int64 { return s.P50 })},
		{name: "p90", color: palette.blue, ys: get(func(s stats.Second) int64 { return s.P90 })},
		{name: "p99", color: palette.orange, ys: get(func(s stats.Second) int64 { return s.P99 })},
		{name: "max", color: palette.red, ys: get(func(s stats.Second) int64 { return s.Max }), dash: true},
	}
	lo, hi := math.Inf(1), 0.0
	for _, l := range ls {
		for _, v := range l.ys {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		lo, hi = 1e-4, 1e-1
	}
	ya := logAxis(lo, hi, fmtDurShort)
	c := newChart(id, "Latency per second: p50, p90, p99, max", xa, ya, "time into the run", "latency")
	if len(series) == 0 {
		c.empty("no whole second in this run")
	}
	for _, l := range ls {
		c.polyline(xs, l)
	}
	c.legend(ls)
	tips := make([]string, len(series))
	for i, s := range series {
		tips[i] = fmt.Sprintf("second %d: p50 %s, p90 %s, p99 %s, max %s", s.Index+1, fmtDur(sec(s.P50)), fmtDur(sec(s.P90)), fmtDur(sec(s.P99)), fmtDur(sec(s.Max)))
	}
	c.hoverColumns(xs, tips)
	return c.done()
}

// spectrumChart plots latency against percentile on HdrHistogram's axis:
// x = log10(1 / (1 − q)), so 90%, 99%, 99.9% … are equally spaced.
func spectrumChart(id string, h *hdr.Histogram, name string) string {
	n := h.TotalCount()
	maxX := 2.0
	if n > 0 {
		maxX = math.Max(2, math.Min(6, math.Ceil(math.Log10(float64(n)))))
	}
	var xs, ys []float64
	if n > 0 {
		for x := 0.0; x <= maxX+1e-9; x += maxX / 240 {
			q := 100 * (1 - math.Pow(10, -x))
			xs = append(xs, x)
			ys = append(ys, sec(h.ValueAtQuantile(q)))
		}
		xs = append(xs, maxX)
		ys = append(ys, sec(h.Max()))
	}
	xa := axis{lo: 0, hi: maxX}
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"}
	for k := 0; k <= int(maxX); k++ {
		xa.ticks = append(xa.ticks, tick{float64(k), labels[k]})
	}
	top := 0.0
	for _, y := range ys {
		top = math.Max(top, y)
	}
	ya := linearAxis(top*1.05, fmtDurShort)
	if top == 0 {
		ya = linearAxis(0.001, fmtDurShort)
	}
	c := newChart(id, "Percentile spectrum ("+name+")", xa, ya, "percentile", "latency")
	if n == 0 {
		c.empty("no responses")
	}
	c.polyline(xs, line{name: "latency", color: palette.purple, ys: ys})
	// Markers at the decades.
	for k := 1; k <= int(maxX); k++ {
		q := 100 * (1 - math.Pow(10, -float64(k)))
		if n == 0 {
			break
		}
		v := sec(h.ValueAtQuantile(q))
		px, py := xa.pos(float64(k), c.left, c.right), ya.pos(v, c.bottom, c.top)
		tip := fmt.Sprintf("p%s: %s", strings.TrimSuffix(labels[k], "%"), fmtDur(v))
		fmt.Fprintf(c.b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" data-tip=\"%s\"><title>%s</title></circle>", px, py, palette.purple, esc(tip), esc(tip))
		fmt.Fprintf(c.b, "<text class=\"mark\" x=\"%.1f\" y=\"%.1f\">%s</text>", px-4, py-8, esc(fmtDurShort(v)))
	}
	return c.done()
}

// histogramChart draws the latency distribution in log-spaced bins.
func histogramChart(id string, h *hdr.Histogram) string {
	n := h.TotalCount()
	lo, hi := sec(h.Min()), sec(h.Max())
	if n == 0 || lo <= 0 {
		lo, hi = 1e-4, 1e-1
	}
	if hi <= lo {
		hi = lo * 1.01
	}
	const bins = 48
	llo, lhi := math.Log10(lo), math.Log10(hi)
	edges := make([]float64, bins+1)
	for i := range edges {
		edges[i] = math.Pow(10, llo+(lhi-llo)*float64(i)/bins)
	}
	counts := make([]int64, bins)
	if n > 0 {
		for _, bar := range h.Distribution() {
			if bar.Count == 0 {
				continue
			}
			v := math.Max(sec(bar.From), lo)
			i := int(float64(bins) * (math.Log10(v) - llo) / (lhi - llo))
			counts[max(0, min(i, bins-1))] += bar.Count
		}
	}
	var top int64
	for _, k := range counts {
		top = max(top, k)
	}
	xa := logAxis(lo, hi, fmtDurShort)
	xa.lo, xa.hi = lo, hi
	var ticks []tick
	for _, t := range xa.ticks {
		if t.v >= lo*0.999 && t.v <= hi*1.001 {
			ticks = append(ticks, t)
		}
	}
	xa.ticks = ticks
	ya := linearAxis(float64(top)*1.05, compactNum)
	c := newChart(id, "Latency histogram", xa, ya, "latency (log scale)", "responses")
	if n == 0 {
		c.empty("no responses")
	}
	for i, k := range counts {
		if k == 0 {
			continue
		}
		x0, x1 := xa.pos(edges[i], c.left, c.right), xa.pos(edges[i+1], c.left, c.right)
		y := ya.pos(float64(k), c.bottom, c.top)
		tip := fmt.Sprintf("%s – %s: %d responses (%.2f%%)", fmtDur(edges[i]), fmtDur(edges[i+1]), k, 100*float64(k)/float64(n))
		fmt.Fprintf(c.b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" data-tip=\"%s\"><title>%s</title></rect>",
			x0+0.5, y, math.Max(x1-x0-1, 1), c.bottom-y, palette.teal, esc(tip), esc(tip))
	}
	return c.done()
}

// statusChart draws horizontal bars: status codes, then error kinds.
func statusChart(id string, status, errs map[string]int64) string {
	type bar struct {
		label string
		n     int64
		color string
	}
	var bars []bar
	for _, k := range sortedByCount(status) {
		code, _ := strconv.Atoi(k)
		col := palette.green
		switch {
		case code >= 500 || code == 0:
			col = palette.red
		case code >= 400:
			col = palette.orange
		case code >= 300:
			col = palette.blue
		}
		bars = append(bars, bar{"status " + k, status[k], col})
	}
	for _, k := range sortedByCount(errs) {
		bars = append(bars, bar{k, errs[k], palette.grey})
	}
	var top, total int64
	for _, b := range bars {
		top = max(top, b.n)
		total += b.n
	}
	rowH := 26.0
	height := int(padTop + float64(max(len(bars), 1))*rowH + 16)
	left, right := 250.0, float64(chartW)-140
	b := &strings.Builder{}
	fmt.Fprintf(b, "<figure class=\"fig\"><svg class=\"chart\" id=\"%s\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"status codes and errors\" xmlns=\"http://www.w3.org/2000/svg\">", esc(id), chartW, height)
	fmt.Fprintf(b, "<text class=\"title\" x=\"%d\" y=\"20\">Outcomes: status codes and errors</text>", padLeft)
	if len(bars) == 0 {
		fmt.Fprintf(b, "<text class=\"empty\" x=\"%d\" y=\"%d\">no requests</text>", chartW/2, padTop+14)
	}
	for i, bb := range bars {
		y := padTop + float64(i)*rowH
		w := 0.0
		if top > 0 {
			w = (right - left) * float64(bb.n) / float64(top)
		}
		tip := fmt.Sprintf("%s: %d (%.2f%%)", bb.label, bb.n, 100*float64(bb.n)/float64(max(total, 1)))
		fmt.Fprintf(b, "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\">%s</text>", left-8, y+15, esc(bb.label))
		fmt.Fprintf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" data-tip=\"%s\"><title>%s</title></rect>", left, y+3, math.Max(w, 1), rowH-8, bb.color, esc(tip), esc(tip))
		fmt.Fprintf(b, "<text class=\"count\" x=\"%.1f\" y=\"%.1f\">%d (%.1f%%)</text>", left+math.Max(w, 1)+6, y+15, bb.n, 100*float64(bb.n)/float64(max(total, 1)))
	}
	b.WriteString("</svg><div class=\"tip\"></div></figure>\n")
	return b.String()
}

func targetCharts(series []stats.Second) string {
	series = chartSeries(series)
	xs, xa := timeAxis(series)
	rss := make([]float64, len(series))
	cpu := make([]float64, len(series))
	var topR, topC float64
	tips := make([]string, len(series))
	for i, s := range series {
		rss[i], cpu[i] = float64(s.TargetRSS), s.TargetCPU
		if s.TargetRSS == 0 {
			rss[i], cpu[i] = math.NaN(), math.NaN()
		}
		topR, topC = math.Max(topR, float64(s.TargetRSS)), math.Max(topC, s.TargetCPU)
		tips[i] = fmt.Sprintf("second %d: RSS %s, CPU %.2f cores", s.Index+1, bytesHuman(float64(s.TargetRSS)), s.TargetCPU)
	}
	c := newChart("chart-target-rss", "Target RSS", xa, linearAxis(topR*1.1, func(v float64) string { return bytesHuman(v) }), "time into the run", "resident memory")
	c.polyline(xs, line{name: "RSS", color: palette.purple, ys: rss})
	c.hoverColumns(xs, tips)
	out := c.done()
	c = newChart("chart-target-cpu", "Target CPU", xa, linearAxis(math.Max(topC*1.1, 0.1), func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }), "time into the run", "cores")
	c.polyline(xs, line{name: "CPU", color: palette.orange, ys: cpu})
	c.hoverColumns(xs, tips)
	return out + c.done()
}

func generatorChart(id string, series []stats.Second, open bool) string {
	series = chartSeries(series)
	xs, xa := timeAxis(series)
	cpu := make([]float64, len(series))
	top := 0.0
	tips := make([]string, len(series))
	for i, s := range series {
		cpu[i] = s.CPU
		top = math.Max(top, s.CPU)
		tips[i] = fmt.Sprintf("second %d: hail CPU %.2f cores, %d in flight, %d connections open", s.Index+1, s.CPU, s.InFlight, s.ConnsOpen)
		if open {
			tips[i] += ", schedule lag p99 " + fmtDur(sec(s.LagP99))
		}
	}
	c := newChart(id, "hail's CPU", xa, linearAxis(math.Max(top*1.1, 0.1), func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }), "time into the run", "cores")
	c.polyline(xs, line{name: "CPU", color: palette.grey, ys: cpu})
	c.hoverColumns(xs, tips)
	return c.done()
}

func compactNum(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// fmtDurShort formats seconds compactly for axis labels.
func fmtDurShort(s float64) string {
	trim := func(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
	switch {
	case s == 0:
		return "0"
	case s < 1e-3:
		return trim(s*1e6) + "µs"
	case s < 1:
		return trim(s*1e3) + "ms"
	}
	return trim(s) + "s"
}

const htmlCSS = `
:root{--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--bg:#fff;--card:#f9fafb}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header{padding:18px 28px;border-bottom:1px solid var(--line);background:#0f172a;color:#f8fafc}
header h1{margin:0;font-size:20px}
header .sub{color:#cbd5e1;margin-top:4px;word-break:break-all}
main{max-width:980px;margin:0 auto;padding:8px 28px 40px}
h2{font-size:17px;margin:28px 0 4px;padding-top:8px;border-top:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 4px}
p.note{color:var(--muted);margin:2px 0 8px}
.kpis{display:grid;grid-template-columns:repeat(4,1fr);gap:10px;margin:18px 0}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}
.kpi .v{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums}
.kpi .l{color:var(--muted);font-size:12px}
.kpi.ok .v{color:#15803d}.kpi.bad .v{color:#b91c1c}
.verdict{border-radius:8px;padding:10px 14px;margin:10px 0}
.verdict.ok{background:#f0fdf4;border:1px solid #bbf7d0}
.verdict.warn{background:#fffbeb;border:1px solid #fcd34d}
.verdict.info{background:#eff6ff;border:1px solid #bfdbfe}
.verdict ul{margin:6px 0 0 18px;padding:0}
figure.fig{margin:6px 0 10px;position:relative}
svg.chart{width:100%;height:auto;display:block;background:#fff}
svg .title{font-weight:600;font-size:14px;fill:var(--fg)}
svg .grid{stroke:var(--line);stroke-width:1}
svg .xgrid{stroke:#f3f4f6;stroke-width:1}
svg .axis{stroke:#9ca3af;stroke-width:1}
svg .ytick{font-size:11px;fill:var(--muted);text-anchor:end}
svg .xtick{font-size:11px;fill:var(--muted);text-anchor:middle}
svg .xlabel,svg .ylabel{font-size:12px;fill:var(--muted);text-anchor:middle}
svg .legend{font-size:12px;fill:var(--fg)}
svg .line{stroke-width:2;stroke-linejoin:round}
svg .hit{fill:transparent}
svg .hit:hover{fill:rgba(37,99,235,.07)}
svg .bar:hover{opacity:.75}
svg .mark{font-size:11px;fill:#5b21b6;text-anchor:end}
svg .count{font-size:12px;fill:var(--fg)}
svg .empty{font-size:14px;fill:var(--muted);text-anchor:middle}
.tip{min-height:18px;color:#1e3a8a;font-size:12px;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;margin:6px 0 10px;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
table.num td{text-align:right;font-variant-numeric:tabular-nums}
table.kv th{width:190px;color:var(--muted);font-weight:500}
table.kv td{word-break:break-word}
td.ok{color:#15803d;font-weight:600}td.bad{color:#b91c1c;font-weight:600}
ul.hints{color:#92400e}
footer{color:var(--muted);font-size:12px;text-align:center;padding:20px;border-top:1px solid var(--line)}
@media print{.tip{display:none}}
`
