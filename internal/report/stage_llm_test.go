package report

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// tokenTotals are random totals of n requests that streamed tokens:
// n−2 completed, 2 truncated.
func tokenTotals(rng *rand.Rand, n int) *stats.Totals {
	tot := randomTotals(rng, n-2)
	s := stats.NewStreams(true)
	s.Streams, s.Completed, s.Truncated, s.Events = int64(n), int64(n-2), 2, int64(20*n)
	k := s.Tokens
	for i := range n {
		ttft := int64(5e6 + rng.ExpFloat64()*50e6)
		_ = k.TTFT.RecordValue(ttft)
		_ = k.TTFTSent.RecordValue(ttft / 2)
		if i < 2 {
			continue // truncated: TTFT only
		}
		tpot := int64(8e6 + rng.IntN(4e6))
		_ = k.TPOT.RecordValue(tpot)
		_ = k.ITL.RecordValues(tpot, 19)
		_ = k.ChunkGap.RecordValues(tpot, 19)
		_ = k.E2E.RecordValue(ttft + 19*tpot)
		_ = k.E2ESent.RecordValue(ttft/2 + 19*tpot)
		_ = k.Out.RecordValue(20)
		_ = k.In.RecordValue(100)
		_ = k.PerRequestRate.RecordValue(20e12 / (ttft/2 + 19*tpot))
		k.OutSum += 20
		k.InSum += 100
		if ttft < 30e6 {
			k.Good++
			k.GoodTokens += 20
		}
	}
	k.Series, k.Sources[stats.FromSpread] = k.OutSum, int64(n-2)
	tot.Stream = s
	return tot
}

// Each stage of a token-stream run has its LLM block, from its own
// requests (its warmup's left out); hail merge adds the shards' stages'
// LLM blocks exactly: the merged block is the one a single run of all the
// shards' requests makes. The stage tables show TTFT p99, TPOT p99,
// tokens/s and goodput/s.
func TestStageLLMMergesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sums := []*stats.Totals{stats.NewTotals(), stats.NewTotals(), stats.NewTotals()}
	var shards []*result.Result
	for i := range 2 {
		slots := []*stats.Totals{tokenTotals(rng, 50+i), tokenTotals(rng, 90+i), tokenTotals(rng, 30+i)}
		for k, s := range slots {
			sums[k].Add(s)
		}
		r := stagedShard(t, i, slots)
		r.Hail.LLM.SetSLO(30*time.Millisecond, 0, 0)
		shards = append(shards, r)
	}
	for _, s := range shards[0].Hail.Stages {
		if s.LLM == nil {
			t.Fatalf("stage %d has no LLM block", s.Stage)
		}
	}
	if l := shards[0].Hail.Stages[0].LLM; l.Completed != 48 || l.Truncated != 2 || l.TTFT.Samples != 50 || l.ITL.Samples != 48*19 {
		t.Errorf("stage 1 of shard 1: %d completed, %d truncated, %d TTFT and %d ITL samples; want 48, 2, 50 and 912 (its warmup left out)",
			l.Completed, l.Truncated, l.TTFT.Samples, l.ITL.Samples)
	}
	m, err := Merge(shards, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range m.Hail.Stages {
		want := buildStageLLM(sums[k].Stream, s.Measured.Seconds())
		if s.LLM == nil || *s.LLM != *want {
			t.Errorf("stage %d merged:\n%+v\none run of the same requests:\n%+v", k+1, s.LLM, want)
		}
	}
	// The warmup's token streams have a block of their own, merged as
	// exactly: the stages' and the warmups' add up to the run's.
	if w := shards[0].Hail.Stages[0].Warmup; w == nil || w.LLM == nil || w.LLM.Completed != 28 || w.LLM.Truncated != 2 || w.LLM.TTFT.Samples != 30 {
		t.Errorf("stage 1's warmup of shard 1: %+v; want an LLM block of 28 completed, 2 truncated, 30 TTFT samples", w)
	} else if run := shards[0].Hail.LLM; run.Completed != 48+88+28 {
		t.Errorf("the run completed %d streams; its stages and warmup %d", run.Completed, 48+88+28)
	}
	if w, want := m.Hail.Stages[0].Warmup, buildStageLLM(sums[2].Stream, time.Second.Seconds()); w == nil || w.LLM == nil || *w.LLM != *want {
		t.Errorf("stage 1's warmup merged:\n%+v\none run of the same requests:\n%+v", w, want)
	}
	var b strings.Builder
	if err := WriteText(&b, m, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	l := m.Hail.Stages[1].LLM
	for _, want := range []string{"TTFT p99", "TPOT p99", "tokens/s", "goodput/s", fmt.Sprintf("%.1f", l.OutputThroughput), fmt.Sprintf("%.2f", l.Goodput.RequestsPerSec)} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text report's stage table lacks %q:\n%s", want, b.String())
		}
	}
	var md, html strings.Builder
	writeStagesMarkdown(&md, m)
	writeStagesHTML(&html, m)
	for name, out := range map[string]string{"Markdown": md.String(), "HTML": html.String()} {
		if !strings.Contains(out, "TTFT p99") || !strings.Contains(out, fmtDur(l.TTFT.P99.Seconds())) {
			t.Errorf("the %s stage table lacks stage 2's TTFT p99 %s:\n%s", name, fmtDur(l.TTFT.P99.Seconds()), out)
		}
	}
}
