package report

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// Build copies each histogram's counts once, however many parts of the
// report read it (its summary, its encoding, oha's bins): an LLM run's
// report allocates about two dozen copies' worth — the twenty-odd
// histograms it reads and the two it merges (all responses' latencies,
// all sent requests') — where reading them part by part took 59.
//
// Not under the race detector, whose sync.Pool drops some of the zlib
// writers the encoder keeps (a megabyte each when made anew).
func TestBuildCopiesEachHistogramOnce(t *testing.T) {
	if testtier.Race {
		t.Skip("the race detector's sync.Pool drops pooled writers")
	}
	in := Input{Totals: tokenTotals(rand.New(rand.NewPCG(3, 4)), 300), Elapsed: 10 * time.Second, SuccessSplit: true}
	if got := buildCopies(in); got > 26 {
		t.Fatalf("Build allocated %.1f histogram copies' worth, want at most 26 (one per histogram it reads or merges)", got)
	}
}

// An empty histogram is not copied: a token-stream run's report whose
// histograms are all empty (no response yet) allocates only the two it
// merges (all responses' latencies, all sent requests'), where it
// allocated 22 copies' worth.
func TestBuildCopiesNoEmptyHistogram(t *testing.T) {
	if testtier.Race {
		t.Skip("the race detector's sync.Pool drops pooled writers")
	}
	tot := stats.NewTotals()
	tot.Stream = stats.NewStreams(true)
	if got := buildCopies(Input{Totals: tot, Elapsed: time.Second, SuccessSplit: true}); got > 2.5 {
		t.Fatalf("Build allocated %.1f histogram copies' worth for empty histograms, want 2 (the two it merges)", got)
	}
}

// buildCopies is what Build(in) allocates, in copies of a histogram's
// counts: the least of three builds after a first, since a collection
// between two builds empties the encoder's pool of zlib writers, and a
// new one is a megabyte.
func buildCopies(in Input) float64 {
	Build(in) // first use: pools, caches
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Build(in)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return float64(least) / float64(8*len(stats.NewHist().Export().Counts))
}
