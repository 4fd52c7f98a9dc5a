package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/result"
)

// BuildSteps makes the per-step results: names[i]'s totals are totals[i]
// and its per-second series series[i].
func BuildSteps(names []string, totals []*stats.Totals, series [][]stats.Second, elapsed time.Duration) []result.StepResult {
	var all int64
	for _, t := range totals {
		all += t.Requests()
	}
	out := make([]result.StepResult, len(names))
	for i, name := range names {
		t := totals[i]
		s := &out[i]
		s.Name = name
		m := MeasureTotals(t, elapsed)
		s.Counts = result.StepCounts{Requests: m.Requests, NotSent: t.NotSent, Responses: m.Responses, Errors: t.ErrorCount(), Aborted: m.Aborted, Truncated: t.Truncated(),
			Expected: t.Expected, Failed: m.Failed, BodyBytes: t.BodyBytes, SentBytes: t.SentBytes, LatencySum: time.Duration(t.LatencySum), FailedSum: time.Duration(t.FailedSum)}
		if all > 0 {
			s.Share = float64(m.Requests) / float64(all)
		}
		s.RPS = m.Value("rps", 0)
		s.ErrorRate = m.Value("error_rate", 0)
		lat := m.Latency
		if lat.TotalCount() > 0 {
			q := func(p float64) time.Duration { return time.Duration(lat.ValueAtQuantile(p)) }
			s.Latency = result.StepLatency{Min: time.Duration(lat.Min()), Mean: seconds(m.Value("mean", 0)), P50: q(50), P90: q(90), P95: q(95),
				P99: q(99), P999: q(99.9), Max: time.Duration(lat.Max())}
		}
		s.AllSent = allSent(t)
		s.StatusCodeDistribution = map[string]int64{}
		for code, n := range t.Status {
			if n > 0 {
				s.StatusCodeDistribution[status.Name(code)] = n
			}
		}
		s.ErrorDistribution = map[string]int64{}
		for k, n := range t.Errors {
			if n > 0 {
				s.ErrorDistribution[stats.ErrorKind(k).String()] = n
			}
		}
		s.Histograms = result.Histograms{LatencyOK: encode(t.LatencyOK), LatencyBad: encode(t.LatencyBad),
			FirstByte: encode(t.FirstByte), Lag: encode(t.Lag), Failed: encode(t.Failed)}
		if i < len(series) && series[i] != nil {
			s.Series = series[i]
		} else {
			s.Series = []stats.Second{}
		}
		if st := t.Stream; st != nil && st.Tokens != nil {
			s.LLM = buildLLM(st, Input{Totals: t, Series: s.Series, Elapsed: elapsed}, snapshots{})
		}
	}
	return out
}

// Measure is what thresholds are checked against: a run's or a step's
// latency histograms and counts, from live totals or from a Result.
type Measure struct {
	Latency    *hdr.Histogram // ns, every response
	LatencySum int64          // ns
	// AllSent holds every sent request that was not cut off: responses at
	// their latency, failures at their elapsed time (ns); AllSentSum is
	// their sum.
	AllSent    *hdr.Histogram
	AllSentSum int64
	Requests   int64 // ended: responses + errors
	Responses  int64
	Aborted    int64 // ended by the deadline or an interrupt
	Failed     int64 // errors other than aborts, plus responses with status ≥ 400 not expected
	Elapsed    time.Duration
	// Stream is what the streams measured (nil: none), for the metrics of
	// token streams (llm steps).
	Stream *stats.Streams
}

// MeasureTotals measures live (or final) totals over elapsed.
func MeasureTotals(t *stats.Totals, elapsed time.Duration) Measure {
	m := Measure{Latency: t.Latency(), LatencySum: t.LatencySum, AllSent: t.AllSent(), AllSentSum: t.LatencySum + t.FailedSum,
		Requests: t.Requests(), Responses: t.Responses(), Aborted: t.Errors[stats.ErrAborted], Elapsed: elapsed, Stream: t.Stream}
	m.Failed = t.ErrorCount() - m.Aborted - t.Expected
	for code, n := range t.Status {
		if status.Failed(code) {
			m.Failed += n
		}
	}
	return m
}

// failedStatuses counts failed responses in a status distribution: HTTP
// status ≥ 400 (or out of range), gRPC statuses other than OK.
func failedStatuses(dist map[string]int64) int64 {
	var n int64
	for k, c := range dist {
		if code, ok := status.ByName(k); !ok || status.Failed(code) {
			n += c
		}
	}
	return n
}

// decodeLatency decodes the responses-only latency histogram of hs; with
// all, the failed sent requests too (every sent request).
func decodeLatency(hs result.Histograms, all ...bool) *hdr.Histogram {
	h := stats.NewHist()
	encs := []string{hs.LatencyOK, hs.LatencyBad}
	if len(all) > 0 && all[0] {
		encs = append(encs, hs.Failed)
	}
	for _, s := range encs {
		if d, err := DecodeHist(s); err == nil {
			h.Merge(d)
		}
	}
	return h
}

// MeasureRun measures the whole run of r.
func MeasureRun(r *result.Result) Measure {
	c := r.Hail.Counts
	return Measure{Latency: decodeLatency(r.Hail.Histograms), LatencySum: int64(c.LatencySum),
		AllSent: decodeLatency(r.Hail.Histograms, true), AllSentSum: int64(c.LatencySum + c.FailedSum), Requests: c.Requests,
		Responses: c.Responses, Aborted: c.Aborted, Failed: c.Errors - c.Aborted + failedStatuses(r.StatusCodeDistribution) - c.Expected,
		Elapsed: r.Summary.Total, Stream: streams(r)}
}

// streams are r's stream totals (nil when it has none, or they do not
// decode).
func streams(r *result.Result) *stats.Streams {
	s, err := streamTotals(r)
	if err != nil {
		return nil
	}
	return s
}

// MeasureStep measures step s of a run that lasted elapsed.
func MeasureStep(s *result.StepResult, elapsed time.Duration) Measure {
	c := s.Counts
	return Measure{Latency: decodeLatency(s.Histograms), LatencySum: int64(c.LatencySum),
		AllSent: decodeLatency(s.Histograms, true), AllSentSum: int64(c.LatencySum + c.FailedSum), Requests: c.Requests,
		Responses: c.Responses, Aborted: c.Aborted, Failed: c.Failed, Elapsed: elapsed, Stream: stepStreams(s)}
}

// stepStreams are step s's token stream totals (nil: it is no llm step).
func stepStreams(s *result.StepResult) *stats.Streams {
	if s.LLM == nil {
		return nil
	}
	st, err := llmStreams(s.LLM)
	if err != nil {
		return nil
	}
	return st
}

// Value returns a metric. Latencies (seconds) judge every sent request —
// a failure at its elapsed time, requests cut off by the run's end left
// out: "pN" (a percentile, N from 0 to 100; q is N), "min", "max",
// "mean"; with "_ok" ("p_ok", "min_ok", "max_ok", "mean_ok") they judge
// the responses only. Counts and rates: "rps" (every ended request per
// second, oha's requests/s), "error_rate" (a fraction), "errors" (failed
// requests), "requests".
func (m *Measure) Value(metric string, q float64) float64 {
	if v, ok := m.llmValue(metric, q); ok {
		return v
	}
	lat, sum, n := m.AllSent, m.AllSentSum, int64(0)
	if lat != nil {
		n = lat.TotalCount()
	}
	if base, ok := strings.CutSuffix(metric, "_ok"); ok {
		metric, lat, sum, n = base, m.Latency, m.LatencySum, m.Responses
	}
	if lat == nil {
		lat = stats.NewHist()
	}
	switch metric {
	case "p":
		if lat.TotalCount() == 0 {
			return 0
		}
		return sec(lat.ValueAtQuantile(q))
	case "min":
		if lat.TotalCount() == 0 {
			return 0
		}
		return sec(lat.Min())
	case "max":
		return sec(lat.Max())
	case "mean":
		if n == 0 {
			return 0
		}
		return sec(meanNS(sum, n))
	case "rps":
		if m.Elapsed <= 0 {
			return 0
		}
		return float64(m.Requests) / m.Elapsed.Seconds()
	case "error_rate":
		if n := m.Requests - m.Aborted; n > 0 {
			return float64(m.Failed) / float64(n)
		}
		return 0
	case "errors":
		return float64(m.Failed)
	case "requests":
		return float64(m.Requests)
	}
	return 0
}

// writeSteps writes the per-step table of a scenario run.
func writeSteps(b *strings.Builder, r *result.Result, d func(float64) string, c colorer) {
	steps := r.Hail.Steps
	if len(steps) == 0 {
		return
	}
	w := len("total")
	for _, s := range steps {
		w = max(w, len(s.Name))
	}
	fmt.Fprintf(b, "Steps:\n")
	fmt.Fprintf(b, "  %-*s %10s %6s %10s %8s %8s %14s %14s %14s %14s %14s  %s\n", w, "step", "requests", "share", "req/s",
		"failed", "err%", "p50", "p90", "p99", "max", "all-sent p99", "status codes")
	na := func(v float64, none bool) string {
		if none {
			return "n/a"
		}
		return d(v)
	}
	row := func(name string, requests int64, share, rps float64, failed int64, rate float64, l result.StepLatency, resp int64, all result.AllSent, codes map[string]int64) {
		none := resp == 0
		fmt.Fprintf(b, "  %-*s %10d %5.1f%% %10.1f %8d %7.2f%% %14s %14s %14s %14s %14s  %s\n", w, name, requests, 100*share, rps,
			failed, 100*rate, na(l.P50.Seconds(), none), na(l.P90.Seconds(), none), na(l.P99.Seconds(), none), na(l.Max.Seconds(), none), na(all.P99.Seconds(), all.Requests == 0), codeList(codes, c))
	}
	for _, s := range steps {
		row(s.Name, s.Counts.Requests, s.Share, s.RPS, s.Counts.Failed, s.ErrorRate, s.Latency, s.Counts.Responses, s.AllSent, s.StatusCodeDistribution)
	}
	m := MeasureRun(r)
	total := result.StepLatency{P50: r.LatencyPercentiles.P50, P90: r.LatencyPercentiles.P90, P99: r.LatencyPercentiles.P99, Max: r.Summary.Slowest}
	row("total", m.Requests, 1, m.Value("rps", 0), m.Failed, m.Value("error_rate", 0), total, m.Responses, r.Hail.AllSent, r.StatusCodeDistribution)
	fmt.Fprintf(b, "  (p50 … max: responses; all-sent p99: every sent request, a failure at its elapsed time — what thresholds judge)\n")
	for _, s := range steps {
		if s.LLM != nil {
			fmt.Fprintf(b, "  %s: llm: %s\n", s.Name, llmStepLine(s.LLM))
		}
		if len(s.ErrorDistribution) > 0 {
			fmt.Fprintf(b, "  %s: errors: %s\n", s.Name, countList(s.ErrorDistribution))
		}
		if s.Stopped != "" {
			fmt.Fprintf(b, "  %s: stopped after %d requests: %s\n", s.Name, s.Counts.Requests, s.Stopped)
		}
		if s.Yields > 0 {
			var parts []string
			for _, k := range sortedByCount(s.YieldReasons) {
				parts = append(parts, fmt.Sprintf("%s (%d)", k, s.YieldReasons[k]))
			}
			fmt.Fprintf(b, "  %s: yielded %d times to another step: %s\n", s.Name, s.Yields, strings.Join(parts, ", "))
		}
		if s.CaptureMisses > 0 {
			fmt.Fprintf(b, "  %s: %d responses had nothing to capture (%d values captured)\n", s.Name, s.CaptureMisses, s.Captures)
		}
		for _, k := range sortedByCount(s.CheckFailures) {
			fmt.Fprintf(b, "  %s: check %s failed %d times\n", s.Name, k, s.CheckFailures[k])
		}
	}
	if sc := r.Hail.Scenario; sc != nil {
		for _, p := range sc.Pools {
			fmt.Fprintf(b, "  pool %s: %d live values at the end", p.Name, p.Live)
			if p.Dropped > 0 {
				fmt.Fprintf(b, ", %d dropped (full at %d)", p.Dropped, p.Max)
			}
			fmt.Fprintln(b)
		}
		for _, f := range sc.Feeds {
			fmt.Fprintf(b, "  feed %s: %d rows (%s), %d used", f.Name, f.Rows, f.Order, f.Used)
			if f.Refused > 0 {
				fmt.Fprintf(b, ", used up for %d requests", f.Refused)
			}
			fmt.Fprintln(b)
		}
		if sc.EndedBy != "" {
			fmt.Fprintf(b, "  the run ended early: %s\n", sc.EndedBy)
		}
	}
}

// codeList is a compact status code distribution: "201×700 404×3".
func codeList(m map[string]int64, c colorer) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		code, _ := status.ByName(k)
		parts = append(parts, c.status(code, k)+"×"+strconv.FormatInt(m[k], 10))
	}
	return strings.Join(parts, " ")
}

// writeThresholds writes each threshold as PASS or FAIL with its measured value.
func writeThresholds(b *strings.Builder, r *result.Result, c colorer) {
	ts := r.Hail.Thresholds
	if len(ts) == 0 && r.Hail.StoppedBy == "" {
		return
	}
	fmt.Fprintf(b, "Thresholds:\n")
	failed := 0
	for _, t := range ts {
		verdict := c.paint("32", "PASS")
		if !t.Pass {
			verdict = c.paint("1;31", "FAIL")
			failed++
		}
		scope := "all steps"
		switch {
		case t.Step != "":
			scope = "step " + t.Step
		case t.Stage != "":
			scope = "stage " + t.Stage
		}
		fmt.Fprintf(b, "  %s  %-28s %-16s measured %s\n", verdict, t.Expr, "("+scope+")", t.Measured)
	}
	if r.Hail.StoppedBy != "" {
		fmt.Fprintf(b, "  %s\n", c.warn("stopped early: "+r.Hail.StoppedBy))
	}
	if failed > 0 {
		fmt.Fprintf(b, "  %d of %d thresholds failed (exit status 2)\n", failed, len(ts))
	}
}

// ThresholdsFailed counts the failed thresholds of r.
func ThresholdsFailed(r *result.Result) int {
	n := 0
	for _, t := range r.Hail.Thresholds {
		if !t.Pass {
			n++
		}
	}
	return n
}

// llmValue is a metric of token streams (ok false for another metric):
// a latency of theirs, "p_ttft", "p_ttft_actual", "p_tpot", "p_itl",
// "p_e2e" (and min, max and mean for p), seconds; "goodput", the share
// of completed streams that met their objectives; "output_tokens_per_sec".
func (m *Measure) llmValue(metric string, q float64) (float64, bool) {
	var t *stats.Tokens
	if m.Stream != nil {
		t = m.Stream.Tokens
	}
	switch metric {
	case "goodput":
		if t == nil || m.Stream.Completed == 0 {
			return 0, true
		}
		return float64(t.Good) / float64(m.Stream.Completed), true
	case "output_tokens_per_sec":
		if t == nil || m.Elapsed <= 0 {
			return 0, true
		}
		return float64(t.OutSum) / m.Elapsed.Seconds(), true
	}
	stat, name, ok := strings.Cut(metric, "_")
	if !ok {
		return 0, false
	}
	if t == nil {
		return 0, name == "ttft" || name == "ttft_actual" || name == "tpot" || name == "itl" || name == "e2e"
	}
	var h *hdr.Histogram
	switch name {
	case "ttft":
		h = t.TTFT
	case "ttft_actual":
		h = t.TTFTSent
	case "tpot":
		h = t.TPOT
	case "itl":
		h = t.ITL
	case "e2e":
		h = t.E2E
	default:
		return 0, false
	}
	if h.TotalCount() == 0 {
		return 0, true
	}
	switch stat {
	case "p":
		return sec(h.ValueAtQuantile(q)), true
	case "min":
		return sec(h.Min()), true
	case "max":
		return sec(h.Max()), true
	case "mean":
		return h.Mean() / 1e9, true
	}
	return 0, false
}
