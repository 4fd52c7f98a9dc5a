package report

// A stage's LLM block (hail.stages[].llm): what the token streams whose
// requests were intended in a stage, after its warm-up, measured — as
// hail.llm does for the run, over the stage's measured seconds.

import (
	"fmt"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// buildStageLLM makes a stage's LLM block from its stream totals over its
// measured seconds; nil when it read no tokens.
func buildStageLLM(s *stats.Streams, seconds float64) *result.StageLLM {
	if s == nil || s.Tokens == nil {
		return nil
	}
	t := s.Tokens
	per := func(n int64) float64 {
		if seconds <= 0 {
			return 0
		}
		return float64(n) / seconds
	}
	m := snapshots{} // each histogram is read twice: summary and encoding
	return &result.StageLLM{Completed: s.Completed, Truncated: s.Truncated, OtherLength: t.OtherLength,
		TotalOutputTokens: t.OutSum, TotalInputTokens: t.InSum, RequestThroughput: per(s.Completed), OutputThroughput: per(t.OutSum),
		TTFT: m.timeDist(t.TTFT), TTFTFromSend: m.timeDist(t.TTFTSent), TPOT: m.timeDist(t.TPOT), ITL: m.timeDist(t.ITL),
		E2E: m.timeDist(t.E2E), E2EFromSend: m.timeDist(t.E2ESent),
		Goodput: result.Goodput{Requests: t.Good, Tokens: t.GoodTokens, RequestsPerSec: per(t.Good), TokensPerSec: per(t.GoodTokens)},
		Histograms: result.LLMHistograms{TTFT: m.encode(t.TTFT), TTFTFromSend: m.encode(t.TTFTSent), TPOT: m.encode(t.TPOT), ITL: m.encode(t.ITL),
			ChunkGap: m.encode(t.ChunkGap), E2E: m.encode(t.E2E), E2EFromSend: m.encode(t.E2ESent), OutputTokens: m.encode(t.Out),
			InputTokens: m.encode(t.In), RequestRate: m.encode(t.PerRequestRate)}}
}

// stageLLMStreams rebuilds the token part of a stage's stream totals from
// its LLM block (its truncated streams are the stage's counts').
func stageLLMStreams(l *result.StageLLM) (*stats.Streams, error) {
	s := stats.NewStreams(true)
	s.Completed = l.Completed
	t := s.Tokens
	t.OutSum, t.InSum, t.OtherLength, t.Good, t.GoodTokens = l.TotalOutputTokens, l.TotalInputTokens, l.OtherLength, l.Goodput.Requests, l.Goodput.Tokens
	h := l.Histograms
	for i, enc := range []string{h.TTFT, h.TTFTFromSend, h.TPOT, h.ITL, h.ChunkGap, h.E2E, h.E2EFromSend, h.OutputTokens, h.InputTokens, h.RequestRate} {
		d, err := DecodeHist(enc)
		if err != nil {
			return nil, fmt.Errorf("bad LLM histogram in a stage: %v", err)
		}
		s.Hists()[4+i].Merge(d)
	}
	return s, nil
}

// stagesHaveLLM says whether any stage has an LLM block, and whether the
// run had objectives (goodput).
func stagesHaveLLM(r *result.Result) (llm, slo bool) {
	for _, s := range r.Hail.Stages {
		if s.LLM != nil {
			llm = true
		}
	}
	return llm, llm && r.Hail.LLM != nil && r.Hail.LLM.SLO != nil
}

// stageLLMCells are a stage's LLM cells of the stage tables: TTFT p99,
// TPOT p99, output tokens/s and (with objectives) goodput/s; "n/a" where
// it has none.
func stageLLMCells(s *result.StageResult, slo bool, d func(float64) string) []string {
	l := s.LLM
	if l == nil {
		out := []string{"n/a", "n/a", "n/a"}
		if slo {
			out = append(out, "n/a")
		}
		return out
	}
	na := func(x result.TimeDist) string {
		if x.Samples == 0 {
			return "n/a"
		}
		return d(x.P99.Seconds())
	}
	out := []string{na(l.TTFT), na(l.TPOT), fmt.Sprintf("%.1f", l.OutputThroughput)}
	if slo {
		out = append(out, fmt.Sprintf("%.2f", l.Goodput.RequestsPerSec))
	}
	return out
}

// stageLLMHeads are the heads of stageLLMCells' columns.
func stageLLMHeads(slo bool) []string {
	h := []string{"TTFT p99", "TPOT p99", "tokens/s"}
	if slo {
		h = append(h, "goodput/s")
	}
	return h
}
