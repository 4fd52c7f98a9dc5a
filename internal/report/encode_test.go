package report

import (
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// encode writes the bytes HdrHistogram's own encoder writes: empty
// histograms, one value, values over the whole range, counts of every
// LEB128 length, runs of zeros of one and many, the highest trackable
// value, and a histogram decoded from an encoding.
func TestEncodeAsHdr(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(h *hdr.Histogram){
		"empty":     func(*hdr.Histogram) {},
		"one":       func(h *hdr.Histogram) { h.RecordValue(1) },
		"lowest":    func(h *hdr.Histogram) { h.RecordValue(stats.HistLowest) },
		"highest":   func(h *hdr.Histogram) { h.RecordValue(stats.HistHighest) },
		"neighbors": func(h *hdr.Histogram) { h.RecordValue(1000); h.RecordValue(1002); h.RecordValue(1004) },
		"big counts": func(h *hdr.Histogram) {
			for i, n := range []int64{1, 1 << 7, 1 << 14, 1 << 21, 1 << 28, 1 << 35, 1 << 42, 1 << 49, 1 << 56, 1<<62 - 1} {
				h.RecordValues(int64(1e3*(i+1)), n)
			}
		},
		"latencies": func(h *hdr.Histogram) {
			for range 100_000 {
				h.RecordValue(int64(r.ExpFloat64() * 2e6))
			}
		},
		"wide": func(h *hdr.Histogram) {
			for range 5_000 {
				h.RecordValue(int64(r.Float64() * float64(stats.HistHighest)))
			}
		},
	}
	for name, fill := range cases {
		h := stats.NewHist()
		fill(h)
		check := func(name string, h *hdr.Histogram) {
			want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
			if err != nil {
				t.Fatal(err)
			}
			if got := encode(h); got != string(want) {
				t.Errorf("%s: encode\n%s\nHdrHistogram\n%s", name, got, want)
			}
		}
		check(name, h)
		d, err := DecodeHist(encode(h))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !d.Equals(h) {
			t.Errorf("%s: decoded back, not equal", name)
		}
		check(name+", decoded", d)
	}
}

// encode takes a fraction of HdrHistogram's encoder's allocations.
func TestEncodeAllocs(t *testing.T) {
	if testtier.Race {
		t.Skip("the race detector's sync.Pool drops a quarter of what it is given")
	}
	h := stats.NewHist()
	for i := range 1000 {
		h.RecordValue(int64(i * 997))
	}
	encode(h) // the pool's writer
	ours := testing.AllocsPerRun(20, func() { encode(h) })
	theirs := testing.AllocsPerRun(20, func() { h.Encode(hdr.V2CompressedEncodingCookieBase) })
	if ours > 10 || ours*10 > theirs {
		t.Errorf("encode: %v allocations a histogram, HdrHistogram's: %v", ours, theirs)
	}
}

func BenchmarkEncode(b *testing.B) {
	h := stats.NewHist()
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		h.RecordValue(int64(r.ExpFloat64() * 2e6))
	}
	b.Run("hail", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encode(h)
		}
	})
	b.Run("hdr", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.Encode(hdr.V2CompressedEncodingCookieBase)
		}
	})
}
