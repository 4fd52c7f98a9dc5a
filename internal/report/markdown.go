package report

import (
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"io"
	"strings"
)

// WriteMarkdown writes a result as Markdown: a summary table, the latency
// percentiles, status codes and errors, steps, the target and the
// generator's verdict — what a review or an issue needs.
func WriteMarkdown(w io.Writer, r *result.Result) error {
	b := &strings.Builder{}
	writeTitleMarkdown(b, r)
	writeSummaryMarkdown(b, r)
	writeOutcomesMarkdown(b, r)
	writeStepsMarkdown(b, r)
	writeStagesMarkdown(b, r) // stages.go
	writePhasesMarkdown(b, r)
	writeThresholdsMarkdown(b, r)
	writeResourcesMarkdown(b, r)
	writeVerdictMarkdown(b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTitleMarkdown writes the heading (the URL) and what ran: the model,
// engine, version, shard and merge.
func writeTitleMarkdown(b *strings.Builder, r *result.Result) {
	h := &r.Hail
	url, _ := h.Config["url"].(string)
	title := "hail result"
	if url != "" {
		title += ": " + mdEscape(url)
	}
	fmt.Fprintf(b, "### %s\n\n", title)
	fmt.Fprintf(b, "%s model, engine %s, hail %s", h.Model, h.Engine, h.Version)
	if h.Shard != nil {
		fmt.Fprintf(b, ", shard %d/%d", h.Shard.Index, h.Shard.Count)
	}
	if h.Merged != nil {
		fmt.Fprintf(b, ", merged from %d results", h.Merged.Results)
		if len(h.Merged.Incomplete) > 0 {
			fmt.Fprintf(b, "; **INCOMPLETE**: %s", mdEscape(strings.Join(h.Merged.Incomplete, "; ")))
		}
	}
	fmt.Fprintf(b, "\n\n")
}

// writeSummaryMarkdown writes the summary tables: requests and their
// rates and success, then the latency of the responses (oha's) and of
// every sent request (failures at their elapsed time) side by side; n/a
// where there is no value.
func writeSummaryMarkdown(b *strings.Builder, r *result.Result) {
	h := &r.Hail
	if head := FailureHeadline(r); head != "" {
		fmt.Fprintf(b, "> **%s**\n\n", mdEscape(head))
	}
	success := "n/a"
	if h.Counts.Requests-h.Counts.Aborted > 0 {
		success = fmt.Sprintf("%.2f%%", 100*r.Summary.SuccessRate)
	}
	fmt.Fprintf(b, "| requests | requests/s | completed/s | successful/s | success | errors |\n")
	fmt.Fprintf(b, "| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Fprintf(b, "| %d | %.1f | %.1f | %.1f | %s | %d |\n\n", h.Counts.Requests, r.Summary.RequestsPerSec, h.Rates.CompletedPerSec,
		h.Rates.SuccessfulPerSec, success, h.Counts.Errors)
	fmt.Fprintf(b, "| latency | mean | p50 | p90 | p99 | p99.9 | max |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	p, none := r.LatencyPercentiles, h.Counts.Responses == 0
	fmt.Fprintf(b, "| responses | %s | %s | %s | %s | %s | %s |\n", durNA(r.Summary.Average.Seconds(), none), durNA(p.P50.Seconds(), none), durNA(p.P90.Seconds(), none),
		durNA(p.P99.Seconds(), none), durNA(p.P999.Seconds(), none), durNA(r.Summary.Slowest.Seconds(), none))
	a := h.AllSent
	none = a.Requests == 0
	fmt.Fprintf(b, "| all sent: %d failed, %d cut off | %s | %s | %s | %s | %s | %s |\n\n", a.Failed, a.CutOff, durNA(a.Mean.Seconds(), none), durNA(a.P50.Seconds(), none),
		durNA(a.P90.Seconds(), none), durNA(a.P99.Seconds(), none), durNA(a.P999.Seconds(), none), durNA(a.Max.Seconds(), none))
	if a.NotSent > 0 {
		fmt.Fprintf(b, "%d requests failed before they were sent (in no latency).\n\n", a.NotSent)
	}
	if dr := h.Drain; dr != nil {
		fmt.Fprintf(b, "Drain (-w): %d requests ended in the %.3f s after the run stopped sending; the rates include them.\n\n", dr.Requests, dr.Duration.Seconds())
	}
}

// durNA formats seconds, or n/a when there is no value.
func durNA(s float64, none bool) string {
	if none {
		return "n/a"
	}
	return fmtDur(s)
}

// writeOutcomesMarkdown writes the status codes and errors, most frequent
// first, if there are any.
func writeOutcomesMarkdown(b *strings.Builder, r *result.Result) {
	if len(r.StatusCodeDistribution) == 0 && len(r.ErrorDistribution) == 0 {
		return
	}
	fmt.Fprintf(b, "| outcome | count |\n| --- | ---: |\n")
	for _, k := range sortedByCount(r.StatusCodeDistribution) {
		fmt.Fprintf(b, "| status %s | %d |\n", k, r.StatusCodeDistribution[k])
	}
	for _, k := range sortedByCount(r.ErrorDistribution) {
		fmt.Fprintf(b, "| %s | %d |\n", mdEscape(k), r.ErrorDistribution[k])
	}
	fmt.Fprintln(b)
}

// writeStepsMarkdown writes a scenario's steps, if there are any.
func writeStepsMarkdown(b *strings.Builder, r *result.Result) {
	if len(r.Hail.Steps) == 0 {
		return
	}
	fmt.Fprintf(b, "| step | requests | requests/s | error rate | p50 | p99 | max | p99, all sent |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range r.Hail.Steps {
		none := s.Counts.Responses == 0
		fmt.Fprintf(b, "| %s | %d | %.1f | %.2f%% | %s | %s | %s | %s |\n", mdEscape(s.Name), s.Counts.Requests, s.RPS, 100*s.ErrorRate,
			durNA(s.Latency.P50.Seconds(), none), durNA(s.Latency.P99.Seconds(), none), durNA(s.Latency.Max.Seconds(), none), durNA(s.AllSent.P99.Seconds(), s.AllSent.Requests == 0))
	}
	fmt.Fprintln(b)
	llm := false
	for _, s := range r.Hail.Steps {
		if s.LLM != nil {
			fmt.Fprintf(b, "- %s (llm): %s\n", mdEscape(s.Name), mdEscape(llmStepLine(s.LLM)))
			llm = true
		}
	}
	if llm {
		fmt.Fprintln(b)
	}
}

// writeThresholdsMarkdown writes a scenario's thresholds, passed or failed,
// if there are any.
func writeThresholdsMarkdown(b *strings.Builder, r *result.Result) {
	if len(r.Hail.Thresholds) == 0 {
		return
	}
	fmt.Fprintf(b, "| threshold | measured | |\n| --- | ---: | --- |\n")
	for _, t := range r.Hail.Thresholds {
		mark := "✅ pass"
		if !t.Pass {
			mark = "❌ fail"
		}
		expr := t.Expr
		switch {
		case t.Step != "":
			expr = t.Step + ": " + expr
		case t.Stage != "":
			expr = "stage " + t.Stage + ": " + expr
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", expr, mdEscape(t.Measured), mark)
	}
	fmt.Fprintln(b)
}

// writeResourcesMarkdown writes the generator's resource use, the
// accounting of the intended requests and, if it was watched, the
// target's.
func writeResourcesMarkdown(b *strings.Builder, r *result.Result) {
	h := &r.Hail
	g := h.Generator
	fmt.Fprintf(b, "Generator: %.2f µs CPU/request, %.0f%% of %d core(s), peak RSS %s", micros(g.CPUPerRequest), 100*g.Utilization, g.Cores, bytesHuman(float64(g.MaxRSSBytes)))
	if h.Model == "open" {
		fmt.Fprintf(b, ", own send lateness p99 %s, connection wait p99 %s", fmtDur(h.SendDelay.Own.P99.Seconds()), fmtDur(h.SendDelay.ConnWait.P99.Seconds()))
	}
	fmt.Fprintln(b, ".")
	fmt.Fprintf(b, "\nRequests: %s.\n", mdEscape(accounting(h)))
	if t := h.Target; t != nil {
		fmt.Fprintf(b, "\nTarget (pid %d, %s): peak RSS %s (mean %s, %s → %s), CPU %.2f s (%.2f cores mean, %.2f peak).\n",
			t.PID, mdEscape(t.Command), bytesHuman(float64(t.PeakRSSBytes)), bytesHuman(float64(t.MeanRSSBytes)),
			bytesHuman(float64(t.StartRSSBytes)), bytesHuman(float64(t.EndRSSBytes)), t.CPU.Seconds(), t.MeanCPU, t.PeakCPU)
		for _, row := range targetRows(t) {
			fmt.Fprintf(b, "%s: %s.\n", row[0], mdEscape(row[1]))
		}
	}
}

// writeVerdictMarkdown writes the verdict as a quote, its headline in bold
// when it warns, and whether a signal stopped the run.
func writeVerdictMarkdown(b *strings.Builder, r *result.Result) {
	h := &r.Hail
	head, warn := Headline(h.Verdict)
	if warn {
		head = "**" + head + "**"
	}
	fmt.Fprintf(b, "\n> %s\n", head)
	for _, why := range h.Verdict.Reasons {
		fmt.Fprintf(b, "> - %s\n", mdEscape(why))
	}
	if h.Interrupted {
		fmt.Fprintf(b, "\n_Interrupted: the run was stopped by a signal; the numbers cover what was done._\n")
	}
}
