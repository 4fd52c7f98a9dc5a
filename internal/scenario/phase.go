package scenario

import (
	"fmt"
	"sync"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
)

// Walk walks a setup or teardown list on one connection: each step as
// many times as it repeats (repeat: all, until it cannot be built because
// a pool it takes from is empty). Its first failure stops the walk. It is
// the engine.Requests of the list's run: one builder for the one
// connection.
type Walk struct {
	v     *vu
	steps []*Step
	i, n  int // the current step and how often it ran
	end   chan struct{}
	once  sync.Once

	failed    string // why the walk stopped early; "" if it did not
	failStep  int
	transport bool // the failure was a transport error (the result names its kind)
}

// NewWalk returns the walk of steps (s's Setup or Teardown), which share
// s's pools and feeds.
func (s *Scenario) NewWalk(steps []*Step) *Walk {
	ps := &Scenario{File: s.File, Name: s.Name, Base: s.Base, Origins: s.Origins, Headers: s.Headers, Settings: s.Settings,
		Steps: steps, Pools: s.Pools, Feeds: s.Feeds, captures: s.captures, maxSlots: s.maxSlots, seed: s.seed ^ 0x5e7a9}
	return &Walk{v: newVU(ps, -1), steps: steps, end: make(chan struct{})}
}

// Ended is closed when the walk has nothing left to send.
func (w *Walk) Ended() <-chan struct{} { return w.end }

// Failure says why the walk stopped early (why is "" when it did not):
// the step (its index in the list), why, and whether it was a transport
// error (whose kind the run's result names).
func (w *Walk) Failure() (step int, why string, transport bool) {
	return w.failStep, w.failed, w.transport
}

// At is the index of the step the walk is at.
func (w *Walk) At() int { return w.i }

// Next implements engine.Requests.
func (w *Walk) Next(hit uint64) ([]byte, int, bool, bool) {
	w.v.ctx.Hit = hit
	for w.failed == "" && w.i < len(w.steps) {
		st := w.steps[w.i]
		if st.repeat != repeatAll && w.n >= st.repeat {
			w.i, w.n = w.i+1, 0
			continue
		}
		w.v.newRows()
		req, ok := w.v.build(w.i)
		if !ok {
			if st.repeat == repeatAll {
				w.i, w.n = w.i+1, 0
				continue
			}
			w.fail(w.i, "it could not be built: "+st.reasons[w.v.yielded])
			break
		}
		w.n++
		return req, w.i, st.isHead, true
	}
	w.once.Do(func() { close(w.end) })
	return nil, 0, false, false
}

// Done implements engine.Requests: the step's checks and captures run as
// in the load; a failed request, check or unexpected status ≥ 400 stops
// the walk.
func (w *Walk) Done(step int, p *http1.Parser) engine.Verdict {
	verdict := w.v.Done(step, p)
	switch {
	case p == nil:
		w.fail(step, "the request failed")
		w.transport = true
	case verdict.Failed:
		w.fail(step, fmt.Sprintf("status %d, check %s failed", p.Status, w.v.failedCheck.desc))
	case p.Status >= 400 && !verdict.Expected:
		w.fail(step, fmt.Sprintf("status %d (give expect: {status: …} if it is expected)", p.Status))
	}
	return verdict
}

func (w *Walk) fail(step int, why string) {
	if w.failed == "" {
		w.failed, w.failStep = why, step
	}
}
