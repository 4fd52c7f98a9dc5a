package report

// The Result's stream sections: hail.stream, what every streaming response
// (server-sent events) measured, and hail.llm, what the token streams of
// hail llm measured — both built from the run's totals, so that a merged
// result rebuilds them exactly from its summed histograms.

import (
	"fmt"
	"math"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// dist summarises h, whose values are divided by scale, reading its
// counts from m.
func (m snapshots) dist(h *hdr.Histogram, scale float64) result.Dist {
	if h.TotalCount() == 0 {
		return result.Dist{}
	}
	s, q := m.summary(h), quantiles(h, distQuantiles)
	f := func(v int64) float64 { return float64(v) / scale }
	return result.Dist{Samples: s.Count, Mean: s.Mean / scale, Stddev: s.StdDev / scale, Min: f(s.Min),
		P50: f(q[0]), P90: f(q[1]), P95: f(q[2]), P99: f(q[3]), P999: f(q[4]), Max: f(s.Max)}
}

// timeDist summarises h, a histogram of ns: the mean and deviation
// rounded to the nanosecond, as every time in a Result is.
// It reads h's counts from m.
func (m snapshots) timeDist(h *hdr.Histogram) result.TimeDist {
	if h.TotalCount() == 0 {
		return result.TimeDist{}
	}
	s, q := m.summary(h), quantiles(h, distQuantiles)
	return result.TimeDist{Samples: s.Count, Mean: time.Duration(math.Round(s.Mean)), Stddev: time.Duration(math.Round(s.StdDev)),
		Min: time.Duration(s.Min), P50: time.Duration(q[0]), P90: time.Duration(q[1]), P95: time.Duration(q[2]), P99: time.Duration(q[3]),
		P999: time.Duration(q[4]), Max: time.Duration(s.Max)}
}

// secDist is d in seconds, for the renderers.
func secDist(d result.TimeDist) result.Dist {
	return result.Dist{Samples: d.Samples, Mean: d.Mean.Seconds(), Stddev: d.Stddev.Seconds(), Min: d.Min.Seconds(), P50: d.P50.Seconds(),
		P90: d.P90.Seconds(), P95: d.P95.Seconds(), P99: d.P99.Seconds(), P999: d.P999.Seconds(), Max: d.Max.Seconds()}
}

// buildStream fills r's stream sections from the run's totals.
func buildStream(r *result.Result, in Input, m snapshots) {
	s := in.Totals.Stream
	if s == nil {
		return
	}
	secs := in.Elapsed.Seconds()
	st := &result.Stream{Streams: s.Streams, Completed: s.Completed, Truncated: s.Truncated,
		Failed: max(s.Streams-s.Completed-s.Truncated, 0), Events: s.Events,
		FirstEvent: m.timeDist(s.FirstEvent), Gap: m.timeDist(s.Gap), LongestStall: m.timeDist(s.Stall), ReadLag: m.timeDist(s.ReadLag),
		Histograms: result.StreamHistograms{FirstEvent: m.encode(s.FirstEvent), Gap: m.encode(s.Gap), LongestStall: m.encode(s.Stall),
			ReadLag: m.encode(s.ReadLag)}}
	if secs > 0 {
		st.EventsPerSec = float64(s.Events) / secs
	}
	r.Hail.Stream = st
	if s.Tokens != nil {
		r.Hail.LLM = buildLLM(s, in, m)
	}
}

// streamTotals rebuilds a result's stream totals from its sections (nil
// when it has none).
func streamTotals(r *result.Result) (*stats.Streams, error) {
	st := r.Hail.Stream
	if st == nil {
		return nil, nil
	}
	s := stats.NewStreams(r.Hail.LLM != nil)
	s.Streams, s.Completed, s.Truncated, s.Events = st.Streams, st.Completed, st.Truncated, st.Events
	h := st.Histograms
	enc := []string{h.FirstEvent, h.Gap, h.LongestStall, h.ReadLag}
	if l := r.Hail.LLM; l != nil {
		enc = append(enc, llmTotals(s.Tokens, l)...)
	}
	for i, hist := range s.Hists() {
		d, err := DecodeHist(enc[i])
		if err != nil {
			return nil, fmt.Errorf("bad stream histogram in result: %v", err)
		}
		hist.Merge(d)
	}
	return s, nil
}

// llmTotals fills t's counts from l and returns l's encoded histograms,
// in the order of the token part of stats.Streams.Hists.
func llmTotals(t *stats.Tokens, l *result.LLM) []string {
	lh := l.Histograms
	t.OutSum, t.InSum, t.OtherLength = l.TotalOutputTokens, l.TotalInputTokens, l.OtherLength
	t.Good, t.GoodTokens = l.Goodput.Requests, l.Goodput.Tokens
	t.Series = l.TotalOutputTokens
	for i, name := range sourceNames {
		t.Sources[i] = l.TokenSource[name]
	}
	return []string{lh.TTFT, lh.TTFTFromSend, lh.TPOT, lh.ITL, lh.ChunkGap, lh.E2E, lh.E2EFromSend, lh.OutputTokens,
		lh.InputTokens, lh.RequestRate}
}

// llmStreams rebuilds the stream totals of a step's hail.llm-like entry
// (its token part; a step reports no event counts of its own).
func llmStreams(l *result.LLM) (*stats.Streams, error) {
	s := stats.NewStreams(true)
	s.Completed, s.Truncated = l.Completed, l.Truncated
	s.Streams = l.Completed + l.Truncated
	enc := llmTotals(s.Tokens, l)
	hs := s.Hists()
	hs = hs[len(hs)-len(enc):]
	for i, hist := range hs {
		d, err := DecodeHist(enc[i])
		if err != nil {
			return nil, fmt.Errorf("bad llm histogram in result: %v", err)
		}
		hist.Merge(d)
	}
	return s, nil
}

// writeStreamText writes the stream section of the text report.
func writeStreamText(b *strings.Builder, r *result.Result, c colorer) {
	s := r.Hail.Stream
	if s == nil {
		return
	}
	fmt.Fprintln(b, c.heading("Streams (server-sent events):"))
	fmt.Fprintf(b, "  %d streams: %d completed, %d truncated by the end of the run, %d failed; %d events (%.1f/s)\n",
		s.Streams, s.Completed, s.Truncated, s.Failed, s.Events, s.EventsPerSec)
	fmt.Fprintf(b, "  %-22s %10s %10s %10s %10s %10s %10s\n", "", "p50", "p90", "p99", "p99.9", "max", "samples")
	row := func(name string, d result.Dist) {
		if d.Samples == 0 {
			return
		}
		fmt.Fprintf(b, "  %-22s %10s %10s %10s %10s %10s %10d\n", name, fmtDur(d.P50), fmtDur(d.P90), fmtDur(d.P99), fmtDur(d.P999), fmtDur(d.Max), d.Samples)
	}
	row("time to first event", secDist(s.FirstEvent))
	row("inter-event gap", secDist(s.Gap))
	row("longest stall", secDist(s.LongestStall))
	row("hail's read lag", secDist(s.ReadLag))
	if s.ReadLag.Samples == 0 && s.Events > 0 {
		fmt.Fprintln(b, "  hail's read lag: not measured (no kernel receive times on this engine and transport)")
	}
	fmt.Fprintln(b)
}
