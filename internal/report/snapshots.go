package report

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
)

// snapshots shares one copy of each histogram's counts among the parts of
// a report that read them — its summary, its encoding and oha's bins: hdr
// hands its counts out only as a fresh copy (Export, a quarter of a
// megabyte in hail's geometry), and an LLM run's report reads some twenty
// histograms, several of them three times; each copy was fresh memory,
// page-faulted in, and garbage that brought the next collection closer.
// Build keeps one for the whole report. A nil snapshots copies on every
// call (and keeps nothing).
type snapshots map[*hdr.Histogram]*hdr.Snapshot

// of returns h's counts, copied on first use.
func (m snapshots) of(h *hdr.Histogram) *hdr.Snapshot {
	if s, ok := m[h]; ok {
		return s
	}
	var s *hdr.Snapshot
	if h.TotalCount() == 0 {
		// Every count is zero: one zero stands for them all (the readers
		// skip zeros, and the encoding writes counts up to the last nonzero
		// one, at least one), and the quarter megabyte is not copied.
		// An LLM run's report has a handful of these (no failures, no
		// send delay in the closed model).
		s = &hdr.Snapshot{LowestTrackableValue: h.LowestTrackableValue(), HighestTrackableValue: h.HighestTrackableValue(),
			SignificantFigures: h.SignificantFigures(), Counts: make([]int64, 1)}
	} else {
		s = h.Export()
	}
	if m != nil {
		m[h] = s
	}
	return s
}

// summary is stats.Summarize of h from its shared copy (one is taken only
// for hail's geometry, the one Summarize reads from counts).
func (m snapshots) summary(h *hdr.Histogram) stats.Summary {
	if h.TotalCount() == 0 || !stats.Standard(h) {
		return stats.Summarize(h)
	}
	return stats.SummarizeFrom(h, m.of(h))
}
