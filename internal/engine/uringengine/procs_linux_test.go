package uringengine

import (
	"runtime"
	"testing"
)

// Two runs side by side: the first to end leaves the second its Ps, and
// the last puts back GOMAXPROCS as it was. Not parallel: it reads and sets
// GOMAXPROCS.
func TestHoldProcs(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	releaseA := holdProcs(3)
	if got := runtime.GOMAXPROCS(0); got != max(base, 4) {
		t.Fatalf("one run of 3 workers: GOMAXPROCS %d, want %d", got, max(base, 4))
	}
	releaseB := holdProcs(2)
	if got := runtime.GOMAXPROCS(0); got != max(base, 6) {
		t.Fatalf("runs of 3 and 2 workers: GOMAXPROCS %d, want %d", got, max(base, 6))
	}
	releaseA()
	if got := runtime.GOMAXPROCS(0); got != max(base, 3) {
		t.Fatalf("the run of 2 left: GOMAXPROCS %d, want %d", got, max(base, 3))
	}
	releaseB()
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("no run left: GOMAXPROCS %d, want %d as before", got, base)
	}
}
