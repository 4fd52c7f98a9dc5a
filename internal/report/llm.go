package report

// hail.llm: what the token streams of hail llm measured (docs/llm.md
// defines every number), with the keys of a vLLM `bench serve` result file
// beside hail's own.

import (
	"fmt"
	"math"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
)

// LLM is hail.llm.
type LLM struct {
	// API is "completions" or "chat"; Model the model asked for;
	// InputAsked and OutputAsked the token lengths asked for, as given
	// (--input-tokens, --output-tokens). hail llm sets them; hail merge
	// keeps the first result's.
	API         string `json:"api,omitempty"`
	Model       string `json:"model,omitempty"`
	InputAsked  string `json:"input_tokens_asked,omitempty"`
	OutputAsked string `json:"output_tokens_asked,omitempty"`
	// SLO are the objectives of goodput (--slo), seconds; absent without.
	SLO *SLO `json:"slo,omitempty"`
	// Arrivals is how the open model's requests arrived: "poisson",
	// "constant", "gamma:B" (vLLM's burstiness B) or "bursts"; absent in
	// the closed model.
	Arrivals string `json:"arrivals,omitempty"`

	// Truncated streams were cut when the run ended (they count in TTFT
	// only); OtherLength completed requests whose output length differed
	// from the one asked for.
	Truncated   int64 `json:"truncated"`
	OtherLength int64 `json:"other_length"`
	// TokenSource counts completed requests by where their output tokens
	// came from: "usage" (the server's usage in every chunk), "usage_spread"
	// (its usage at the end, spread over the content chunks),
	// "content_deltas" (no usage: one token per content chunk).
	TokenSource map[string]int64 `json:"token_source"`
	// TTFT is the time to the first content token from the request's
	// intended send time (coordinated-omission correct), TTFTFromSend from
	// its actual send; TPOT is (last token − first token) ÷ (output tokens
	// − 1); ITL is per token (a chunk of k tokens after a gap g counts k
	// gaps of g/k); ChunkGap the gaps between content chunks; E2E the
	// latency from intended send to the response's end, E2EFromSend from
	// the actual send; seconds. OutputTokens and InputTokens are per
	// request; RequestRate each request's output tokens per second of its
	// E2EFromSend.
	TTFT         Dist `json:"ttft"`
	TTFTFromSend Dist `json:"ttft_from_send"`
	TPOT         Dist `json:"tpot"`
	ITL          Dist `json:"itl"`
	ChunkGap     Dist `json:"inter_chunk_gap"`
	E2E          Dist `json:"e2e"`
	E2EFromSend  Dist `json:"e2e_from_send"`
	OutputTokens Dist `json:"output_tokens_per_request"`
	InputTokens  Dist `json:"input_tokens_per_request"`
	RequestRate  Dist `json:"output_tokens_per_sec_per_request"`
	// Goodput is the completed requests that met every --slo objective.
	Goodput Goodput `json:"goodput"`
	// ITLAffected is set when hail's own read lag was large enough to
	// distort inter-token latencies (the verdict says so).
	ITLAffected bool `json:"itl_affected"`
	// Histograms are the above as HdrHistograms (ns; tokens; thousandths
	// of tokens per second), for exact merges.
	Histograms LLMHistograms `json:"histograms"`

	VLLM
}

// SLO are goodput's objectives in seconds (0: none).
type SLO struct {
	TTFT float64 `json:"ttft,omitempty"`
	TPOT float64 `json:"tpot,omitempty"`
	E2E  float64 `json:"e2e,omitempty"`
}

// VLLM are the keys of a vLLM `vllm bench serve` result file, with vLLM's
// meanings: times from each request's actual send (as vLLM measures),
// milliseconds. hail's differences: ITL is per token (vLLM's is per chunk,
// the same when a chunk carries one token); E2EL ends at the response's
// end (vLLM's at its last content chunk: the usage chunk and [DONE] lie
// between); percentiles are HdrHistogram's (3 significant digits) where
// vLLM interpolates between samples; max_concurrent_requests is the
// largest in-flight count sampled at the end of each second; goodput's
// objectives count TTFT and E2E from the intended send time. Completed are
// the streams that ended well; Failed the requests that ended otherwise,
// except those hail itself cut when the run ended (truncated streams, and
// requests aborted before their response began: hail.counts.aborted).
type VLLM struct {
	Duration              float64  `json:"duration"`
	Completed             int64    `json:"completed"`
	Failed                int64    `json:"failed"`
	TotalInputTokens      int64    `json:"total_input_tokens"`
	TotalOutputTokens     int64    `json:"total_output_tokens"`
	RequestThroughput     float64  `json:"request_throughput"`
	RequestGoodput        *float64 `json:"request_goodput"`
	OutputThroughput      float64  `json:"output_throughput"`
	TotalTokenThroughput  float64  `json:"total_token_throughput"`
	MaxOutputTokensPerS   float64  `json:"max_output_tokens_per_s"`
	MaxConcurrentRequests int64    `json:"max_concurrent_requests"`

	MeanTTFTMs   float64 `json:"mean_ttft_ms"`
	MedianTTFTMs float64 `json:"median_ttft_ms"`
	StdTTFTMs    float64 `json:"std_ttft_ms"`
	P90TTFTMs    float64 `json:"p90_ttft_ms"`
	P95TTFTMs    float64 `json:"p95_ttft_ms"`
	P99TTFTMs    float64 `json:"p99_ttft_ms"`
	P999TTFTMs   float64 `json:"p99.9_ttft_ms"`

	MeanTPOTMs   float64 `json:"mean_tpot_ms"`
	MedianTPOTMs float64 `json:"median_tpot_ms"`
	StdTPOTMs    float64 `json:"std_tpot_ms"`
	P90TPOTMs    float64 `json:"p90_tpot_ms"`
	P95TPOTMs    float64 `json:"p95_tpot_ms"`
	P99TPOTMs    float64 `json:"p99_tpot_ms"`
	P999TPOTMs   float64 `json:"p99.9_tpot_ms"`

	MeanITLMs   float64 `json:"mean_itl_ms"`
	MedianITLMs float64 `json:"median_itl_ms"`
	StdITLMs    float64 `json:"std_itl_ms"`
	P90ITLMs    float64 `json:"p90_itl_ms"`
	P95ITLMs    float64 `json:"p95_itl_ms"`
	P99ITLMs    float64 `json:"p99_itl_ms"`
	P999ITLMs   float64 `json:"p99.9_itl_ms"`

	MeanE2ELMs   float64 `json:"mean_e2el_ms"`
	MedianE2ELMs float64 `json:"median_e2el_ms"`
	StdE2ELMs    float64 `json:"std_e2el_ms"`
	P90E2ELMs    float64 `json:"p90_e2el_ms"`
	P95E2ELMs    float64 `json:"p95_e2el_ms"`
	P99E2ELMs    float64 `json:"p99_e2el_ms"`
	P999E2ELMs   float64 `json:"p99.9_e2el_ms"`
}

// sourceNames name the token sources in TokenSource, indexed by
// stats.TokenSource.
var sourceNames = []string{stats.FromUsage: "usage", stats.FromSpread: "usage_spread", stats.FromDeltas: "content_deltas"}

// buildLLM makes hail.llm from the run's stream totals.
func buildLLM(s *stats.Streams, in Input) *LLM {
	t := s.Tokens
	secs := in.Elapsed.Seconds()
	per := func(n float64) float64 {
		if secs <= 0 {
			return 0
		}
		return n / secs
	}
	l := &LLM{Truncated: s.Truncated, OtherLength: t.OtherLength, TokenSource: map[string]int64{},
		TTFT: timeDist(t.TTFT), TTFTFromSend: timeDist(t.TTFTSent), TPOT: timeDist(t.TPOT), ITL: timeDist(t.ITL),
		ChunkGap: timeDist(t.ChunkGap), E2E: timeDist(t.E2E), E2EFromSend: timeDist(t.E2ESent),
		OutputTokens: dist(t.Out, 1), InputTokens: dist(t.In, 1), RequestRate: dist(t.PerRequestRate, 1e3),
		Goodput: Goodput{Requests: t.Good, Tokens: t.GoodTokens, RequestsPerSec: per(float64(t.Good)), TokensPerSec: per(float64(t.GoodTokens))},
		Histograms: LLMHistograms{TTFT: encode(t.TTFT), TTFTFromSend: encode(t.TTFTSent), TPOT: encode(t.TPOT), ITL: encode(t.ITL),
			ChunkGap: encode(t.ChunkGap), E2E: encode(t.E2E), E2EFromSend: encode(t.E2ESent), OutputTokens: encode(t.Out),
			InputTokens: encode(t.In), RequestRate: encode(t.PerRequestRate)}}
	for i, name := range sourceNames {
		if n := t.Sources[i]; n > 0 {
			l.TokenSource[name] = n
		}
	}
	v := &l.VLLM
	v.Duration, v.Completed = sec(int64(in.Elapsed)), s.Completed
	v.Failed = max(in.Totals.Requests()-s.Completed-s.Truncated-in.Totals.Errors[stats.ErrAborted], 0) // not hail's own cuts
	v.TotalInputTokens, v.TotalOutputTokens = t.InSum, t.OutSum
	v.RequestThroughput, v.OutputThroughput = per(float64(s.Completed)), per(float64(t.OutSum))
	v.TotalTokenThroughput = per(float64(t.InSum + t.OutSum))
	for _, sec := range in.Series {
		if sec.Span >= 0.999 {
			v.MaxOutputTokensPerS = max(v.MaxOutputTokensPerS, float64(sec.Tokens)/sec.Span)
		}
		v.MaxConcurrentRequests = max(v.MaxConcurrentRequests, sec.InFlight)
	}
	ms := func(h *hdr.Histogram) [7]float64 {
		if h.TotalCount() == 0 {
			return [7]float64{}
		}
		ms := func(ns int64) float64 { return float64(ns) / 1e6 } // a whole number of ns, as every time in a Result
		q := func(p float64) float64 { return ms(h.ValueAtQuantile(p)) }
		return [7]float64{ms(int64(math.Round(h.Mean()))), q(50), ms(int64(math.Round(h.StdDev()))), q(90), q(95), q(99), q(99.9)}
	}
	x := ms(t.TTFTSent)
	v.MeanTTFTMs, v.MedianTTFTMs, v.StdTTFTMs, v.P90TTFTMs, v.P95TTFTMs, v.P99TTFTMs, v.P999TTFTMs = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
	x = ms(t.TPOT)
	v.MeanTPOTMs, v.MedianTPOTMs, v.StdTPOTMs, v.P90TPOTMs, v.P95TPOTMs, v.P99TPOTMs, v.P999TPOTMs = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
	x = ms(t.ITL)
	v.MeanITLMs, v.MedianITLMs, v.StdITLMs, v.P90ITLMs, v.P95ITLMs, v.P99ITLMs, v.P999ITLMs = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
	x = ms(t.E2ESent)
	v.MeanE2ELMs, v.MedianE2ELMs, v.StdE2ELMs, v.P90E2ELMs, v.P95E2ELMs, v.P99E2ELMs, v.P999E2ELMs = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
	return l
}

// SetSLO records goodput's objectives (seconds; 0: none) and vLLM's
// request_goodput, which is null without objectives.
func (l *LLM) SetSLO(ttft, tpot, e2e float64) {
	if ttft == 0 && tpot == 0 && e2e == 0 {
		l.SLO, l.RequestGoodput = nil, nil
		return
	}
	l.SLO = &SLO{TTFT: ttft, TPOT: tpot, E2E: e2e}
	g := l.Goodput.RequestsPerSec
	l.RequestGoodput = &g
}

// writeLLMText writes hail.llm at the head of the text report: the
// coordinated-omission-correct TTFT first.
func writeLLMText(b *strings.Builder, r *Result, c colorer) {
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
			v    float64
		}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"e2e", s.E2E}} {
			if o.v > 0 {
				obj = append(obj, o.name+" ≤ "+fmtDur(o.v))
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
	row := func(name string, d Dist, f func(float64) string) {
		if d.Samples == 0 {
			return
		}
		fmt.Fprintf(b, "  %-31s %10s %10s %10s %10s %10s %10s %10d\n", name, f(d.Mean), f(d.P50), f(d.P90), f(d.P99), f(d.P999), f(d.Max), d.Samples)
	}
	tokens := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	rate := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	row("TTFT (from intended send)", l.TTFT, fmtDur)
	row("TTFT (from actual send)", l.TTFTFromSend, fmtDur)
	row("TPOT", l.TPOT, fmtDur)
	itl := "ITL (per token)"
	if l.ITLAffected {
		itl = "ITL (per token)*"
	}
	row(itl, l.ITL, fmtDur)
	row("inter-chunk gap", l.ChunkGap, fmtDur)
	row("E2E latency (from intended)", l.E2E, fmtDur)
	row("E2E latency (from actual send)", l.E2EFromSend, fmtDur)
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

// StepLine says in one line what a scenario step's token streams
// measured: TTFT (from the intended and the actual send), TPOT, ITL and
// E2E at p50/p99, tokens, tokens/s and goodput.
func (l *LLM) StepLine() string {
	pp := func(d Dist) string {
		if d.Samples == 0 {
			return "n/a"
		}
		return fmtDur(d.P50) + "/" + fmtDur(d.P99)
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

// KeepAsked copies into l what src said the requests asked (API, model,
// lengths, arrivals, objectives): a merged or rebuilt entry keeps them.
func (l *LLM) KeepAsked(src *LLM) {
	l.API, l.Model, l.InputAsked, l.OutputAsked, l.Arrivals = src.API, src.Model, src.InputAsked, src.OutputAsked, src.Arrivals
	if s := src.SLO; s != nil {
		l.SetSLO(s.TTFT, s.TPOT, s.E2E)
	}
}

// mergeLLM keeps, in a merged result, what hail llm said of its run (the
// API, model, lengths asked and objectives: the first result's).
func mergeLLM(out, first *Result) {
	l, f := out.Hail.LLM, first.Hail.LLM
	if l == nil || f == nil {
		return
	}
	l.KeepAsked(f)
}

// EnsureLLM returns r's hail.llm, made empty (every request failed, none
// streamed) when the run measured no token stream.
func (r *Result) EnsureLLM() *LLM {
	if r.Hail.LLM == nil {
		r.Hail.LLM = &LLM{TokenSource: map[string]int64{}}
		r.Hail.LLM.Duration = r.Summary.Total
		r.Hail.LLM.Failed = r.Hail.Counts.Requests - r.Hail.Counts.Truncated - r.Hail.Counts.Aborted
		r.Hail.LLM.Truncated = r.Hail.Counts.Truncated
	}
	return r.Hail.LLM
}
