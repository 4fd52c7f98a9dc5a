// The HTML report's page: the head, the sections in order (KPIs, verdict,
// charts from charts.go, tables), the configuration and the footer, with
// the stylesheet and the small script that wires up chart tooltips.

package report

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// WriteHTML writes r as one self-contained HTML page with inline SVG charts.
func WriteHTML(w io.Writer, r *result.Result) error {
	b := &strings.Builder{}
	h := r.Hail
	url, _ := h.Config["url"].(string)
	title := "hail report"
	if url != "" {
		title += " — " + url
	}
	fmt.Fprintf(b, htmlHead, esc(h.Version), esc(title), htmlCSS)
	fmt.Fprintf(b, "<header><h1>hail report</h1><div class=\"sub\">%s</div></header>\n<main>\n", esc(subtitle(r)))

	writeKPIs(b, r)
	writeVerdict(b, r)

	series := h.Series
	section(b, "Throughput", "Requests ended per second and the errors among them, second by second.")
	b.WriteString(rpsChart("chart-rps", series))
	section(b, "Connections and requests in flight", loadChartNote(r))
	b.WriteString(loadChart("chart-load", r)) // stages.go
	section(b, "Latency over time", "Latency percentiles of the responses that ended in each second (log scale).")
	b.WriteString(latencyTimeChart("chart-latency-time", series))

	lat := decodeLatency(h.Histograms)
	section(b, "Percentile spectrum", "Latency at each percentile, on HdrHistogram's log axis: every step right is ten times rarer.")
	b.WriteString(spectrumChart("chart-spectrum", lat, "all responses"))
	writePercentileTable(b, r)
	section(b, "Latency histogram", "How many responses took how long (log-spaced bins).")
	b.WriteString(histogramChart("chart-histogram", lat))

	if l := h.LLM; l != nil {
		writeLLMHTML(b, l)
		b.WriteString(tokensChart("chart-llm-tokens", series)) // llm_html.go
	}

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
	if len(h.Stages) > 0 {
		writeStagesHTML(b, r) // stages.go
	}
	writePhasesHTML(b, r)
	if len(h.Thresholds) > 0 {
		writeThresholdsHTML(b, r)
	}
	if h.Merged != nil || h.Shard != nil {
		writeDistributed(b, r)
	}
	section(b, "Configuration", "The run's settings, secrets redacted.")
	writeConfig(b, h.Config)
	fmt.Fprintf(b, "</main>\n<footer>hail %s · started %s · engine %s (%s)</footer>\n", esc(h.Version),
		esc(time.Unix(0, unixNano(h.Start)).UTC().Format(time.RFC3339)), esc(h.Engine), esc(h.EngineReason))
	b.WriteString(htmlTail)
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

func subtitle(r *result.Result) string {
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
	parts = append(parts, fmt.Sprintf("%.2f s", r.Summary.Total.Seconds()))
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

func writeKPIs(b *strings.Builder, r *result.Result) {
	h := r.Hail
	p := r.LatencyPercentiles
	kpi := func(label, value, cls string) {
		fmt.Fprintf(b, "<div class=\"kpi %s\"><div class=\"v\">%s</div><div class=\"l\">%s</div></div>", cls, esc(value), esc(label))
	}
	none, a := h.Counts.Responses == 0, h.AllSent
	b.WriteString("<section class=\"kpis\">")
	kpi("requests", strconv.FormatInt(h.Counts.Requests, 10), "")
	kpi("requests/s", fmt.Sprintf("%.1f", r.Summary.RequestsPerSec), "")
	kpi("successful/s", fmt.Sprintf("%.1f", h.Rates.SuccessfulPerSec), "")
	cls, rate := "ok", "n/a"
	if h.Counts.Requests-h.Counts.Aborted > 0 {
		rate = fmt.Sprintf("%.2f%%", 100*r.Summary.SuccessRate)
	}
	if r.Summary.SuccessRate < 0.999 {
		cls = "bad"
	}
	kpi("success rate", rate, cls)
	kpi("p50", durNA(p.P50.Seconds(), none), "")
	kpi("p99", durNA(p.P99.Seconds(), none), "")
	kpi("p99.9", durNA(p.P999.Seconds(), none), "")
	kpi("max", durNA(r.Summary.Slowest.Seconds(), none), "")
	cls = ""
	if a.Failed+a.CutOff > 0 {
		cls = "bad"
	}
	kpi(fmt.Sprintf("p99, all sent (%d failed, %d cut off)", a.Failed, a.CutOff), durNA(a.P99.Seconds(), a.Requests == 0), cls)
	kpi("max, all sent", durNA(a.Max.Seconds(), a.Requests == 0), cls)
	kpi("throughput", bytesHuman(r.Summary.SizePerSec)+"/s", "")
	b.WriteString("</section>\n")
}

func writeVerdict(b *strings.Builder, r *result.Result) {
	v := r.Hail.Verdict
	head, warn := Headline(v)
	cls := "ok"
	if warn {
		cls = "warn"
	}
	if f := FailureHeadline(r); f != "" {
		fmt.Fprintf(b, "<section class=\"verdict warn\" id=\"no-success\"><strong>%s</strong></section>\n", esc(f))
	}
	fmt.Fprintf(b, "<section class=\"verdict %s\" id=\"verdict\" data-bottleneck=\"%s\"><strong>%s</strong><ul>", cls, esc(v.Bottleneck), esc(head))
	for _, why := range v.Reasons {
		fmt.Fprintf(b, "<li>%s</li>", esc(why))
	}
	b.WriteString("</ul></section>\n")
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

func writePercentileTable(b *strings.Builder, r *result.Result) {
	a := r.Hail.AllSent
	var all *result.Percentiles
	if a.Requests > 0 {
		p := percentiles(decodeLatency(r.Hail.Histograms, true))
		all = &p
	}
	ok, other := r.SplitCounts()
	rows := []struct {
		name string
		p    *result.Percentiles
		none bool
	}{{"responses", &r.LatencyPercentiles, r.Hail.Counts.Responses == 0}, {fmt.Sprintf("all sent (%d failed, %d cut off)", a.Failed, a.CutOff), all, false},
		{"2xx", r.LatencyPercentilesSuccessful, ok == 0}, {"not 2xx", r.LatencyPercentilesNotSuccessful, other == 0},
		{"first byte", &r.FirstBytePercentiles, len(r.FirstByteHistogram) == 0}}
	b.WriteString("<table class=\"num\"><tr><th></th><th>p10</th><th>p25</th><th>p50</th><th>p75</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>p99.99</th></tr>")
	for _, row := range rows {
		if row.p == nil {
			continue
		}
		p := row.p
		fmt.Fprintf(b, "<tr><th>%s</th>", esc(row.name))
		for _, v := range []float64{p.P10.Seconds(), p.P25.Seconds(), p.P50.Seconds(), p.P75.Seconds(), p.P90.Seconds(), p.P95.Seconds(), p.P99.Seconds(), p.P999.Seconds(), p.P9999.Seconds()} {
			fmt.Fprintf(b, "<td>%s</td>", esc(durNA(v, row.none)))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>\n")
}

func writeGenerator(b *strings.Builder, r *result.Result) {
	h := r.Hail
	g := h.Generator
	rows := [][2]string{
		{"engine", h.Engine + " — " + h.EngineReason},
		{"CPU", fmt.Sprintf("%.2f s user, %.2f s system, %.2f µs/request, %.0f%% of %d core(s)", g.User.Seconds(), g.System.Seconds(), micros(g.CPUPerRequest), 100*g.Utilization, g.Cores)},
		{"context switches", fmt.Sprintf("%d voluntary, %d involuntary", g.VoluntarySwitches, g.ForcedSwitches)},
		{"peak RSS", bytesHuman(float64(g.MaxRSSBytes))},
	}
	if g.OthersCPU > 0 || g.Steal > 0 {
		rows = append(rows, [2]string{"its CPUs", fmt.Sprintf("others used %.0f%%, steal %.0f%%", 100*g.OthersCPU, 100*g.Steal)})
	}
	rows = append(rows, [2]string{"requests", accounting(&h)})
	if h.Model == "open" {
		own, wait := sendDelay(&h, fmtDur)
		rows = append(rows, [2]string{"send delay, hail's own", own}, [2]string{"send delay, connection wait", wait})
	}
	kvTable(b, rows)
}

func writeTarget(b *strings.Builder, r *result.Result) {
	t := r.Hail.Target
	if t == nil {
		return
	}
	rows := [][2]string{
		{"process", fmt.Sprintf("pid %d (%s)", t.PID, t.Command)},
		{"RSS", fmt.Sprintf("peak %s, mean %s, %s at the start → %s at the end", bytesHuman(float64(t.PeakRSSBytes)), bytesHuman(float64(t.MeanRSSBytes)), bytesHuman(float64(t.StartRSSBytes)), bytesHuman(float64(t.EndRSSBytes)))},
		{"CPU", fmt.Sprintf("%.2f s (%.2f cores mean, %.2f peak)", t.CPU.Seconds(), t.MeanCPU, t.PeakCPU)},
	}
	if r.Hail.Counts.Requests > 0 {
		rows = append(rows, [2]string{"CPU per request", fmt.Sprintf("%.2f µs", t.CPU.Seconds()*1e6/float64(r.Hail.Counts.Requests))})
	}
	rows = append(rows, targetRows(t)...) // target.go
	if t.Exited {
		rows = append(rows, [2]string{"note", "the process exited during the run"})
	}
	kvTable(b, rows)
}

func writeDistributed(b *strings.Builder, r *result.Result) {
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
		for _, line := range perShardLines(m) {
			rows = append(rows, [2]string{"shard", line})
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

// configJSON is v as JSON without HTML escapes, indented by indent ("":
// on one line).
func configJSON(v any, indent string) string {
	var j strings.Builder
	enc := json.NewEncoder(&j)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	_ = enc.Encode(v)
	return strings.TrimSpace(j.String())
}

// writeConfig writes the run's configuration: plain values as they are,
// nested ones (a scenario's steps, stages, thresholds …) as indented JSON
// in a block, with "<" as "<" (not JSON's \u003c).
func writeConfig(b *strings.Builder, c map[string]any) {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("<table class=\"kv\">")
	for _, k := range keys {
		if x, ok := c[k].(string); ok {
			fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>", esc(k), esc(x))
			continue
		}
		v := configJSON(c[k], "")
		if len(v) > 40 && (v[0] == '{' || v[0] == '[') {
			fmt.Fprintf(b, "<tr><th>%s</th><td><pre class=\"cfg\">%s</pre></td></tr>", esc(k), esc(configJSON(c[k], "  ")))
			continue
		}
		fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>", esc(k), esc(v))
	}
	b.WriteString("</table>\n")
}

func writeStepsHTML(b *strings.Builder, r *result.Result) {
	section(b, "Steps", "Each step of the scenario on its own.")
	b.WriteString("<table class=\"num\"><tr><th>step</th><th>requests</th><th>share</th><th>requests/s</th><th>error rate</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>p99, all sent</th><th>max, all sent</th></tr>")
	for _, s := range r.Hail.Steps {
		l, none, a := s.Latency, s.Counts.Responses == 0, s.AllSent
		fmt.Fprintf(b, "<tr><th>%s</th><td>%d</td><td>%.1f%%</td><td>%.1f</td><td>%.2f%%</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			esc(s.Name), s.Counts.Requests, 100*s.Share, s.RPS, 100*s.ErrorRate, durNA(l.Mean.Seconds(), none), durNA(l.P50.Seconds(), none), durNA(l.P90.Seconds(), none),
			durNA(l.P99.Seconds(), none), durNA(l.P999.Seconds(), none), durNA(l.Max.Seconds(), none), durNA(a.P99.Seconds(), a.Requests == 0), durNA(a.Max.Seconds(), a.Requests == 0))
	}
	b.WriteString("</table>\n")
	for i, s := range r.Hail.Steps {
		fmt.Fprintf(b, "<section class=\"step\"><h3>Step %s</h3>\n", esc(s.Name))
		b.WriteString(rpsChart(fmt.Sprintf("chart-step-%d-rps", i), s.Series))
		b.WriteString(spectrumChart(fmt.Sprintf("chart-step-%d-spectrum", i), decodeLatency(s.Histograms), s.Name))
		if s.LLM != nil {
			fmt.Fprintf(b, "<p class=\"note\">LLM: %s</p>", esc(llmStepLine(s.LLM)))
		}
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

func writeThresholdsHTML(b *strings.Builder, r *result.Result) {
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

// htmlHead opens the page: version, title and stylesheet go in. Its script
// counts script errors on the page into data-errors (the browser test
// reads them).
const htmlHead = `<!DOCTYPE html>
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
`

// htmlTail wires the charts' tooltips, marks the page ready (data-charts,
// data-ready) and closes it.
const htmlTail = `<script>
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
`

// htmlCSS styles the page and its charts.
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
svg .boundary{stroke:#7c3aed;stroke-width:1;stroke-dasharray:4 3}
svg .stagelabel{font-size:11px;fill:#5b21b6}
svg .warmup{fill:rgba(107,114,128,.10)}
svg .drain{fill:rgba(234,88,12,.12)}
svg .bandlabel{font-size:11px;fill:var(--muted)}
svg .count{font-size:12px;fill:var(--fg)}
svg .empty{font-size:14px;fill:var(--muted);text-anchor:middle}
.tip{min-height:18px;color:#1e3a8a;font-size:12px;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;margin:6px 0 10px;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
table.num td{text-align:right;font-variant-numeric:tabular-nums}
table.kv th{width:190px;color:var(--muted);font-weight:500}
table.kv td{word-break:break-word}
pre.cfg{margin:0;font-size:12px;white-space:pre-wrap}
td.ok{color:#15803d;font-weight:600}td.bad{color:#b91c1c;font-weight:600}
ul.hints{color:#92400e}
footer{color:var(--muted);font-size:12px;text-align:center;padding:20px;border-top:1px solid var(--line)}
@media print{.tip{display:none}}
`

// writeLLMHTML writes hail llm's section: its numbers' percentiles, and
// the distributions of time to first token and of the time between
// tokens.
func writeLLMHTML(b *strings.Builder, l *result.LLM) {
	section(b, "LLM streams", fmt.Sprintf("%d completed, %d failed, %d truncated; %.1f output tokens/s. TTFT from the intended send (the queue included) first; docs/llm.md defines each.",
		l.Completed, l.Failed, l.Truncated, l.OutputThroughput))
	b.WriteString("<table class=\"num\"><tr><th></th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>samples</th></tr>")
	for _, row := range []struct {
		name string
		d    result.Dist
	}{{"TTFT (from intended send)", secDist(l.TTFT)}, {"TTFT (from actual send)", secDist(l.TTFTFromSend)}, {"TPOT", secDist(l.TPOT)}, {"ITL (per token)", secDist(l.ITL)}, {"inter-chunk gap", secDist(l.ChunkGap)}} {
		fmt.Fprintf(b, "<tr><th>%s</th>", esc(row.name))
		for _, v := range []float64{row.d.Mean, row.d.P50, row.d.P90, row.d.P99, row.d.P999, row.d.Max} {
			fmt.Fprintf(b, "<td>%s</td>", esc(durNA(v, row.d.Samples == 0)))
		}
		fmt.Fprintf(b, "<td>%d</td></tr>", row.d.Samples)
	}
	b.WriteString("</table>\n")
	decode := func(enc string) *hdr.Histogram {
		if h, err := DecodeHist(enc); err == nil {
			return h
		}
		return stats.NewHist()
	}
	b.WriteString(durationHistogram("chart-llm-ttft", decode(l.Histograms.TTFT), "Time to first token (from the intended send)", "TTFT (log scale)", "streams"))
	b.WriteString(durationHistogram("chart-llm-itl", decode(l.Histograms.ITL), "Inter-token latency (per token)", "ITL (log scale)", "tokens"))
}
