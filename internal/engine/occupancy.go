package engine

import (
	"sync/atomic"
	"time"
)

// Occupancy tracks, across the request slots of a goroutine engine (the
// net engine's connections, the HTTP/2 and HTTP/3 engines' streams), how
// many hold a request and since when all of them have. In the open model a
// request that falls due while every slot is busy waits for the target's
// backpressure; a request that falls due while a slot is free, and still
// leaves late, was late because of hail (its goroutines ran late, or it
// was stopped), even if the slot that finally takes it was busy for part
// of the time. Two atomic operations per request, open model only.
type Occupancy struct {
	slots int64
	busy  atomic.Int64
	since atomic.Int64 // when every slot became busy, ns since the job's start, + 1; 0 when one is free
}

// NewOccupancy returns the occupancy of slots request slots.
func NewOccupancy(slots int) *Occupancy { return &Occupancy{slots: int64(slots)} }

// occupy notes that a slot took a request at now.
func (o *Occupancy) occupy(now time.Duration) {
	if o.busy.Add(1) == o.slots {
		o.since.Store(int64(now) + 1)
	}
}

// vacate notes that a slot became free and returns since when every slot
// had been busy, if they all were until then (ok false: one was free).
func (o *Occupancy) vacate() (since time.Duration, ok bool) {
	s := o.since.Load()
	if o.busy.Add(-1) == o.slots-1 {
		o.since.Store(0)
	}
	return time.Duration(s - 1), s != 0
}
