package report

// Per-stage results (hail.stages): each stage of a ramp of connections or
// rate summarised on its own, from the requests whose intended send time
// fell in it once its warmup was over.

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// StageInput is what BuildStages needs beyond the totals.
type StageInput struct {
	// Clock holds the stages and their slots (schedule.StageClock).
	Clock *schedule.StageClock
	// Kind is "connections" or "rate"; Start the ramp's target before the
	// first stage.
	Kind  string
	Start float64
	// Totals are the slots' totals (Clock's slots: stages, then warmups).
	Totals []*stats.Totals
	// Series is the run's per-second series.
	Series []stats.Second
	// Stopped is when the run stopped sending (its end if it ran to it).
	Stopped time.Duration
}

// BuildStages makes the per-stage results.
func BuildStages(in StageInput) []result.StageResult {
	c := in.Clock
	out := make([]result.StageResult, len(c.Stages()))
	from := in.Start
	for i, sg := range c.Stages() {
		s := &out[i]
		s.Stage, s.Name, s.Kind, s.From, s.Target, s.Ramp = i+1, sg.Name, in.Kind, from, sg.Target, "linear"
		if sg.Step {
			s.Ramp = "step"
		}
		from = sg.Target
		begin, end := c.Start(i), c.End(i)
		s.Start, s.End = begin, end
		measured := min(begin+sg.Warmup, end)
		span := max(min(end, in.Stopped)-measured, 0)
		s.Measured = span
		fillStage(s, in.Totals[i], span)
		if w := c.WarmupSlot(i); w >= 0 {
			one := BuildSteps([]string{""}, []*stats.Totals{in.Totals[w]}, nil, sg.Warmup)[0]
			s.Warmup = &result.StageWarmup{Duration: measured - begin, Counts: one.Counts, Histograms: one.Histograms,
				LLM: buildStageLLM(in.Totals[w].Stream, (measured - begin).Seconds())}
		}
		s.Load, s.Process = stageSeries(in.Series, measured.Seconds(), (measured + span).Seconds(), s.Counts.Requests)
	}
	return out
}

// fillStage sets s's figures from its totals t over span.
func fillStage(s *result.StageResult, t *stats.Totals, span time.Duration) {
	one := BuildSteps([]string{""}, []*stats.Totals{t}, nil, span)[0]
	s.Counts, s.ErrorRate, s.Latency, s.AllSent = one.Counts, one.ErrorRate, one.Latency, one.AllSent
	s.StatusCodeDistribution, s.ErrorDistribution, s.Histograms = one.StatusCodeDistribution, one.ErrorDistribution, one.Histograms
	s.Rates = rates(t, span.Seconds())
	s.LLM = buildStageLLM(t.Stream, span.Seconds())
}

// stageSeries summarises the per-second series over a stage's measured
// part [from, to) (seconds from the run's start): the connections open and
// requests in flight, and the target's RSS, PSS and processes, from the
// samples taken inside it (each second's, at its end); the target's CPU from the seconds
// that lie in it (or, for a part shorter than a second, those it
// overlaps). requests are the stage's, for the target's CPU per request.
func stageSeries(series []stats.Second, from, to float64, requests int64) (*result.StageLoad, *result.StageProcess) {
	const eps = 1e-6
	var l result.StageLoad
	var p result.StageProcess
	var rss, pss float64
	pssSamples := 0
	for _, s := range series {
		if at := float64(s.Index) + s.Span.Seconds(); s.Span <= 0 || at <= from+eps || at >= to-eps {
			continue
		}
		l.Samples++
		l.ConnsOpenMean += float64(s.ConnsOpen)
		l.InFlightMean += float64(s.InFlight)
		l.ConnsOpenMax = max(l.ConnsOpenMax, s.ConnsOpen)
		l.InFlightMax = max(l.InFlightMax, s.InFlight)
		if s.TargetRSS > 0 {
			p.Samples++
			p.PeakRSSBytes = max(p.PeakRSSBytes, s.TargetRSS)
			rss += float64(s.TargetRSS)
			p.PeakProcesses = max(p.PeakProcesses, s.TargetProcs)
		}
		if s.TargetPSS > 0 {
			pssSamples++
			p.PeakPSSBytes = max(p.PeakPSSBytes, s.TargetPSS)
			pss += float64(s.TargetPSS)
		}
	}
	var load *result.StageLoad
	if l.Samples > 0 {
		l.ConnsOpenMean /= float64(l.Samples)
		l.InFlightMean /= float64(l.Samples)
		load = &l
	}
	var cpu, span float64
	add := func(inside bool) {
		for _, s := range series {
			a := float64(s.Index)
			if s.Span <= 0 || s.TargetRSS == 0 && s.TargetCPU == 0 {
				continue
			}
			if inside && a >= from-eps && a+s.Span.Seconds() <= to+eps || !inside && a < to && a+s.Span.Seconds() > from {
				cpu += s.TargetCPU * s.Span.Seconds()
				span += s.Span.Seconds()
			}
		}
	}
	if add(true); span == 0 {
		add(false)
	}
	if p.Samples == 0 && span == 0 {
		return load, nil
	}
	if p.Samples > 0 {
		p.MeanRSSBytes = int64(math.Round(rss / float64(p.Samples)))
	}
	if pssSamples > 0 {
		p.MeanPSSBytes = int64(math.Round(pss / float64(pssSamples)))
	}
	if span > 0 {
		p.MeanCPU = cpu / span
		if requests > 0 { // a whole number of ns, as every time in a Result
			p.CPUPerRequest = time.Duration(math.Round(p.MeanCPU * (to - from) * 1e9 / float64(requests)))
		}
	}
	return load, &p
}

// MeasureStage measures stage s (what its thresholds judge): its rates
// are per second of its measured part.
func MeasureStage(s *result.StageResult) Measure {
	c := s.Counts
	return Measure{Latency: decodeLatency(s.Histograms), LatencySum: int64(c.LatencySum),
		AllSent: decodeLatency(s.Histograms, true), AllSentSum: int64(c.LatencySum + c.FailedSum), Requests: c.Requests,
		Responses: c.Responses, Aborted: c.Aborted, Failed: c.Failed, Elapsed: s.Measured}
}

// FindStage returns the stage of r that ref names — its number (from 1)
// or its name — or nil.
func FindStage(r *result.Result, ref string) *result.StageResult {
	for i := range r.Hail.Stages {
		s := &r.Hail.Stages[i]
		if s.Name != "" && s.Name == ref || fmt.Sprint(s.Stage) == ref {
			return s
		}
	}
	return nil
}

// stageAt is the number of the stage in progress at t seconds into the
// run (0: none, or no stages).
func stageAt(stages []result.StageResult, t float64) int {
	for _, s := range stages {
		if t >= s.Start.Seconds() && t < s.End.Seconds() {
			return s.Stage
		}
	}
	return 0
}

// writeStagesText writes the per-stage table: a row per stage, the
// warmups left out, and the sum that ties the stages to the run.
func writeStagesText(b *strings.Builder, r *result.Result, d func(float64) string, c colorer) {
	stages := r.Hail.Stages
	if len(stages) == 0 {
		return
	}
	proc := stagesHaveProcess(stages)
	llm, slo := stagesHaveLLM(r)
	fmt.Fprintln(b, c.heading("Stages (a request counts in the stage of its intended send time; warmups are left out):"))
	head := []string{"stage", "load", "measured", "requests", "req/s", "successful/s", "err%", "p50", "p99", "all-sent p99", "conns"}
	if proc {
		head = append(head, "target RSS", "target CPU")
	}
	if llm {
		head = append(head, stageLLMHeads(slo)...)
	}
	rows := [][]string{head}
	na := func(v float64, none bool) string {
		if none {
			return "n/a"
		}
		return d(v)
	}
	for _, s := range stages {
		row := []string{s.Label(), s.LoadText(), measuredText(&s), fmt.Sprint(s.Counts.Requests), fmt.Sprintf("%.1f", s.Rates.RequestsPerSec),
			fmt.Sprintf("%.1f", s.Rates.SuccessfulPerSec), fmt.Sprintf("%.2f%%", 100*s.ErrorRate),
			na(s.Latency.P50.Seconds(), s.Counts.Responses == 0), na(s.Latency.P99.Seconds(), s.Counts.Responses == 0), na(s.AllSent.P99.Seconds(), s.AllSent.Requests == 0), connsText(&s)}
		if proc {
			rss, cpu := processText(&s)
			row = append(row, rss, cpu)
		}
		if llm {
			row = append(row, stageLLMCells(&s, slo, d)...)
		}
		rows = append(rows, row)
	}
	writeAligned(b, rows, 3)
	fmt.Fprintf(b, "  (measured: seconds from the run's start; p50, p99: responses; all-sent p99: every sent request; conns: mean open")
	if proc {
		fmt.Fprintf(b, "; target RSS: peak, CPU: mean")
	}
	if llm {
		fmt.Fprintf(b, "; TTFT from the intended send; tokens/s: output")
		if slo {
			fmt.Fprintf(b, "; goodput/s: requests meeting every --slo objective")
		}
	}
	fmt.Fprintln(b, ")")
	var inStages, inWarmups int64
	for _, s := range stages {
		inStages += s.Counts.Requests
		if w := s.Warmup; w != nil {
			inWarmups += w.Counts.Requests
			fmt.Fprintf(b, "  %s: warmup %s s left out (%d requests)\n", s.Label(), trimFloat(w.Duration.Seconds()), w.Counts.Requests)
		}
	}
	if inWarmups > 0 {
		fmt.Fprintf(b, "  %d requests in the stages + %d in their warmups = %d, the run's\n", inStages, inWarmups, inStages+inWarmups)
	}
	for _, s := range stages {
		if len(s.ErrorDistribution) > 0 {
			fmt.Fprintf(b, "  %s: errors: %s\n", s.Label(), countList(s.ErrorDistribution))
		}
	}
}

// warmupOf is the length of s's warmup, seconds (0 without one).
func warmupOf(s *result.StageResult) float64 {
	if s.Warmup == nil {
		return 0
	}
	return s.Warmup.Duration.Seconds()
}

// trimFloat prints seconds without trailing zeros: 2, 2.5, 0.125.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// writeAligned writes rows as columns: the first left-aligned columns
// (left of them), the rest right-aligned, two spaces apart, indented.
func writeAligned(b *strings.Builder, rows [][]string, left int) {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		line := ""
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i < left {
				line += cell + pad
			} else {
				line += pad + cell
			}
			if i < len(row)-1 {
				line += "  "
			}
		}
		fmt.Fprintln(b, "  "+strings.TrimRight(line, " "))
	}
}

// mergeStages merges the per-stage results of shards of one run, stage by
// stage (by number): counts and histograms add exactly, each stage's
// figures are rebuilt from the sums over its longest measured time, and
// its connections and target from the merged series.
func mergeStages(out *result.Result, results []*result.Result, name func(int) string) error {
	n := -1
	for i, r := range results {
		if n >= 0 && len(r.Hail.Stages) != n {
			return fmt.Errorf("%s has %d stages, %s %d: the results are not shards of one run", name(i), len(r.Hail.Stages), name(0), n)
		}
		n = len(r.Hail.Stages)
	}
	if n <= 0 {
		return nil
	}
	out.Hail.Stages = make([]result.StageResult, n)
	for k := range n {
		s := &out.Hail.Stages[k]
		*s = results[0].Hail.Stages[k]
		total := stats.NewTotals()
		var seconds float64
		var warm *result.StageWarmup
		for i, r := range results {
			rs := &r.Hail.Stages[k]
			t, err := stepTotals(&result.StepResult{Name: rs.Label(), Counts: rs.Counts, Histograms: rs.Histograms,
				StatusCodeDistribution: rs.StatusCodeDistribution, ErrorDistribution: rs.ErrorDistribution})
			if err != nil {
				return fmt.Errorf("%s: %v", name(i), err)
			}
			total.Add(t)
			if rs.LLM != nil {
				if err := addStageLLM(total, rs.LLM); err != nil {
					return fmt.Errorf("%s: %v", name(i), err)
				}
			}
			seconds = max(seconds, rs.Measured.Seconds())
			if w := rs.Warmup; w != nil {
				if warm == nil {
					warm = &result.StageWarmup{Duration: w.Duration}
				}
				if err := addWarmup(warm, w); err != nil {
					return fmt.Errorf("%s: %v", name(i), err)
				}
			}
		}
		span := time.Duration(math.Round(seconds * 1e9))
		s.Measured = span
		fillStage(s, total, span)
		s.Warmup = warm
		from := s.Start.Seconds() + warmupOf(s)
		s.Load, s.Process = stageSeries(out.Hail.Series, from, from+s.Measured.Seconds(), s.Counts.Requests)
	}
	return nil
}

// addWarmup adds warmup w's counts and histograms into into.
func addWarmup(into, w *result.StageWarmup) error {
	c, o := &into.Counts, w.Counts
	c.Requests += o.Requests
	c.NotSent += o.NotSent
	c.Responses += o.Responses
	c.Errors += o.Errors
	c.Aborted += o.Aborted
	c.Truncated += o.Truncated
	c.Expected += o.Expected
	c.Failed += o.Failed
	c.BodyBytes += o.BodyBytes
	c.SentBytes += o.SentBytes
	c.LatencySum += o.LatencySum
	c.FailedSum += o.FailedSum
	into.Duration = max(into.Duration, w.Duration)
	hs := []struct{ dst, src *string }{
		{&into.Histograms.LatencyOK, &w.Histograms.LatencyOK}, {&into.Histograms.LatencyBad, &w.Histograms.LatencyBad},
		{&into.Histograms.FirstByte, &w.Histograms.FirstByte}, {&into.Histograms.Lag, &w.Histograms.Lag}, {&into.Histograms.Failed, &w.Histograms.Failed},
	}
	for _, h := range hs {
		sum := stats.NewHist()
		for _, enc := range []string{*h.dst, *h.src} {
			if enc == "" {
				continue
			}
			d, err := DecodeHist(enc)
			if err != nil {
				return fmt.Errorf("bad histogram in a stage's warmup: %v", err)
			}
			sum.Merge(d)
		}
		*h.dst = encode(sum)
	}
	return addWarmupLLM(into, w)
}

// addWarmupLLM adds warmup w's LLM block, if it has one, into into's;
// into's counts already hold w's (their truncated streams are the
// block's).
func addWarmupLLM(into, w *result.StageWarmup) error {
	if w.LLM == nil {
		return nil
	}
	sum := stats.NewTotals()
	for _, l := range []*result.StageLLM{into.LLM, w.LLM} {
		if l == nil {
			continue
		}
		if err := addStageLLM(sum, l); err != nil {
			return fmt.Errorf("a stage's warmup: %v", err)
		}
	}
	sum.Stream.Truncated = into.Counts.Truncated
	into.LLM = buildStageLLM(sum.Stream, into.Duration.Seconds())
	return nil
}

// addStageLLM adds the token streams of a stage's (or a warmup's) LLM
// block l into t.
func addStageLLM(t *stats.Totals, l *result.StageLLM) error {
	ls, err := stageLLMStreams(l)
	if err != nil {
		return err
	}
	one := stats.NewTotals()
	one.Stream = ls
	t.Add(one)
	return nil
}
