package run

import (
	"context"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
)

// How a run stopped sending.
const (
	endDone      = ""          // the source ran out (-n reached) before anything stopped it
	endDeadline  = "deadline"  // -z
	endInterrupt = "interrupt" // Ctrl-C, SIGTERM, or the caller's context
	endThreshold = "threshold" // a threshold with abort_on_fail
	endData      = "data"      // the workload ran out of data (a scenario's unique feed)
)

// controller ends a run. It owns the job's Stop and Abort channels and the
// record of why and when the run stopped; every path that ends a run (the
// -z deadline, an interrupt, the caller's context, a failed threshold)
// goes through end, once. After Stop, in-flight requests settle: with -w
// they may finish within the grace (-t, else DefaultGrace), and another
// interrupt during the settling aborts them; without -w they are aborted
// at once.
type controller struct {
	job   *engine.Job   // the run's job (its first, with several origins)
	jobs  []*engine.Job // every job of the run: one per origin
	stop  chan struct{}
	abort chan struct{}
	wait  bool          // -w
	grace time.Duration // how long -w waits at most

	mu      sync.Mutex
	reason  string        // why the run stopped (endDone until it did)
	at      time.Duration // when it stopped, since the job's start
	ended   bool
	waited  bool // it stopped sending and let in-flight requests finish (-w)
	aborted bool
	done    chan struct{} // closed when the engine returned
}

func newController(jobs []*engine.Job, wait bool, timeout time.Duration) *controller {
	c := &controller{job: jobs[0], jobs: jobs, stop: make(chan struct{}), abort: make(chan struct{}), wait: wait,
		grace: DefaultGrace, done: make(chan struct{})}
	if timeout > 0 {
		c.grace = timeout
	}
	for _, job := range jobs {
		job.Stop, job.Abort = c.stop, c.abort
	}
	return c
}

// watch ends the run at the deadline (0: none), when interrupt is closed,
// when ctx ends, when threshold is closed (in-flight requests are aborted)
// or when data is closed (they finish), until the engine returns.
func (c *controller) watch(ctx context.Context, deadline time.Duration, interrupt, threshold, data <-chan struct{}) {
	var timer <-chan time.Time
	if deadline > 0 {
		t := time.NewTimer(deadline - c.job.Since())
		defer t.Stop()
		timer = t.C
	}
	grace := c.grace
	select {
	case <-timer:
		wait := c.wait
		if s := c.job.Stream; !wait && s != nil && s.Drain > 0 && (s.Live() > 0 || s.Tokens) {
			// Streams in progress (in a token run, every request in flight
			// is one, its head perhaps not back yet) go on for a bounded
			// drain; those cut at its end are truncated, not errors.
			wait, grace = true, s.Drain
		}
		c.end(endDeadline, wait)
	case <-interrupt:
		if c.past(deadline) {
			break
		}
		c.end(endInterrupt, c.wait)
		interrupt = nil // it started the settling: it cannot also cut it short
	case <-ctx.Done():
		if c.past(deadline) {
			break
		}
		c.end(endInterrupt, c.wait)
		ctx = context.Background()
	case <-threshold:
		c.end(endThreshold, false)
	case <-data:
		c.end(endData, true)
	case <-c.done:
		return
	}
	// Settling (-w, or streams draining): the grace, or one more
	// interrupt, aborts what is left.
	settle := time.NewTimer(grace)
	defer settle.Stop()
	select {
	case <-settle.C:
	case <-interrupt:
	case <-ctx.Done():
	case <-c.done:
		return
	}
	c.abortNow()
}

// past reports, for an interrupt that came before the deadline's timer
// fired, whether the deadline (0: none) had passed all the same: the
// engines stop starting requests at it on their own (the Source's
// duration), so the run was already settling, and the interrupt aborts
// what is left. (Taken as the run's first end, it would start a settling
// of the whole grace that nothing but the grace could cut short: under
// load, where the timer fires late, a Ctrl-C after -z waited 30 s.)
func (c *controller) past(deadline time.Duration) bool {
	if deadline <= 0 || c.job.Since() < deadline {
		return false
	}
	c.end(endDeadline, c.wait)
	return true
}

// end stops the run for reason: no new request starts; in-flight ones
// settle when wait is true and are aborted otherwise.
func (c *controller) end(reason string, wait bool) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended, c.reason, c.at, c.waited = true, reason, c.job.Since(), wait
	c.mu.Unlock()
	if wait {
		// What ends from now on ends in the drain: counted and marked, in
		// every job's recorders (a run with several origins has a job per
		// origin).
		for _, job := range c.jobs {
			for _, recs := range job.Recorders {
				for _, r := range recs {
					r.Drain()
				}
			}
		}
	}
	for _, job := range c.jobs {
		job.Source.Stop()
	}
	close(c.stop)
	if !wait {
		c.abortNow()
	}
}

// abortNow aborts the requests in flight (once).
func (c *controller) abortNow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.aborted {
		c.aborted = true
		for _, job := range c.jobs {
			job.MarkAborting()
		}
		close(c.abort)
	}
}

// drained reports whether the run stopped sending and then let in-flight
// requests finish (-w, or a workload that ran out of data): the time after
// the stop was a drain.
func (c *controller) drained() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended && c.waited
}

// finished tells the watcher that the engine returned.
func (c *controller) finished() { close(c.done) }

// ending is why and when the run stopped sending: endDone and the end of
// the run (finish) when nothing stopped it.
func (c *controller) ending(finish time.Duration) (string, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		return endDone, finish
	}
	return c.reason, c.at
}
