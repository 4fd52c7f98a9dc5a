// The token streams' live numbers (hail llm, and any run that reads
// tokens): what the sampler copies of them each collector tick, and the
// panels that show them — TTFT, ITL, and output tokens/s with the streams
// in flight, truncated and goodput.

package tui

import (
	"fmt"

	"github.com/hail-loadgen/hail/internal/stats"
)

// LLM is the run's token streams so far; Data.LLM is nil until the run
// has read a token stream.
type LLM struct {
	// TTFT (from the intended send) and ITL (per token) over the run so
	// far.
	TTFT, ITL Hist
	// TTFTP50, TTFTP99 (from the intended send), TTFTSentP50,
	// TTFTSentP99 (from the actual send), ITLP50, ITLP99 and TPOTP99 are
	// over the run so far, ns.
	TTFTP50, TTFTP99, TTFTSentP50, TTFTSentP99, ITLP50, ITLP99, TPOTP99 int64
	// Seconds are each tick's TTFT and ITL percentiles, keyed by the
	// second's index in Data.Series.
	Seconds map[int]LLMSecond
	// InFlight are the streams begun and not ended at the last tick;
	// Completed, Truncated and Failed those ended so far.
	InFlight, Completed, Truncated, Failed int64
	// OutTokens and InTokens are the completed requests'; Good and
	// GoodTokens those that met every objective (--slo) and their output
	// tokens.
	OutTokens, InTokens, Good, GoodTokens int64
}

// LLMSecond is one second's TTFT and ITL percentiles (0 when none ended
// in it), ns, and the requests that met every objective in it.
type LLMSecond struct {
	TTFTP50, TTFTP99, ITLP50, ITLP99 int64
	Good                             int64
}

// TickSource is a Source that also gives the last tick's totals
// (stats.Collector does): the view's per-second TTFT and ITL.
type TickSource interface {
	LastTick(f func(t *stats.Totals))
}

// liveStreams is a Source that drains its stream histograms every tick
// when asked (stats.Collector.LiveStreams).
type liveStreams interface{ LiveStreams() }

// llmCopy is what the sampler copies of the token streams under the
// collector's lock.
type llmCopy struct {
	on                     bool
	ttft, ttftSent, itl    []int64
	tpot                   []int64
	inFlight, completed    int64
	truncated, failed      int64
	out, in, good, goodTok int64
}

// copyLLM copies t's token streams into c (c.on false without them).
func (c *llmCopy) copyLLM(t *stats.Totals) {
	s := t.Stream
	if c.on = s != nil && s.Tokens != nil; !c.on {
		return
	}
	k := s.Tokens
	c.ttft, c.ttftSent, c.itl, c.tpot = k.TTFT.Export().Counts, k.TTFTSent.Export().Counts, k.ITL.Export().Counts, k.TPOT.Export().Counts
	c.inFlight, c.completed, c.truncated, c.failed = s.InFlight(), s.Completed, s.Truncated, s.Failed
	c.out, c.in, c.good, c.goodTok = k.OutSum, k.InSum, k.Good, k.GoodTokens
}

// fill sets d.LLM from c and the last tick's second (index).
func (c *llmCopy) fill(d *Data, index int, sec LLMSecond, ticked bool) {
	if !c.on {
		return
	}
	if d.LLM == nil {
		d.LLM = &LLM{Seconds: map[int]LLMSecond{}}
	}
	l := d.LLM
	none := make([]int64, len(c.ttft))
	l.TTFT, l.TTFTP50, l.TTFTP99 = summarize(c.ttft, none)
	_, l.TTFTSentP50, l.TTFTSentP99 = summarize(c.ttftSent, none)
	l.ITL, l.ITLP50, l.ITLP99 = summarize(c.itl, none)
	_, _, l.TPOTP99 = summarize(c.tpot, none)
	l.InFlight, l.Completed, l.Truncated, l.Failed = c.inFlight, c.completed, c.truncated, c.failed
	l.OutTokens, l.InTokens, l.Good, l.GoodTokens = c.out, c.in, c.good, c.goodTok
	if ticked {
		l.Seconds[index] = sec
	}
}

// tickLLM reads the last tick's TTFT and ITL percentiles and goodput.
func tickLLM(t *stats.Totals) LLMSecond {
	s := t.Stream
	if s == nil || s.Tokens == nil {
		return LLMSecond{}
	}
	k := s.Tokens
	return LLMSecond{TTFTP50: k.TTFT.ValueAtQuantile(50), TTFTP99: k.TTFT.ValueAtQuantile(99),
		ITLP50: k.ITL.ValueAtQuantile(50), ITLP99: k.ITL.ValueAtQuantile(99), Good: k.Good}
}

// ttftPanel: the run's TTFT p50 and p99 (from the intended send) and p99
// from the actual send, and each second's p50 and p99 over time.
func (m *Model) ttftPanel(w, h int) []string {
	l := m.data.LLM
	return m.pctPanel(w, h, l.TTFTP99, []stat{{"p50", l.TTFTP50}, {"p99", l.TTFTP99}, {"from send p99", l.TTFTSentP99}},
		func(s LLMSecond) (int64, int64) { return s.TTFTP50, s.TTFTP99 })
}

// itlPanel: the run's ITL p50 and p99 and TPOT p99, and each second's
// ITL p50 and p99 over time.
func (m *Model) itlPanel(w, h int) []string {
	l := m.data.LLM
	return m.pctPanel(w, h, l.ITLP99, []stat{{"p50", l.ITLP50}, {"p99", l.ITLP99}, {"TPOT p99", l.TPOTP99}},
		func(s LLMSecond) (int64, int64) { return s.ITLP50, s.ITLP99 })
}

// stat is a named time of a panel's head, ns.
type stat struct {
	name string
	ns   int64
}

// pctPanel is a panel of times: its head's stats, in the unit that shows
// p99 (ns) best, over a chart of each second's p50 and p99 (pick).
func (m *Model) pctPanel(w, h int, p99 int64, head []stat, pick func(LLMSecond) (int64, int64)) []string {
	u := m.llmUnit(p99)
	toks := make([]string, len(head))
	for i, st := range head {
		toks[i] = m.st.dim.Render(st.name+" ") + m.st.value.Render(fmtLat(st.ns, u))
	}
	lines := flow(toks, w)
	return append(lines, m.llmChart(w, h-len(lines), u, pick)...)
}

// llmUnit is the unit a token-stream panel whose p99 is ns shows its
// times in: the one u/U chose, else the one that shows ns with at most
// three digits before the point.
func (m *Model) llmUnit(ns int64) string {
	if u := units[m.unit]; u != "auto" {
		return u
	}
	return autoUnit(ns)
}

// llmChart charts a per-second p50 and p99 pair (ns) in unit u.
func (m *Model) llmChart(w, h int, u string, pick func(LLMSecond) (int64, int64)) []string {
	secs := m.data.LLM.Seconds
	d := unitDiv(u)
	lines := []line{
		{"p99", colP99, func(s stats.Second) float64 { _, p99 := pick(secs[s.Index]); return float64(p99) / d }},
		{"p50", colP50, func(s stats.Second) float64 { p50, _ := pick(secs[s.Index]); return float64(p50) / d }},
	}
	return m.chart(w, h, m.windowed(), lines, fmtNum)
}

// tokensPanel: output tokens/s now, on average and in all, the streams in
// flight, completed, truncated and failed, goodput against --slo, and
// tokens/s over time.
func (m *Model) tokensPanel(w, h int) []string {
	l, last := m.data.LLM, m.data.Last()
	v, dim := m.st.value.Render, m.st.dim.Render
	var span float64
	for _, s := range m.data.Series {
		span += s.Span.Seconds()
	}
	head := flow([]string{
		dim("now ") + m.st.rps.Bold(true).Render(fmtSI(rate(last.Tokens, last.Span.Seconds()))+"/s"),
		dim("avg ") + v(fmtSI(rate(l.OutTokens, span))+"/s"),
		dim("total ") + v(fmtInt(l.OutTokens)),
	}, w)
	trunc := v(fmtInt(l.Truncated))
	if l.Truncated > 0 {
		trunc = m.st.warn.Render(fmtInt(l.Truncated))
	}
	failed := m.st.good.Render("0")
	if l.Failed > 0 {
		failed = m.st.bad.Render(fmtInt(l.Failed))
	}
	head = append(head, flow([]string{
		dim("streams ") + v(fmtInt(l.InFlight)) + dim(" in flight"), dim("done ") + v(fmtInt(l.Completed)),
		dim("truncated ") + trunc, dim("failed ") + failed,
	}, w)...)
	if m.cfg.SLO != "" {
		share := 0.0
		if l.Completed > 0 {
			share = 100 * float64(l.Good) / float64(l.Completed)
		}
		st := m.st.good
		if share < 99 {
			st = m.st.bad
		}
		head = append(head, flow([]string{
			dim("goodput ") + v(fmtSI(rate(l.Good, span))+"/s"), st.Render(fmt.Sprintf("%.1f%%", share)) + dim(" met "+m.cfg.SLO),
		}, w)...)
	}
	lines := []line{{"tokens/s", colRPS, func(s stats.Second) float64 { return rate(s.Tokens, s.Span.Seconds()) }}}
	return append(head, m.chart(w, h-len(head), m.windowed(), lines, fmtSI)...)
}

// compactLLM are the compact layout's lines of the token streams.
func (m *Model) compactLLM() []string {
	l := m.data.LLM
	if l == nil {
		return nil
	}
	v, dim := m.st.value.Render, m.st.dim.Render
	last := m.data.Last()
	u := autoUnit(l.TTFTP99)
	iu := autoUnit(l.ITLP99)
	toks := []string{
		dim("TTFT p50 ") + v(fmtLat(l.TTFTP50, u)+u), dim("p99 ") + v(fmtLat(l.TTFTP99, u)+u),
		dim("ITL p99 ") + v(fmtLat(l.ITLP99, iu)+iu), dim("tok/s ") + v(fmtSI(rate(last.Tokens, last.Span.Seconds()))),
		dim("streams ") + v(fmtInt(l.InFlight)), dim("trunc ") + v(fmtInt(l.Truncated)),
	}
	if m.cfg.SLO != "" {
		toks = append(toks, dim("good ")+v(fmtInt(l.Good)))
	}
	return flow(toks, m.width)
}
