package schedule

import (
	"sync"
	"time"
)

// Alarm wakes goroutines at times they ask for, precisely and in batches:
// one goroutine keeps the pending wake-ups in a heap and sleeps until the
// earliest on one timer (a timerfd in Go's netpoller on Linux, so a
// wake-up is accurate to tens of microseconds where a Go timer oversleeps
// by up to a millisecond); when it fires, every wake-up that is due is
// delivered at once. Engines whose workers are goroutines (one per
// connection or stream) pace their own requests on it, and hail serve
// times its delayed responses with it.
type Alarm struct {
	base    time.Time
	t       *alarmTimer
	quantum time.Duration // the shortest time between two firings
	fired   time.Duration // when it last fired

	mu      sync.Mutex
	pending TimeHeap[chan<- struct{}] // wake-ups, by time since base
	armed   time.Duration             // when the timer fires next; -1: not armed
	closed  bool
	exited  chan struct{}
}

// NewAlarm returns an Alarm whose times are durations since base, firing at
// most once per quantum (0: at every time asked for; wake-ups due in
// between are delivered together at the next firing). Close releases it.
func NewAlarm(base time.Time, quantum time.Duration) *Alarm {
	return startAlarm(base, quantum, newAlarmTimer(base))
}

// startAlarm runs an Alarm on timer t (tests give it the Go-timer fallback).
func startAlarm(base time.Time, quantum time.Duration, t *alarmTimer) *Alarm {
	a := &Alarm{base: base, t: t, armed: -1, exited: make(chan struct{}), quantum: quantum, fired: -quantum}
	go a.run()
	return a
}

// At arranges for ch (buffered, capacity 1) to receive a value once at
// (since the base) has come; at once if it has. A value that does not fit
// is dropped: the receiver is already awake.
func (a *Alarm) At(at time.Duration, ch chan<- struct{}) {
	if a.schedule(at, ch) {
		notify(ch)
	}
}

// Wait blocks until at has come (true), or until stop is closed or the
// alarm is closed (false). ch is the caller's own wake channel (capacity
// 1): a stale value left in it by an earlier wake-up is ignored.
func (a *Alarm) Wait(at time.Duration, ch chan struct{}, stop <-chan struct{}) bool {
	for time.Since(a.base) < at {
		select {
		case <-ch:
		default:
		}
		if a.schedule(at, ch) {
			return false
		}
		select {
		case <-ch:
		case <-stop:
			return false
		}
	}
	return true
}

// schedule queues ch's wake-up at at, under one hold of the lock: ch is
// notified at once if at has come, and nothing is queued (closed is true)
// when the alarm is closed.
func (a *Alarm) schedule(at time.Duration, ch chan<- struct{}) (closed bool) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return true
	}
	if at <= time.Since(a.base) {
		a.mu.Unlock()
		notify(ch)
		return false
	}
	a.pending.Push(at, ch)
	if fire := max(at, a.fired+a.quantum); a.armed < 0 || fire < a.armed {
		a.armed = fire
		a.t.arm(fire)
	}
	a.mu.Unlock()
	return false
}

// Close stops the alarm's goroutine; pending wake-ups are delivered now.
func (a *Alarm) Close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	a.t.arm(0)
	a.mu.Unlock()
	<-a.exited
	a.t.close()
}

func (a *Alarm) run() {
	defer close(a.exited)
	for {
		a.t.wait()
		a.mu.Lock()
		now := time.Since(a.base)
		a.fired = now
		for a.pending.Len() > 0 && (a.closed || a.pending.Next() <= now) {
			_, ch := a.pending.Pop()
			notify(ch)
		}
		if a.closed {
			a.mu.Unlock()
			return
		}
		a.armed = -1
		if a.pending.Len() > 0 {
			a.armed = max(a.pending.Next(), now+a.quantum)
			a.t.arm(a.armed)
		}
		a.mu.Unlock()
	}
}

func notify(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
