package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// SweepStep is one open-model step of hail llm --sweep, as its HTML page
// draws it.
type SweepStep struct {
	// Rate is the rate asked (requests/s); Passed whether 99% of its
	// requests met every objective.
	Rate   float64
	Passed bool
	// TTFT99 is its TTFT p99 from the intended send, seconds; Goodput and
	// Throughput its requests/s that met every objective and that
	// completed.
	TTFT99, Goodput, Throughput float64
}

// WriteSweepHTML writes a sweep's page: the curves of TTFT p99 and of
// goodput and throughput against the rate, the answer marked, and the
// sweep's text table.
func WriteSweepHTML(w io.Writer, version, title, slo string, steps []SweepStep, answer, ceiling float64, table string) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, htmlHead, esc(version), esc("hail llm --sweep — "+title), htmlCSS)
	fmt.Fprintf(b, "<header><h1>hail llm --sweep</h1><div class=\"sub\">%s · objectives %s</div></header>\n<main>\n", esc(title), esc(slo))
	pts := append([]SweepStep(nil), steps...)
	sort.Slice(pts, func(i, j int) bool { return pts[i].Rate < pts[j].Rate })
	var xs, ttft, good, thr []float64
	top, topRate, topTTFT := ceiling, 0.0, 0.0
	for _, p := range pts {
		xs = append(xs, p.Rate)
		ttft, good, thr = append(ttft, p.TTFT99), append(good, p.Goodput), append(thr, p.Throughput)
		topRate = math.Max(topRate, p.Rate)
		topTTFT = math.Max(topTTFT, p.TTFT99)
		top = math.Max(top, math.Max(p.Goodput, p.Throughput))
	}
	xa := linearAxis(math.Max(topRate, ceiling)*1.05+1e-9, compactNum)
	tips := make([]string, len(pts))
	for i, p := range pts {
		verdict := "failed"
		if p.Passed {
			verdict = "passed"
		}
		tips[i] = fmt.Sprintf("%.2f requests/s: %s; TTFT p99 %s, goodput %.2f/s, throughput %.2f/s", p.Rate, verdict, fmtDur(p.TTFT99), p.Goodput, p.Throughput)
	}
	section(b, "TTFT p99 against the rate", "Each open-model step's time to first token (99th percentile, from the intended send); the dashed line is the answer: the highest rate at which 99% of requests met every objective.")
	c := newChart("chart-sweep-ttft", "TTFT p99", xa, linearAxis(topTTFT*1.05+1e-9, fmtDurShort), "requests/s", "TTFT p99")
	if len(pts) == 0 {
		c.empty("no step")
	}
	c.polyline(xs, line{name: "TTFT p99", color: palette.purple, ys: ttft})
	if answer > 0 {
		c.boundary(answer, fmt.Sprintf("answer %.2f/s", answer))
	}
	c.hoverColumns(xs, tips)
	b.WriteString(c.done())
	section(b, "Goodput and throughput against the rate", fmt.Sprintf("Requests/s that met every objective, and that completed, of each step's window; the closed-model ceiling was %.2f/s.", ceiling))
	c = newChart("chart-sweep-goodput", "Goodput", xa, linearAxis(top*1.05+1e-9, compactNum), "requests/s asked", "requests/s")
	if len(pts) == 0 {
		c.empty("no step")
	}
	ls := []line{{name: "throughput", color: palette.blue, ys: thr}, {name: "goodput", color: palette.green, ys: good}}
	for _, l := range ls {
		c.polyline(xs, l)
	}
	c.legend(ls)
	if answer > 0 {
		c.boundary(answer, fmt.Sprintf("answer %.2f/s", answer))
	}
	c.hoverColumns(xs, tips)
	b.WriteString(c.done())
	section(b, "Steps", "")
	fmt.Fprintf(b, "<pre>%s</pre>\n", esc(table))
	fmt.Fprintf(b, "</main>\n<footer>hail %s · llm --sweep</footer>\n", esc(version))
	b.WriteString(htmlTail)
	_, err := io.WriteString(w, b.String())
	return err
}
