package report

// hail.llm: what the token streams of hail llm measured (docs/llm.md
// defines every number), with the keys of a vLLM `bench serve` result file
// beside hail's own.

import (
	"fmt"
	"math"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// sourceNames name the token sources in TokenSource, indexed by
// stats.TokenSource.
var sourceNames = []string{stats.FromUsage: "usage", stats.FromSpread: "usage_spread", stats.FromDeltas: "content_deltas"}

// buildLLM makes hail.llm from the run's stream totals.
func buildLLM(s *stats.Streams, in Input, m snapshots) *result.LLM {
	t := s.Tokens
	secs := in.Elapsed.Seconds()
	per := func(n float64) float64 {
		if secs <= 0 {
			return 0
		}
		return n / secs
	}
	l := &result.LLM{Truncated: s.Truncated, OtherLength: t.OtherLength, TokenSource: map[string]int64{},
		TTFT: m.timeDist(t.TTFT), TTFTFromSend: m.timeDist(t.TTFTSent), TPOT: m.timeDist(t.TPOT), ITL: m.timeDist(t.ITL),
		ChunkGap: m.timeDist(t.ChunkGap), E2E: m.timeDist(t.E2E), E2EFromSend: m.timeDist(t.E2ESent),
		OutputTokens: m.dist(t.Out, 1), InputTokens: m.dist(t.In, 1), RequestRate: m.dist(t.PerRequestRate, 1e3),
		Goodput: result.Goodput{Requests: t.Good, Tokens: t.GoodTokens, RequestsPerSec: per(float64(t.Good)), TokensPerSec: per(float64(t.GoodTokens))},
		Histograms: result.LLMHistograms{TTFT: m.encode(t.TTFT), TTFTFromSend: m.encode(t.TTFTSent), TPOT: m.encode(t.TPOT), ITL: m.encode(t.ITL),
			ChunkGap: m.encode(t.ChunkGap), E2E: m.encode(t.E2E), E2EFromSend: m.encode(t.E2ESent), OutputTokens: m.encode(t.Out),
			InputTokens: m.encode(t.In), RequestRate: m.encode(t.PerRequestRate)}}
	for i, name := range sourceNames {
		if n := t.Sources[i]; n > 0 {
			l.TokenSource[name] = n
		}
	}
	v := &l.VLLM
	v.Duration, v.Completed = in.Elapsed, s.Completed
	v.Failed = max(in.Totals.Requests()-s.Completed-s.Truncated-in.Totals.Errors[stats.ErrAborted], 0) // not hail's own cuts
	v.TotalInputTokens, v.TotalOutputTokens = t.InSum, t.OutSum
	v.RequestThroughput, v.OutputThroughput = per(float64(s.Completed)), per(float64(t.OutSum))
	v.TotalTokenThroughput = per(float64(t.InSum + t.OutSum))
	for _, sec := range in.Series {
		if sec.Span.Seconds() >= 0.999 {
			v.MaxOutputTokensPerS = max(v.MaxOutputTokensPerS, float64(sec.Tokens)/sec.Span.Seconds())
		}
		v.MaxConcurrentRequests = max(v.MaxConcurrentRequests, sec.InFlight)
	}
	ms := func(h *hdr.Histogram) [7]time.Duration {
		if h.TotalCount() == 0 {
			return [7]time.Duration{}
		}
		s, q := m.summary(h), quantiles(h, distQuantiles)
		return [7]time.Duration{time.Duration(math.Round(s.Mean)), time.Duration(q[0]), time.Duration(math.Round(s.StdDev)),
			time.Duration(q[1]), time.Duration(q[2]), time.Duration(q[3]), time.Duration(q[4])}
	}
	x := ms(t.TTFTSent)
	v.MeanTTFT, v.MedianTTFT, v.StdTTFT, v.P90TTFT, v.P95TTFT, v.P99TTFT, v.P999TTFT = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
	x = ms(t.TPOT)
	v.MeanTPOT, v.MedianTPOT, v.StdTPOT, v.P90TPOT, v.P95TPOT, v.P99TPOT, v.P999TPOT = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
	x = ms(t.ITL)
	v.MeanITL, v.MedianITL, v.StdITL, v.P90ITL, v.P95ITL, v.P99ITL, v.P999ITL = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
	x = ms(t.E2ESent)
	v.MeanE2EL, v.MedianE2EL, v.StdE2EL, v.P90E2EL, v.P95E2EL, v.P99E2EL, v.P999E2EL = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
	return l
}

// writeLLMText writes hail.llm at the head of the text report: the
// coordinated-omission-correct TTFT first.
func writeLLMText(b *strings.Builder, r *result.Result, c colorer) {
	l := r.Hail.LLM
	if l == nil {
		return
	}
	head := "LLM streams"
	var what []string
	if path, ok := apiPaths[l.API]; ok {
		what = append(what, path)
	}
	if l.Model != "" {
		what = append(what, "model "+l.Model)
	}
	if l.InputAsked != "" || l.OutputAsked != "" {
		what = append(what, fmt.Sprintf("%s input → %s output tokens asked", orDash(l.InputAsked), orDash(l.OutputAsked)))
	}
	if len(what) > 0 {
		head += " (" + strings.Join(what, ", ") + ")"
	}
	fmt.Fprintln(b, c.heading(head+":"))
	fmt.Fprintf(b, "  Requests:\t%d completed, %d failed, %d truncated by the end of the run", l.Completed, l.Failed, l.Truncated)
	if n := r.Hail.Counts.Aborted; n > 0 {
		fmt.Fprintf(b, " (and %d cut before their response began)", n)
	}
	if l.OtherLength > 0 {
		fmt.Fprintf(b, "; %d of another output length than asked", l.OtherLength)
	}
	fmt.Fprintln(b)
	fmt.Fprintf(b, "  Tokens:\t%d output (%s), %d input\n", l.TotalOutputTokens, sourceText(l.TokenSource), l.TotalInputTokens)
	peak := "" // the busiest whole second; none in a run shorter than one
	if l.MaxOutputTokensPerS > 0 {
		peak = fmt.Sprintf(" (peak second %.0f)", l.MaxOutputTokensPerS)
	}
	fmt.Fprintf(b, "  Throughput:\t%.2f requests/s, %.1f output tokens/s%s, %.1f tokens/s in all\n",
		l.RequestThroughput, l.OutputThroughput, peak, l.TotalTokenThroughput)
	if s := l.SLO; s != nil {
		var obj []string
		for _, o := range []struct {
			name string
			v    time.Duration
		}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"e2e", s.E2E}} {
			if o.v > 0 {
				obj = append(obj, o.name+" ≤ "+fmtDur(o.v.Seconds()))
			}
		}
		share := 0.0
		if l.Completed > 0 {
			share = 100 * float64(l.Goodput.Requests) / float64(l.Completed)
		}
		fmt.Fprintf(b, "  Goodput:\t%d requests (%.1f%% of completed) met %s: %.2f requests/s, %.1f output tokens/s\n",
			l.Goodput.Requests, share, strings.Join(obj, ", "), l.Goodput.RequestsPerSec, l.Goodput.TokensPerSec)
	}
	fmt.Fprintf(b, "\n  %-31s %10s %10s %10s %10s %10s %10s %10s\n", "", "mean", "p50", "p90", "p99", "p99.9", "max", "samples")
	row := func(name string, d result.Dist, f func(float64) string) {
		if d.Samples == 0 {
			return
		}
		fmt.Fprintf(b, "  %-31s %10s %10s %10s %10s %10s %10s %10d\n", name, f(d.Mean), f(d.P50), f(d.P90), f(d.P99), f(d.P999), f(d.Max), d.Samples)
	}
	tokens := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	rate := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	row("TTFT (from intended send)", secDist(l.TTFT), fmtDur)
	row("TTFT (from actual send)", secDist(l.TTFTFromSend), fmtDur)
	row("TPOT", secDist(l.TPOT), fmtDur)
	itl := "ITL (per token)"
	if l.ITLAffected {
		itl = "ITL (per token)*"
	}
	row(itl, secDist(l.ITL), fmtDur)
	row("inter-chunk gap", secDist(l.ChunkGap), fmtDur)
	row("E2E latency (from intended)", secDist(l.E2E), fmtDur)
	row("E2E latency (from actual send)", secDist(l.E2EFromSend), fmtDur)
	row("output tokens per request", l.OutputTokens, tokens)
	row("input tokens per request", l.InputTokens, tokens)
	row("output tokens/s per request", l.RequestRate, rate)
	if l.ITLAffected {
		fmt.Fprintln(b, "  * affected by hail's own read lag (see the bottleneck below): gaps between tokens include hail's delay")
	}
	fmt.Fprintln(b)
}

// apiPaths are the endpoints of LLM.API's values.
var apiPaths = map[string]string{"completions": "/v1/completions", "chat": "/v1/chat/completions"}

func orDash(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// sourceText says where the output token counts came from.
func sourceText(src map[string]int64) string {
	text := map[string]string{"usage": "the server's usage per chunk", "usage_spread": "the server's final usage, spread over content chunks",
		"content_deltas": "one per content chunk: no usage from the server"}
	var parts []string
	for _, name := range sourceNames {
		if n := src[name]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s for %d", text[name], n))
		}
	}
	if len(parts) == 0 {
		return "none completed"
	}
	return "from " + strings.Join(parts, "; ")
}

// llmStepLine says in one line what a scenario step's token streams
// measured: TTFT (from the intended and the actual send), TPOT, ITL and
// E2E at p50/p99, tokens, tokens/s and goodput.
func llmStepLine(l *result.LLM) string {
	pp := func(d result.TimeDist) string {
		if d.Samples == 0 {
			return "n/a"
		}
		return fmtDur(d.P50.Seconds()) + "/" + fmtDur(d.P99.Seconds())
	}
	line := fmt.Sprintf("%d completed, %d failed, %d truncated; p50/p99 TTFT %s (from actual send %s), TPOT %s, ITL %s, E2E %s; %d output tokens (%.1f/s), %d input",
		l.Completed, l.Failed, l.Truncated, pp(l.TTFT), pp(l.TTFTFromSend), pp(l.TPOT), pp(l.ITL), pp(l.E2E), l.TotalOutputTokens, l.OutputThroughput, l.TotalInputTokens)
	if l.SLO != nil {
		share := 0.0
		if l.Completed > 0 {
			share = 100 * float64(l.Goodput.Requests) / float64(l.Completed)
		}
		line += fmt.Sprintf("; goodput %d (%.1f%%) met its slo", l.Goodput.Requests, share)
	}
	return line
}

// mergeLLM keeps, in a merged result, what hail llm said of its run (the
// API, model, lengths asked and objectives: the first result's).
func mergeLLM(out, first *result.Result) {
	l, f := out.Hail.LLM, first.Hail.LLM
	if l == nil || f == nil {
		return
	}
	l.KeepAsked(f)
}

// EnsureLLM returns r's hail.llm, made empty (every request failed, none
// streamed) when the run measured no token stream.
func EnsureLLM(r *result.Result) *result.LLM {
	if r.Hail.LLM == nil {
		r.Hail.LLM = &result.LLM{TokenSource: map[string]int64{}}
		r.Hail.LLM.Duration = r.Summary.Total
		r.Hail.LLM.Failed = r.Hail.Counts.Requests - r.Hail.Counts.Truncated - r.Hail.Counts.Aborted
		r.Hail.LLM.Truncated = r.Hail.Counts.Truncated
	}
	return r.Hail.LLM
}
