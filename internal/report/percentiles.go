package report

import hdr "github.com/HdrHistogram/hdrhistogram-go"

// distQuantiles are the percentiles of a Dist and a TimeDist (and of
// vLLM's summaries), in the order quantiles returns them.
var distQuantiles = []float64{50, 90, 95, 99, 99.9}

// quantiles is h's value at each of the percentiles ps (100: its Max),
// from one pass over its counts: hdr's ValueAtQuantile walks them from the
// start for each percentile, Max bucket by bucket up to the highest.
// The values are ValueAtQuantile's, bit for bit (stats'
// TestSummarizeMatchesHdr).
func quantiles(h *hdr.Histogram, ps []float64) []int64 { return h.ValueAtPercentilesSlice(ps) }
