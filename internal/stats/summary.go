package stats

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Summary is what a report takes of a histogram besides its percentiles,
// equal to hdr's TotalCount, Min, Max, Mean and StdDev, bit for bit.
type Summary struct {
	Count    int64
	Min, Max int64
	Mean     float64
	StdDev   float64
}

// Summarize reads h's summary from one copy of its counts: hdr walks
// them bucket by bucket from 0 up to the highest recorded for each of
// Min, Max, Mean and StdDev (twice for StdDev). A histogram of another
// geometry than hail's is read by hdr's own methods. (Its percentiles,
// all at once: h.ValueAtPercentilesSlice, one pass, whose 100th is Max.)
func Summarize(h *hdr.Histogram) Summary {
	s := Summary{Count: h.TotalCount()}
	if s.Count == 0 {
		return s
	}
	if h.LowestTrackableValue() != HistLowest || h.HighestTrackableValue() != HistHighest || h.SignificantFigures() != HistDigits {
		s.Min, s.Max, s.Mean, s.StdDev = h.Min(), h.Max(), h.Mean(), h.StdDev()
		return s
	}
	counts := h.Export().Counts
	lo, hi := -1, 0
	total := float64(s.Count)
	for i, c := range counts {
		if c == 0 {
			continue
		}
		if lo < 0 {
			lo = i
		}
		hi = i
		// As hdr's Mean: the same terms summed in the same order.
		s.Mean += float64(c) * float64(medianAt(i)) / total
	}
	var dev2 float64
	for i, c := range counts[lo : hi+1] {
		if c != 0 {
			dev := float64(medianAt(lo+i)) - s.Mean
			dev2 += (dev * dev) * float64(c) / total
		}
	}
	s.StdDev = math.Sqrt(dev2)
	s.Min, s.Max = valueAt(lo), valueAt(hi)+rangeAt(hi)-1
	return s
}

// rangeAt is how many values map to counts index i.
func rangeAt(i int) int64 { return 1 << max(i>>subBucketHalfCountMagnitude-1, 0) }

// medianAt is the middle of the values that map to counts index i, as
// hdr's medianEquivalentValue.
func medianAt(i int) int64 { return valueAt(i) + rangeAt(i)>>1 }
