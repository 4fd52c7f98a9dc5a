package tui

import (
	"math/rand/v2"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/hail-loadgen/hail/internal/stats"
)

// bucketTop matches HdrHistogram's own bucket bounds for hail's geometry.
func TestBucketTop(t *testing.T) {
	h := stats.NewHist()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		h.RecordValue(1 + rng.Int64N(int64(1)<<uint(rng.IntN(40))))
	}
	for i, b := range h.Distribution() {
		if got := bucketTop(i); got != b.To {
			t.Fatalf("bucketTop(%d) = %d, want %d", i, got, b.To)
		}
		if got := bucketLow(i); got != b.From {
			t.Fatalf("bucketLow(%d) = %d, want %d", i, got, b.From)
		}
	}
}

// summarize puts every recorded value in a bin or above p99.
func TestSummarize(t *testing.T) {
	h := stats.NewHist()
	for v := int64(1000); v < 2000; v++ {
		h.RecordValue(v * 1000)
	}
	h.RecordValue(50e6)
	bad := stats.NewHist()
	bad.RecordValue(1_500_000)
	s, p50, p99 := summarize(h.Export().Counts, bad.Export().Counts)
	h.RecordValue(1_500_000)
	if p50 != h.ValueAtQuantile(50) || p99 != h.ValueAtQuantile(99) {
		t.Errorf("p50, p99 = %d, %d; want %d, %d", p50, p99, h.ValueAtQuantile(50), h.ValueAtQuantile(99))
	}
	if s.Min != h.Min() || s.Max != h.Max() {
		t.Errorf("min, max = %d, %d; want %d, %d", s.Min, s.Max, h.Min(), h.Max())
	}
	var n int64
	for _, c := range s.Fine {
		n += c
	}
	if n+s.Over != s.Total || s.Total != 1002 {
		t.Errorf("binned %d + over %d, total %d", n, s.Over, s.Total)
	}
	if s.Over < 1 || s.Over > 15 {
		t.Errorf("over p99: %d values", s.Over)
	}
	if s.Fine[0] == 0 || s.Fine[histFine-1] == 0 {
		t.Errorf("the bins do not span min..p99: first %d, last %d", s.Fine[0], s.Fine[histFine-1])
	}
}

// width agrees with ansi.StringWidth on what the view draws.
func TestWidth(t *testing.T) {
	for _, s := range []string{"", "abc", "\x1b[1;31mred\x1b[0m", "╭─ Latency (µs) ─╮", "⣀⣀⠤⠔ ▁▂█ ░", "…·→≥⚠", "日本語", "e\u0301", "\x1b[38;5;12m█\x1b[0m"} {
		if got, want := width(s), ansi.StringWidth(s); got != want {
			t.Errorf("width(%q) = %d, want %d", s, got, want)
		}
	}
}
