package schedule

import "time"

// TimeHeap is a min-heap of values by time: the Alarm's pending wake-ups,
// and the uring engine's connections pausing for think time. It is written
// out rather than built on container/heap, whose interface boxes every
// pushed value: an allocation per request on the paths that use it. The
// zero TimeHeap is empty and ready.
type TimeHeap[T any] struct {
	q []timed[T]
}

type timed[T any] struct {
	at time.Duration
	v  T
}

// Len is how many values the heap holds.
func (h *TimeHeap[T]) Len() int { return len(h.q) }

// Next is the earliest time in the heap; the heap must not be empty.
func (h *TimeHeap[T]) Next() time.Duration { return h.q[0].at }

// Push adds v at time at.
func (h *TimeHeap[T]) Push(at time.Duration, v T) {
	q := append(h.q, timed[T]{at, v})
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if q[parent].at <= q[i].at {
			break
		}
		q[parent], q[i] = q[i], q[parent]
		i = parent
	}
	h.q = q
}

// Pop removes the earliest value and returns it with its time; the heap
// must not be empty. The freed slot is cleared, so the heap keeps no
// reference to a popped value.
func (h *TimeHeap[T]) Pop() (time.Duration, T) {
	q := h.q
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = timed[T]{}
	q = q[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(q) && q[l].at < q[m].at {
			m = l
		}
		if r < len(q) && q[r].at < q[m].at {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	h.q = q
	return top.at, top.v
}
