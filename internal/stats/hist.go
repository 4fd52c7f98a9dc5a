package stats

import (
	"math/bits"
	"sync"
	"sync/atomic"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry shared by every histogram hail records: values are
// nanoseconds from 1 ns to 1 hour with 3 significant digits, so a 25 µs
// loopback latency is resolved to 1 ns and a 2 s stall to 2 ms.
const (
	// HistLowest is the lowest discernible value (ns).
	HistLowest = 1
	// HistHighest is the highest trackable value (ns); larger values are clamped.
	HistHighest = int64(3_600_000_000_000)
	// HistDigits is the number of significant decimal digits kept.
	HistDigits = 3

	subBucketHalfCountMagnitude = 10 // ceil(log2(2*10^3)) - 1
	subBucketHalfCount          = 1 << subBucketHalfCountMagnitude
	subBucketMask               = int64(2*subBucketHalfCount - 1)
)

// histCountsLen is the length of the counts array of an HdrHistogram with
// hail's geometry; atomicHist uses the same indexing so its counts import
// directly with hdr.Import. It is found once, when first needed: finding
// it builds a histogram (half a megabyte), which every hail process paid
// at start-up when it was a package variable, a --version or a flag
// error included.
var histCountsLen = sync.OnceValue(func() int { return len(NewHist().Export().Counts) })

// NewHist returns an empty HdrHistogram with hail's geometry.
func NewHist() *hdr.Histogram { return hdr.New(HistLowest, HistHighest, HistDigits) }

// resetHist empties h. An empty one is left alone: Reset clears every
// count (a quarter of a megabyte in hail's geometry), and the collector
// empties a run's twenty-odd histograms every second, most of them empty
// (a stream's are drained at the run's end only): clearing them cost a
// streaming run more CPU each second than reading its events.
func resetHist(h *hdr.Histogram) {
	if h.TotalCount() != 0 {
		h.Reset()
	}
}

// atomicHist is a histogram that many goroutines record into concurrently
// without locks: one atomic add per value into an array indexed exactly as
// HdrHistogram indexes its counts. A reader drains it with atomic swaps, so
// every recorded value lands in exactly one drain.
//
// touched has a bit per block of subBucketHalfCount counts (one
// HdrHistogram bucket; the 33 of hail's geometry fit in a word), set once a
// value lands in the block: a drain scans only the blocks whose bit it
// takes, not every count (34k of them, each an atomic load, for each
// histogram of each recorder every second). A writer adds its count
// before it sets the bit, and a drain takes the bits before it scans, so a
// count a drain misses is in a block whose bit the next one takes.
type atomicHist struct {
	counts  []int64
	touched uint64 // atomic
}

func newAtomicHist() atomicHist { return atomicHist{counts: make([]int64, histCountsLen())} }

// countsIndex mirrors hdrhistogram-go's countsIndexFor for unitMagnitude 0.
func countsIndex(v int64) int {
	bucket := int32(64-bits.LeadingZeros64(uint64(v|subBucketMask))) - (subBucketHalfCountMagnitude + 1)
	sub := int32(v >> uint(bucket))
	return int((bucket+1)<<subBucketHalfCountMagnitude + sub - subBucketHalfCount)
}

// record adds one value (ns), clamped into the trackable range.
func (h *atomicHist) record(v int64) {
	if v < HistLowest {
		v = HistLowest
	} else if v > HistHighest {
		v = HistHighest
	}
	h.add(countsIndex(v), 1)
}

// add adds n to the count at index i and marks its block touched. The
// bit is read first, so once set it costs a read of a word that stays in
// every core's cache until the next drain.
func (h *atomicHist) add(i int, n int64) {
	atomic.AddInt64(&h.counts[i], n)
	if bit := uint64(1) << (i >> subBucketHalfCountMagnitude); atomic.LoadUint64(&h.touched)&bit == 0 {
		atomic.OrUint64(&h.touched, bit)
	}
}

// valueAt is the lowest value that maps to counts index i (the inverse of countsIndex).
func valueAt(i int) int64 {
	bucket := int32(i>>subBucketHalfCountMagnitude) - 1
	sub := int32(i&(subBucketHalfCount-1)) + subBucketHalfCount
	if bucket < 0 {
		sub -= subBucketHalfCount
		bucket = 0
	}
	return int64(sub) << uint(bucket)
}

// bin is count values in the HdrHistogram bucket whose lowest value is
// value.
type bin struct{ value, count int64 }

// drainInto moves every count into dst (which must have hail's geometry),
// zeroes them here, and returns how many values moved. With a log, it
// also logs each count it moved (Totals.logOf).
func (h *atomicHist) drainInto(dst *hdr.Histogram, log *binLog) int64 {
	var n int64
	for blocks := atomic.SwapUint64(&h.touched, 0); blocks != 0; blocks &= blocks - 1 {
		lo := bits.TrailingZeros64(blocks) << subBucketHalfCountMagnitude
		for i := lo; i < min(lo+subBucketHalfCount, len(h.counts)); i++ {
			if atomic.LoadInt64(&h.counts[i]) == 0 {
				continue
			}
			c := atomic.SwapInt64(&h.counts[i], 0)
			v := valueAt(i)
			_ = dst.RecordValues(v, c)
			if log != nil {
				log.add(bin{v, c})
			}
			n += c
		}
	}
	return n
}
