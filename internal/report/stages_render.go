package report

// The per-stage results in Markdown and HTML, and the HTML chart of
// connections and requests in flight with the stages and the drain marked.

import (
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"math"
	"strconv"
	"strings"
)

// writeStagesMarkdown writes a table of the stages, if there are any.
func writeStagesMarkdown(b *strings.Builder, r *result.Result) {
	stages := r.Hail.Stages
	if len(stages) == 0 {
		return
	}
	proc := stagesHaveProcess(stages)
	llm, slo := stagesHaveLLM(r)
	fmt.Fprintf(b, "| stage | load | requests | requests/s | successful/s | error rate | p50 | p99 | p99, all sent | conns |")
	if proc {
		fmt.Fprintf(b, " target RSS | target CPU |")
	}
	if llm {
		fmt.Fprintf(b, " %s |", strings.Join(stageLLMHeads(slo), " | "))
	}
	fmt.Fprintf(b, "\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	if proc {
		fmt.Fprintf(b, " ---: | ---: |")
	}
	if llm {
		fmt.Fprintf(b, "%s", strings.Repeat(" ---: |", len(stageLLMHeads(slo))))
	}
	fmt.Fprintln(b)
	for _, s := range stages {
		none := s.Counts.Responses == 0
		fmt.Fprintf(b, "| %s | %s | %d | %.1f | %.1f | %.2f%% | %s | %s | %s | %s |", mdEscape(s.Label()), s.LoadText(), s.Counts.Requests,
			s.Rates.RequestsPerSec, s.Rates.SuccessfulPerSec, 100*s.ErrorRate, durNA(s.Latency.P50.Seconds(), none), durNA(s.Latency.P99.Seconds(), none),
			durNA(s.AllSent.P99.Seconds(), s.AllSent.Requests == 0), connsText(&s))
		if proc {
			rss, cpu := processText(&s)
			fmt.Fprintf(b, " %s | %s |", rss, cpu)
		}
		if llm {
			fmt.Fprintf(b, " %s |", strings.Join(stageLLMCells(&s, slo, fmtDur), " | "))
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintf(b, "\n_A request counts in the stage of its intended send time; %s._\n\n", warmupNote(stages))
}

// writeStagesHTML writes the stages' table.
func writeStagesHTML(b *strings.Builder, r *result.Result) {
	stages := r.Hail.Stages
	section(b, "Stages", "Each stage of the ramp on its own: a request counts in the stage of its intended send time; "+warmupNote(stages)+".")
	proc := stagesHaveProcess(stages)
	llm, slo := stagesHaveLLM(r)
	b.WriteString("<table class=\"num\"><tr><th>stage</th><th>load</th><th>measured</th><th>requests</th><th>requests/s</th><th>successful/s</th><th>error rate</th><th>p50</th><th>p99</th><th>p99, all sent</th><th>max, all sent</th><th>conns</th>")
	if proc {
		b.WriteString("<th>target RSS</th><th>target CPU</th>")
	}
	if llm {
		for _, h := range stageLLMHeads(slo) {
			fmt.Fprintf(b, "<th>%s</th>", esc(h))
		}
	}
	b.WriteString("</tr>")
	for _, s := range stages {
		l, none, a := s.Latency, s.Counts.Responses == 0, s.AllSent
		fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td><td>%s</td><td>%d</td><td>%.1f</td><td>%.1f</td><td>%.2f%%</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>",
			esc(s.Label()), esc(s.LoadText()), esc(measuredText(&s)), s.Counts.Requests, s.Rates.RequestsPerSec, s.Rates.SuccessfulPerSec, 100*s.ErrorRate,
			durNA(l.P50.Seconds(), none), durNA(l.P99.Seconds(), none), durNA(a.P99.Seconds(), a.Requests == 0), durNA(a.Max.Seconds(), a.Requests == 0), esc(connsText(&s)))
		if proc {
			rss, cpu := processText(&s)
			fmt.Fprintf(b, "<td>%s</td><td>%s</td>", esc(rss), esc(cpu))
		}
		if llm {
			for _, c := range stageLLMCells(&s, slo, fmtDur) {
				fmt.Fprintf(b, "<td>%s</td>", esc(c))
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>\n")
}

// stagesHaveProcess says whether any stage has target process samples.
func stagesHaveProcess(stages []result.StageResult) bool {
	for _, s := range stages {
		if s.Process != nil {
			return true
		}
	}
	return false
}

// warmupNote says what the warmups held.
func warmupNote(stages []result.StageResult) string {
	var in, warm int64
	for _, s := range stages {
		in += s.Counts.Requests
		if s.Warmup != nil {
			warm += s.Warmup.Counts.Requests
		}
	}
	if warm == 0 {
		return "the stages add up to the run"
	}
	return fmt.Sprintf("warmups are left out: %d requests in the stages + %d in their warmups = %d, the run's", in, warm, in+warm)
}

// measuredText is the stage's measured part: "2–10 s", "a jump (0 s)",
// "not reached".
func measuredText(s *result.StageResult) string {
	from := s.Start.Seconds() + warmupOf(s)
	switch {
	case s.End == s.Start:
		return "a jump (0 s)"
	case s.Measured.Seconds() == 0:
		return "not reached"
	}
	return fmt.Sprintf("%s–%s s", trimFloat(from), trimFloat(from+s.Measured.Seconds()))
}

// connsText is the stage's mean open connections, or n/a.
func connsText(s *result.StageResult) string {
	if s.Load == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", s.Load.ConnsOpenMean)
}

// processText is the stage's target peak RSS and mean CPU, or n/a.
func processText(s *result.StageResult) (rss, cpu string) {
	p := s.Process
	if p == nil {
		return "n/a", "n/a"
	}
	rss, cpu = "n/a", fmt.Sprintf("%.2f cores", p.MeanCPU)
	if p.PeakRSSBytes > 0 {
		rss = bytesHuman(float64(p.PeakRSSBytes))
	}
	return rss, cpu
}

// loadChartNote is the note above the load chart.
func loadChartNote(r *result.Result) string {
	n := "Connections open and requests in flight at the end of each second."
	if len(r.Hail.Stages) > 0 {
		n += " Dashed lines start the stages; grey bands are their warmups (left out of the stages' figures)."
	}
	if r.Hail.Drain != nil {
		n += " The orange band is the -w drain: the run had stopped sending and let requests in flight finish."
	}
	return n
}

// loadChart draws connections open and requests in flight per second,
// with each stage's start and warmup, the planned connections of
// connection stages, and the -w drain.
func loadChart(id string, r *result.Result) string {
	series := chartSeries(r.Hail.Series)
	xs, xa := timeAxis(series)
	conns := make([]float64, len(series))
	inflight := make([]float64, len(series))
	tips := make([]string, len(series))
	top := 1.0
	for i, s := range series {
		conns[i], inflight[i] = float64(s.ConnsOpen), float64(s.InFlight)
		top = math.Max(top, math.Max(conns[i], inflight[i]))
		tips[i] = fmt.Sprintf("second %d: %d connections open, %d requests in flight", s.Index+1, s.ConnsOpen, s.InFlight)
		if s.Drained > 0 {
			tips[i] += fmt.Sprintf(", %d ended in the drain", s.Drained)
		}
	}
	var planned line
	var px []float64
	for _, s := range r.Hail.Stages {
		if s.Kind != "connections" {
			break
		}
		from := s.From
		if s.Ramp == "step" {
			from = s.Target
		}
		px = append(px, s.Start.Seconds(), s.End.Seconds())
		planned.ys = append(planned.ys, from, s.Target)
		top = math.Max(top, s.Target)
	}
	c := newChart(id, "Connections and requests in flight", xa, linearAxis(top*1.1, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }), "time into the run", "count")
	for _, s := range r.Hail.Stages {
		if w := warmupOf(&s); w > 0 {
			c.band(s.Start.Seconds(), s.Start.Seconds()+w, "warmup", "warmup")
		}
	}
	if d := r.Hail.Drain; d != nil {
		c.band(r.Summary.Total.Seconds()-d.Duration.Seconds(), r.Summary.Total.Seconds(), "drain", "drain (-w)")
	}
	for _, s := range r.Hail.Stages {
		if s.End > s.Start {
			c.boundary(s.Start.Seconds(), strconv.Itoa(s.Stage))
		}
	}
	lines := []line{{name: "connections open", color: palette.blue, ys: conns}, {name: "in flight", color: palette.orange, ys: inflight}}
	if len(px) > 0 {
		planned.name, planned.color, planned.dash = "planned connections", palette.purple, true
		c.polyline(px, planned)
		lines = append(lines, planned)
	}
	if len(series) == 0 {
		c.empty("no second of the run was sampled")
	}
	c.polyline(xs, lines[0])
	c.polyline(xs, lines[1])
	c.legend(lines)
	c.hoverColumns(xs, tips)
	return c.done()
}
