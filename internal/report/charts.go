// The HTML report's charts, drawn with the kit in svg.go from a Result:
// throughput, latency over time, the percentile spectrum, the latency
// histogram, outcomes, the target process and the generator.

package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
)

// HTMLCharts are the chart ids every HTML report has (a test checks them).
var HTMLCharts = []string{"chart-rps", "chart-load", "chart-latency-time", "chart-spectrum", "chart-histogram", "chart-status"}

// hasTarget says whether the series sampled a target process.
func hasTarget(series []stats.Second) bool {
	for _, s := range series {
		if s.TargetRSS > 0 {
			return true
		}
	}
	return false
}

// chartSeries drops a run's last entry when it covers only a sliver of a
// second: its per-second rates would be noise (a few requests over a few
// milliseconds).
func chartSeries(series []stats.Second) []stats.Second {
	if n := len(series); n > 1 && series[n-1].Span < 250*time.Millisecond {
		return series[:n-1]
	}
	return series
}

// timeAxis places each second at its end, on an axis from 0 to the run's end.
func timeAxis(series []stats.Second) ([]float64, axis) {
	xs := make([]float64, len(series))
	end := 1.0
	for i, s := range series {
		xs[i] = float64(s.Index) + s.Span.Seconds()
		end = math.Max(end, xs[i])
	}
	step := niceStep(end / 6)
	return xs, axis{lo: 0, hi: end, ticks: stepTicks(end, step, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "s" })}
}

// rpsChart draws requests/s and errors/s per second.
func rpsChart(id string, series []stats.Second) string {
	series = chartSeries(series)
	xs, xa := timeAxis(series)
	rps := make([]float64, len(series))
	errs := make([]float64, len(series))
	tips := make([]string, len(series))
	top := 0.0
	for i, s := range series {
		if s.Span > 0 {
			rps[i] = float64(s.Requests) / s.Span.Seconds()
			errs[i] = float64(s.Errors) / s.Span.Seconds()
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

// latencyTimeChart draws each second's p50, p90, p99 and max (log scale).
func latencyTimeChart(id string, series []stats.Second) string {
	series = chartSeries(series)
	xs, xa := timeAxis(series)
	get := func(f func(s stats.Second) time.Duration) []float64 {
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
		{name: "p50", color: palette.green, ys: get(func(s stats.Second) time.Duration { return s.P50 })},
		{name: "p90", color: palette.blue, ys: get(func(s stats.Second) time.Duration { return s.P90 })},
		{name: "p99", color: palette.orange, ys: get(func(s stats.Second) time.Duration { return s.P99 })},
		{name: "max", color: palette.red, ys: get(func(s stats.Second) time.Duration { return s.Max }), dash: true},
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
		tips[i] = fmt.Sprintf("second %d: p50 %s, p90 %s, p99 %s, max %s", s.Index+1, fmtDur(s.P50.Seconds()), fmtDur(s.P90.Seconds()), fmtDur(s.P99.Seconds()), fmtDur(s.Max.Seconds()))
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
	return durationHistogram(id, h, "Latency histogram", "latency (log scale)", "responses")
}

// durationHistogram draws a histogram of durations (ns) in log-spaced
// bins: its title, its x axis's name, and what it counts.
func durationHistogram(id string, h *hdr.Histogram, title, xname, what string) string {
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
	c := newChart(id, title, xa, ya, xname, what)
	if n == 0 {
		c.empty("no " + what)
	}
	for i, k := range counts {
		if k == 0 {
			continue
		}
		x0, x1 := xa.pos(edges[i], c.left, c.right), xa.pos(edges[i+1], c.left, c.right)
		y := ya.pos(float64(k), c.bottom, c.top)
		tip := fmt.Sprintf("%s – %s: %d %s (%.2f%%)", fmtDur(edges[i]), fmtDur(edges[i+1]), k, what, 100*float64(k)/float64(n))
		fmt.Fprintf(c.b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" data-tip=\"%s\"><title>%s</title></rect>",
			x0+0.5, y, math.Max(x1-x0-1, 1), c.bottom-y, palette.teal, esc(tip), esc(tip))
	}
	return c.done()
}

// statusChart draws horizontal bars: status codes, then error kinds.
func statusChart(id string, statuses, errs map[string]int64) string {
	type bar struct {
		label string
		n     int64
		color string
	}
	var bars []bar
	for _, k := range sortedByCount(statuses) {
		code, _ := status.ByName(k)
		col := palette.green
		switch {
		case status.IsGRPC(code) && status.Failed(code):
			col = palette.red
		case status.IsGRPC(code):
		case code >= 500 || code == 0:
			col = palette.red
		case code >= 400:
			col = palette.orange
		case code >= 300:
			col = palette.blue
		}
		bars = append(bars, bar{"status " + k, statuses[k], col})
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

// targetCharts draws the target process's RSS and CPU per second.
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
	c := newChart("chart-target-rss", "Target RSS", xa, byteAxis(topR*1.1), "time into the run", "resident memory")
	c.polyline(xs, line{name: "RSS", color: palette.purple, ys: rss})
	c.hoverColumns(xs, tips)
	out := c.done()
	c = newChart("chart-target-cpu", "Target CPU", xa, linearAxis(math.Max(topC*1.1, 0.1), func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }), "time into the run", "cores")
	c.polyline(xs, line{name: "CPU", color: palette.orange, ys: cpu})
	c.hoverColumns(xs, tips)
	return out + c.done()
}

// generatorChart draws hail's own CPU per second.
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
			tips[i] += ", schedule lag p99 " + fmtDur(s.LagP99.Seconds())
		}
	}
	c := newChart(id, "hail's CPU", xa, linearAxis(math.Max(top*1.1, 0.1), func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }), "time into the run", "cores")
	c.polyline(xs, line{name: "CPU", color: palette.grey, ys: cpu})
	c.hoverColumns(xs, tips)
	return c.done()
}
