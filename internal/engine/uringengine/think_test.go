//go:build linux

package uringengine

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// The think heap hands connections back in the order their pauses end,
// whatever order they began in.
func TestThinkHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h thinkHeap
	var want []time.Duration
	for i := range 500 {
		d := time.Duration(rng.IntN(150_000)) * time.Microsecond
		h.push(thinker{until: d, idx: int32(i)})
		want = append(want, d)
		if i%7 == 0 { // interleave pops with pushes, as the event loop does
			sort.Slice(want, func(a, b int) bool { return want[a] < want[b] })
			if got := h.pop().until; got != want[0] {
				t.Fatalf("popped %v, want the earliest %v", got, want[0])
			}
			want = want[1:]
		}
	}
	sort.Slice(want, func(a, b int) bool { return want[a] < want[b] })
	for _, w := range want {
		if got := h.pop().until; got != w {
			t.Fatalf("popped %v, want %v", got, w)
		}
	}
	if len(h) != 0 {
		t.Fatalf("%d left", len(h))
	}
}
