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
func Summarize(h *hdr.Histogram) Summary { return SummarizeFrom(h, nil) }

// SummarizeFrom is Summarize reading h's counts from s, a copy of them
// (h.Export()) that the caller shares with other readers of h; with s nil
// it takes its own.
func SummarizeFrom(h *hdr.Histogram, s *hdr.Snapshot) Summary {
	sum := Summary{Count: h.TotalCount()}
	if sum.Count == 0 {
		return sum
	}
	if !Standard(h) {
		sum.Min, sum.Max, sum.Mean, sum.StdDev = h.Min(), h.Max(), h.Mean(), h.StdDev()
		return sum
	}
	if s == nil {
		s = h.Export()
	}
	return summarize(s.Counts, sum.Count)
}

// Standard reports whether h has hail's geometry (NewHist's), the one
// the functions here that index counts directly (Bucket, SummarizeFrom)
// assume.
func Standard(h *hdr.Histogram) bool {
	return h.LowestTrackableValue() == HistLowest && h.HighestTrackableValue() == HistHighest && h.SignificantFigures() == HistDigits
}

// Bucket is the range of values [from, to] that counts index i of a
// histogram of hail's geometry holds: hdr's Distribution bar for i.
func Bucket(i int) (from, to int64) { return valueAt(i), valueAt(i) + rangeAt(i) - 1 }

// summarize is the summary of total values counted in counts (hail's
// geometry).
func summarize(counts []int64, total int64) Summary {
	s := Summary{Count: total}
	lo, hi := -1, 0
	n := float64(s.Count)
	for i, c := range counts {
		if c == 0 {
			continue
		}
		if lo < 0 {
			lo = i
		}
		hi = i
		// As hdr's Mean: the same terms summed in the same order.
		s.Mean += float64(c) * float64(medianAt(i)) / n
	}
	var dev2 float64
	for i, c := range counts[lo : hi+1] {
		if c != 0 {
			dev := float64(medianAt(lo+i)) - s.Mean
			dev2 += (dev * dev) * float64(c) / n
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
