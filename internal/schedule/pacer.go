// Package schedule decides when requests are meant to be sent.
//
// The closed model sends the next request on a connection as soon as the
// previous one completes, so it has no schedule. The open model fixes every
// request's intended send time in advance with a Pacer; engines measure each
// latency from that intended time (coordinated-omission correction, as wrk2),
// so a stalled server cannot hide behind a generator that stopped sending.
package schedule

import (
	"math"
	"time"
)

// Pacer gives the intended send time of each request of an open-model run.
//
// Pace returns the intended send time of request number hits (counting from
// 0) as an offset from the start of the run, or stop=true when the schedule
// holds no such request. It must be a pure function of hits, non-decreasing
// in hits, and safe for concurrent use.
type Pacer interface {
	Pace(hits uint64) (at time.Duration, stop bool)
}

// Rate is a constant-rate Pacer: PerSecond requests every second, evenly
// spaced, the first at time 0.
type Rate struct {
	PerSecond float64
}

// Pace implements Pacer.
func (r Rate) Pace(hits uint64) (time.Duration, bool) {
	if r.PerSecond <= 0 {
		return 0, true
	}
	at := float64(hits) * 1e9 / r.PerSecond
	if at >= math.MaxInt64 {
		return 0, true
	}
	return time.Duration(at), false
}

// Burst sends Size requests at once every Every (oha's --burst-delay and
// --burst-rate), the first burst at time 0.
type Burst struct {
	Every time.Duration
	Size  uint64
}

// Pace implements Pacer.
func (b Burst) Pace(hits uint64) (time.Duration, bool) {
	if b.Size == 0 {
		return 0, true
	}
	n := hits / b.Size
	if b.Every > 0 && n > uint64(math.MaxInt64/int64(b.Every)) {
		return 0, true
	}
	return time.Duration(n) * b.Every, false
}
