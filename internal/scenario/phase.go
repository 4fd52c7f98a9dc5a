package scenario

import (
	"fmt"
	"sync"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
)

// Phase walks a setup or teardown list on one connection: each step as
// many times as it repeats (repeat: all, until it cannot be built because
// a pool it takes from is empty). Its first failure stops the walk. It is
// the engine.Requests of the list's run: one builder for the one
// connection.
type Phase struct {
	v     *vu
	steps []*Step
	i, n  int // the current step and how often it ran
	end   chan struct{}
	once  sync.Once

	failed    string // why the walk stopped early; "" if it did not
	failStep  int
	transport bool // the failure was a transport error (the result names its kind)
}

// NewPhase returns the walk of steps (s's Setup or Teardown), which share
// s's pools and feeds.
func (s *Scenario) NewPhase(steps []*Step) *Phase {
	ps := &Scenario{File: s.File, Name: s.Name, Base: s.Base, Headers: s.Headers, Settings: s.Settings,
		Steps: steps, Pools: s.Pools, Feeds: s.Feeds, captures: s.captures, maxSlots: s.maxSlots, seed: s.seed ^ 0x5e7a9}
	return &Phase{v: newVU(ps, -1), steps: steps, end: make(chan struct{})}
}

// Ended is closed when the walk has nothing left to send.
func (pv *Phase) Ended() <-chan struct{} { return pv.end }

// Failure says why the walk stopped early (why is "" when it did not):
// the step (its index in the list), why, and whether it was a transport
// error (whose kind the run's result names).
func (pv *Phase) Failure() (step int, why string, transport bool) {
	return pv.failStep, pv.failed, pv.transport
}

// At is the index of the step the walk is at.
func (pv *Phase) At() int { return pv.i }

// Next implements engine.Requests.
func (pv *Phase) Next(hit uint64) ([]byte, int, bool, bool) {
	pv.v.ctx.Hit = hit
	for pv.failed == "" && pv.i < len(pv.steps) {
		st := pv.steps[pv.i]
		if st.repeat != repeatAll && pv.n >= st.repeat {
			pv.i, pv.n = pv.i+1, 0
			continue
		}
		pv.v.newRows()
		req, ok := pv.v.build(pv.i)
		if !ok {
			if st.repeat == repeatAll {
				pv.i, pv.n = pv.i+1, 0
				continue
			}
			pv.fail(pv.i, "it could not be built: "+st.reasons[pv.v.yielded])
			break
		}
		pv.n++
		return req, pv.i, st.isHead, true
	}
	pv.once.Do(func() { close(pv.end) })
	return nil, 0, false, false
}

// Done implements engine.Requests: the step's checks and captures run as
// in the load; a failed request, check or unexpected status ≥ 400 stops
// the walk.
func (pv *Phase) Done(step int, p *http1.Parser) engine.Verdict {
	verdict := pv.v.Done(step, p)
	switch {
	case p == nil:
		pv.fail(step, "the request failed")
		pv.transport = true
	case verdict.Failed:
		pv.fail(step, fmt.Sprintf("status %d, check %s failed", p.Status, pv.v.failedCheck.desc))
	case p.Status >= 400 && !verdict.Expected:
		pv.fail(step, fmt.Sprintf("status %d (give expect: {status: …} if it is expected)", p.Status))
	}
	return verdict
}

func (pv *Phase) fail(step int, why string) {
	if pv.failed == "" {
		pv.failed, pv.failStep = why, step
	}
}
