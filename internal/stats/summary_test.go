package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// summaryMatches checks Summarize (and SummarizeFrom a shared copy)
// against hdr's methods bit for bit, Bucket against hdr's Distribution,
// and the percentiles of one pass against hdr's ValueAtQuantile and Max.
func summaryMatches(t *testing.T, h *hdr.Histogram) {
	t.Helper()
	s := Summarize(h)
	if s.Count != h.TotalCount() || s.Min != h.Min() || s.Max != h.Max() ||
		math.Float64bits(s.Mean) != math.Float64bits(h.Mean()) || math.Float64bits(s.StdDev) != math.Float64bits(h.StdDev()) {
		t.Fatalf("Summarize %+v, hdr: count %d min %d max %d mean %v stddev %v", s, h.TotalCount(), h.Min(), h.Max(), h.Mean(), h.StdDev())
	}
	if f := SummarizeFrom(h, h.Export()); f != s {
		t.Fatalf("SummarizeFrom a copy %+v, Summarize %+v", f, s)
	}
	if Standard(h) {
		for i, b := range h.Distribution() {
			if from, to := Bucket(i); from != b.From || to != b.To {
				t.Fatalf("Bucket(%d) = [%d, %d], hdr's bar [%d, %d]", i, from, to, b.From, b.To)
			}
		}
	}
	ps := []float64{10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100}
	for i, v := range h.ValueAtPercentilesSlice(ps) {
		want := h.ValueAtQuantile(ps[i])
		if ps[i] == 100 {
			want = h.Max()
		}
		if v != want {
			t.Fatalf("p%v: one pass %d, hdr %d", ps[i], v, want)
		}
	}
}

// Summarize and the one-pass percentiles equal hdr's own, bit for bit:
// empty, one value, the range's ends, clustered and spread values, and a
// histogram of another geometry.
func TestSummarizeMatchesHdr(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	h := NewHist()
	summaryMatches(t, h)
	for _, v := range []int64{1, 2047, 2048, 50_000_000, HistHighest} {
		h.Reset()
		_ = h.RecordValue(v)
		summaryMatches(t, h)
	}
	for range 300 {
		h.Reset()
		base, spread := rng.Int64N(HistHighest/2)>>rng.IntN(40), 1+rng.Int64N(1<<rng.IntN(40))
		for range 1 + rng.IntN(5000) {
			_ = h.RecordValues(min(base+rng.Int64N(spread), HistHighest), 1+rng.Int64N(3))
		}
		summaryMatches(t, h)
	}
	other := hdr.New(1, 60_000_000, 2)
	for range 1000 {
		_ = other.RecordValue(1 + rng.Int64N(60_000_000))
	}
	summaryMatches(t, other)
}

// FuzzSummarize: any values, any counts.
func FuzzSummarize(f *testing.F) {
	f.Add(int64(1), int64(50_000_000), int64(3), uint8(7))
	f.Fuzz(func(t *testing.T, a, b, n int64, k uint8) {
		h := NewHist()
		for i := range int64(k) {
			v := min(max(a+i*b, 0), HistHighest)
			_ = h.RecordValues(v, 1+min(max(n, 0), 1<<20))
		}
		summaryMatches(t, h)
	})
}

// BenchmarkSummary: a histogram of a run's ~50 ms values read by hdr's
// Min, Max, Mean, StdDev and five ValueAtQuantile, against Summarize and
// one ValueAtPercentilesSlice.
func BenchmarkSummary(b *testing.B) {
	h := NewHist()
	for _, v := range benchValues() {
		_ = h.RecordValue(v)
	}
	ps := []float64{50, 90, 95, 99, 99.9}
	b.Run("hdr", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _, _ = h.Min(), h.Max(), h.Mean(), h.StdDev()
			for _, p := range ps {
				_ = h.ValueAtQuantile(p)
			}
		}
	})
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Summarize(h)
			_ = h.ValueAtPercentilesSlice(ps)
		}
	})
}
