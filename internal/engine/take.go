package engine

import (
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
)

// Taker hands a goroutine worker (a net-engine connection, an HTTP/2 or
// HTTP/3 stream slot) its requests. Every worker paces itself: it claims
// the next request from the job's lock-free Source and, in the open model,
// sleeps on the run's Alarm until the request's intended time, so requests
// that fall due together are released together by one wake-up, and no
// goroutine stands between the schedule and the connections.
//
// A request claimed by a worker that was busy past its intended time may
// have waited for a connection: the part of that span in which every
// connection had a request in flight (Occupancy: the claim is the first
// thing a worker does when it becomes free) is marked on the call, so the
// send delay is split into the target's backpressure and hail's own
// lateness. The rest — a connection was free, and the request still went
// late (hail's goroutines ran late, or it was stopped) — is hail's own.
type Taker struct {
	j     *Job
	alarm *schedule.Alarm // open model; nil in the closed model
	conn  int             // connection number, for connection stages
	idle  func()          // closes the worker's connection while a stage has it inactive
	wake  chan struct{}
	free  time.Duration // when the worker's previous request ended
	occ   *Occupancy    // the engine's slots (open model; nil: every late claim waited)
	sat   time.Duration // since when every slot had been busy when this worker became free
	full  bool          // ... they all had (sat is valid)
	call  *Call         // the worker's call (from Begin): its think time after it ends
	until time.Duration // closed model: the virtual user thinks until then
	ready time.Duration // closed model: when the connection was ready for the next request (-1: unknown)
	timer *time.Timer   // think-time waits and waits while a stage keeps the connection inactive
}

// NewTaker returns the taker of worker conn. alarm paces the open model
// (nil in the closed model); idle is called once whenever connection
// stages make the worker's connection inactive.
func NewTaker(j *Job, alarm *schedule.Alarm, conn int, idle func()) *Taker {
	return &Taker{j: j, alarm: alarm, conn: conn, idle: idle, wake: make(chan struct{}, 1), ready: -1}
}

// Share makes the taker one of the engine's request slots counted by o
// (open model): a request counts as waiting for a connection only while
// every slot was busy.
func (t *Taker) Share(o *Occupancy) { t.occ = o }

// Next waits for the worker's next request and returns its number and its
// intended time (the claim time in the closed model). ok is false when the
// worker is done: the source is exhausted or the job stopped. In the
// closed model it first waits out the think time the previous request
// asked for (Verdict.Think).
func (t *Taker) Next() (hit uint64, at time.Duration, ok bool) {
	j := t.j
	if t.until > 0 && !t.think() {
		return 0, 0, false
	}
	if t.alarm != nil {
		now := j.Since()
		hit, at, ok = j.Source.Claim(now)
		if ok && at > now && t.occ != nil {
			t.occ.idle() // a free connection with nothing due: no backlog
		}
		if !ok || !t.alarm.Wait(at, t.wake, j.Stop) {
			return 0, 0, false
		}
		return hit, at, true
	}
	for {
		active, wait, never := j.Source.Active(t.conn, j.Since())
		if active {
			break
		}
		if never {
			return 0, 0, false
		}
		t.ready = -1 // an inactive connection waits for its stage, not for hail
		t.idle()
		if !t.sleep(wait) {
			return 0, 0, false
		}
	}
	return j.Source.Claim(j.Since())
}

// think sleeps until the virtual user's think time is over; false when
// the job stopped meanwhile.
func (t *Taker) think() bool {
	d := t.until - t.j.Since()
	t.until = 0
	if d <= 0 {
		return true
	}
	return t.sleep(d)
}

// sleep waits d on the worker's one timer, made at its first wait and
// reset for the next (since Go 1.23 a reset timer delivers no value left
// from before); false when the job stopped meanwhile.
func (t *Taker) sleep(d time.Duration) bool {
	if t.timer == nil {
		t.timer = time.NewTimer(d)
	} else {
		t.timer.Reset(d)
	}
	select {
	case <-t.timer.C:
		return true
	case <-t.j.Stop:
		t.timer.Stop()
		return false
	}
}

// Begin starts the call of request hit (from Next) in step, recorded into
// shard's recorders, on connection conn (for the per-request log).
func (t *Taker) Begin(c *Call, shard, step int, hit uint64, at time.Duration, conn int32) {
	t.call = c
	c.Begin(t.j, shard, step, hit, at, conn)
	switch {
	case t.alarm == nil || at >= t.free:
	case t.occ == nil:
		c.Waited(at, t.free)
	case t.full && t.sat < t.free:
		c.Waited(max(at, t.sat), t.free) // every connection was busy from sat to free
	}
	if t.occ != nil {
		t.occ.occupy(t.j.Since())
	}
	if t.ready >= 0 {
		c.Ready(t.ready)
	}
}

// End notes that the worker's request ended: the worker is free, after
// the think time its call asked for. The end is the call's own (its
// response's arrival where the engine knows it).
func (t *Taker) End() {
	if t.call == nil {
		return
	}
	now := t.call.EndTime()
	t.free, t.ready = now, now
	if t.occ != nil {
		t.sat, t.full = t.occ.vacate()
	}
	if d := t.call.Think(); d > 0 {
		t.until = now + d
		t.ready = t.until
	}
}
