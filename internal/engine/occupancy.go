package engine

import (
	"sync/atomic"
	"time"
)

// Occupancy tracks, across the request slots of a goroutine engine (the
// net engine's connections, the HTTP/2 and HTTP/3 engines' streams), how
// many hold a request, and since when every one has without a break: a
// slot freed and at once refilled with a request already due (a backlog)
// does not end that span; a slot left waiting for a request not yet due
// does. In the open model a request that falls due in such a span waits
// for the target's backpressure; one that falls due while a slot is idle,
// and still leaves late, is late because of hail (its goroutines ran late,
// or it was stopped), even if the slot that finally takes it was busy for
// part of the time. A few atomic operations per request, open model only.
type Occupancy struct {
	slots int64
	busy  atomic.Int64
	since atomic.Int64 // when every slot became busy, ns since the job's start, + 1; 0 while one is idle
}

// NewOccupancy returns the occupancy of slots request slots.
func NewOccupancy(slots int) *Occupancy { return &Occupancy{slots: int64(slots)} }

// occupy notes that a slot took a request at now.
func (o *Occupancy) occupy(now time.Duration) {
	if o.busy.Add(1) == o.slots && o.since.Load() == 0 {
		o.since.Store(int64(now) + 1)
	}
}

// vacate notes that a slot's request ended and returns since when every
// slot has been busy, if they have (ok false: one was idle).
func (o *Occupancy) vacate() (since time.Duration, ok bool) {
	s := o.since.Load()
	o.busy.Add(-1)
	return time.Duration(s - 1), s != 0
}

// idle notes that a free slot waits for a request that is not due yet:
// the span in which every slot was busy is over.
func (o *Occupancy) idle() { o.since.Store(0) }
