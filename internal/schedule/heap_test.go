package schedule

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// The heap hands values back in the order of their times, whatever order
// they were pushed in (the uring engine's think pauses, the Alarm's
// wake-ups), and each value with its own time.
func TestTimeHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h TimeHeap[int32]
	var want []time.Duration
	at := map[int32]time.Duration{}
	pop := func() time.Duration {
		d, v := h.Pop()
		if at[v] != d {
			t.Fatalf("value %d came back with %v, pushed with %v", v, d, at[v])
		}
		return d
	}
	for i := range 500 {
		d := time.Duration(rng.IntN(150_000)) * time.Microsecond
		h.Push(d, int32(i))
		at[int32(i)] = d
		want = append(want, d)
		if i%7 == 0 { // interleave pops with pushes, as the event loop does
			sort.Slice(want, func(a, b int) bool { return want[a] < want[b] })
			if got := pop(); got != want[0] {
				t.Fatalf("popped %v, want the earliest %v", got, want[0])
			}
			want = want[1:]
		}
	}
	sort.Slice(want, func(a, b int) bool { return want[a] < want[b] })
	for _, w := range want {
		if got := pop(); got != w {
			t.Fatalf("popped %v, want %v", got, w)
		}
	}
	if h.Len() != 0 {
		t.Fatalf("%d left", h.Len())
	}
}

// Push and Pop allocate nothing once the heap has grown.
func TestTimeHeapNoAllocations(t *testing.T) {
	var h TimeHeap[chan<- struct{}]
	ch := make(chan struct{}, 1)
	for i := range 64 {
		h.Push(time.Duration(i), ch)
	}
	for h.Len() > 0 {
		h.Pop()
	}
	n := testing.AllocsPerRun(100, func() {
		for i := range 64 {
			h.Push(time.Duration(64-i), ch)
		}
		for h.Len() > 0 {
			h.Pop()
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per 64 pushes and pops", n)
	}
}
