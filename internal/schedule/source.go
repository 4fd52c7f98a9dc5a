package schedule

import (
	"math"
	"sync/atomic"
	"time"
)

// Source hands out the requests of a run to the engine's workers: each call
// to Claim reserves the next request, so a -n budget is met exactly however
// many workers claim at once. It is lock-free and safe for concurrent use.
type Source struct {
	pacer    Pacer         // nil: closed model
	limit    uint64        // 0: no request limit
	duration time.Duration // 0: no time limit
	hits     atomic.Uint64
	stopped  atomic.Bool
	conns    *Ramp // closed-model connection stages; nil: all connections always
	// connPart, if set, is this source's part of the connections the ramp
	// makes active (a run's origin's share: Split.Count).
	connPart func(total int) int
}

// NewSource returns a Source. pacer is nil for the closed model; limit is
// the total number of requests (0 for none) and duration the time after
// which no request starts (0 for none).
func NewSource(pacer Pacer, limit uint64, duration time.Duration) *Source {
	return &Source{pacer: pacer, limit: limit, duration: duration}
}

// Open reports whether requests have intended times (the open model).
func (s *Source) Open() bool { return s.pacer != nil }

// Claim reserves the next request. elapsed is the time since the start of
// the run. It returns the request's number, its intended send time (open
// model; elapsed in the closed model), and ok=false when the run is over.
func (s *Source) Claim(elapsed time.Duration) (hit uint64, at time.Duration, ok bool) {
	if s.stopped.Load() {
		return 0, 0, false
	}
	if s.pacer == nil && s.duration > 0 && elapsed >= s.duration {
		return 0, 0, false
	}
	hit = s.hits.Add(1) - 1
	if s.limit > 0 && hit >= s.limit {
		return 0, 0, false
	}
	if s.pacer == nil {
		return hit, elapsed, true
	}
	at, stop := s.pacer.Pace(hit)
	if stop || (s.duration > 0 && at >= s.duration) {
		return 0, 0, false
	}
	return hit, at, true
}

// Over reports whether every later Claim at elapsed or after would fail:
// the run was stopped, its requests are all claimed, or (closed model) its
// time is up. A worker whose connections the stages keep inactive stops
// waiting for them then: no stage can give them a request.
func (s *Source) Over(elapsed time.Duration) bool {
	return s.stopped.Load() || s.limit > 0 && s.hits.Load() >= s.limit ||
		s.pacer == nil && s.duration > 0 && elapsed >= s.duration
}

// Stop ends the run: every later Claim fails.
func (s *Source) Stop() { s.stopped.Store(true) }

// Stopped reports whether Stop was called.
func (s *Source) Stopped() bool { return s.stopped.Load() }

// Claimed is how many requests have been claimed (it may overshoot the
// limit by the number of workers that found the run over).
func (s *Source) Claimed() uint64 { return s.hits.Load() }

// Limit is the request limit (0: none).
func (s *Source) Limit() uint64 { return s.limit }

// Duration is the time limit (0: none).
func (s *Source) Duration() time.Duration { return s.duration }

// SetConnections makes the number of active connections follow r (closed
// model stages). Call it before the run starts.
func (s *Source) SetConnections(r Ramp) {
	s.conns = &r
}

// SplitConnections makes this source's active connections its part of
// those the ramp makes active: part(total) of them (SetConnections first).
// The part may change while the run goes on (an origin's share of a
// closed-model run's connections follows its latency): an inactive
// connection is then never told that it stays inactive for good.
func (s *Source) SplitConnections(part func(total int) int) {
	s.connPart = part
}

// ActiveConns is how many connections the stages make active at elapsed:
// connection numbers below it may send. Without stages it is -1 (all).
func (s *Source) ActiveConns(elapsed time.Duration) int {
	if s.conns == nil {
		return -1
	}
	return s.activeAt(s.conns, elapsed)
}

// activeAt is how many of this source's connections r makes active at t.
func (s *Source) activeAt(r *Ramp, t time.Duration) int {
	n := int(math.Floor(r.At(t) + 1e-9))
	if s.connPart != nil {
		return s.connPart(n)
	}
	return n
}

// Active reports whether connection number conn (0-based, across all
// workers) may send at elapsed. When it may not, wait is how long until it
// may (a connection should close its socket while inactive), and never is
// true when it will not be active again in this run — or when the run has
// no request left for it (stopped, or -n claimed to the last): an inactive
// connection of a source whose part may grow again would otherwise wait
// for a part that no request needs (a run with several origins hung so).
func (s *Source) Active(conn int, elapsed time.Duration) (active bool, wait time.Duration, never bool) {
	r := s.conns
	if r == nil || conn < s.ActiveConns(elapsed) {
		return true, 0, false
	}
	if s.Over(elapsed) { // nothing left to claim: no reason to wait for a stage
		return false, 0, true
	}
	// Find when it becomes active next: scan at 10 ms resolution to the end.
	const step = 10 * time.Millisecond
	end := r.Total()
	for t := elapsed + step; t <= end; t += step {
		if conn < s.activeAt(r, t) {
			return false, t - elapsed, false
		}
	}
	if s.connPart != nil {
		return false, partRecheck, false // the part may grow again: look again later
	}
	return false, 0, true
}

// partRecheck is how often a connection that the ramp leaves inactive for
// good looks again when its source's part of the ramp may change.
const partRecheck = 100 * time.Millisecond
