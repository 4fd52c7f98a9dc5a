package scenario

import (
	"fmt"
	"sync"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/status"
)

// PhaseStep runs one setup or teardown step: as many times as it repeats
// (repeat: all, until a pool it takes from is empty), on as many
// connections at once as its concurrency. Every worker gets a builder of
// its own (NewRequests); they share the step's count, its first failure,
// which stops it, and its end. The steps of a phase run one after the
// other, each a run of its own (runner.Setup, runner.Teardown).
type PhaseStep struct {
	// Step is the step.
	Step  *Step
	s     *Scenario // the step alone, sharing the file's pools and feeds
	end   chan struct{}
	once  sync.Once
	total int64 // the requests it makes: its repeat count, or the values its pool held at its start

	mu        sync.Mutex
	failed    string // why it stopped early; "" if it did not
	transport bool   // the failure was a transport error (the run's result names its kind)
}

// NewPhaseStep returns the run of steps[i] (s's Setup or Teardown), which
// shares s's pools and feeds.
func (s *Scenario) NewPhaseStep(steps []*Step, i int) *PhaseStep {
	st := steps[i]
	ps := &Scenario{File: s.File, Name: s.Name, Base: s.Base, Origins: s.Origins, Headers: s.Headers, Settings: s.Settings,
		Steps: []*Step{st}, Pools: s.Pools, Feeds: s.Feeds, captures: s.captures, maxSlots: s.maxSlots, seed: s.seed ^ 0x5e7a9 ^ uint64(i)}
	p := &PhaseStep{Step: st, s: ps, end: make(chan struct{}), total: int64(st.repeat)}
	if st.repeat == repeatAll {
		p.total = 0
		for _, r := range st.refs {
			if r.Take {
				p.total = int64(s.Pools[r.Pool].Len())
				break
			}
		}
	}
	return p
}

// Requests is how many requests the step makes: its repeat count, or 0 for
// repeat: all (its end is then Ended's).
func (p *PhaseStep) Requests() uint64 {
	if p.Step.repeat == repeatAll {
		return 0
	}
	return uint64(p.Step.repeat)
}

// Total is how many requests the step is expected to make: its repeat
// count, or for repeat: all the values its pool held when it started.
func (p *PhaseStep) Total() int64 { return p.total }

// Concurrency is how many connections the step sends on: its own
// concurrency, else def (the load's connections), at most its requests.
func (p *PhaseStep) Concurrency(def int) int {
	c := p.Step.concurrency
	if c == 0 {
		c = def
	}
	if n := p.total; n > 0 {
		c = int(min(int64(c), n))
	}
	return max(c, 1)
}

// Ended is closed when the step has nothing left to send: its pool is
// empty (repeat: all), or it failed.
func (p *PhaseStep) Ended() <-chan struct{} { return p.end }

// Failure says why the step stopped early (why is "" when it did not), and
// whether it was a transport error (whose kind the run's result names).
func (p *PhaseStep) Failure() (why string, transport bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed, p.transport
}

// fail records the step's first failure and ends it.
func (p *PhaseStep) fail(why string, transport bool) {
	p.mu.Lock()
	if p.failed == "" {
		p.failed, p.transport = why, transport
	}
	p.mu.Unlock()
	p.stop()
}

func (p *PhaseStep) stop() { p.once.Do(func() { close(p.end) }) }

// NewRequests returns the request builder of one of the step's workers.
func (p *PhaseStep) NewRequests(worker int) engine.Requests {
	return &phaseVU{p: p, v: newVU(p.s, worker)}
}

// phaseVU is a worker's builder of a phase step: a virtual user of the
// step alone.
type phaseVU struct {
	p *PhaseStep
	v *vu
}

// Next implements engine.Requests.
func (w *phaseVU) Next(hit uint64) ([]byte, int, bool, bool) {
	p := w.p
	select {
	case <-p.end:
		return nil, 0, false, false
	default:
	}
	w.v.ctx.Hit = hit
	w.v.newRows()
	req, ok := w.v.build(0)
	if !ok {
		if p.Step.repeat == repeatAll {
			p.stop() // its pool is empty: done
		} else {
			p.fail("it could not be built: "+p.Step.reasons[w.v.yielded], false)
		}
		return nil, 0, false, false
	}
	return req, 0, p.Step.isHead, true
}

// Body implements engine.SharedBody (vu.Body).
func (w *phaseVU) Body(hit uint64, step int) []byte { return w.v.Body(hit, step) }

// Reserved implements engine.Reserver (vu.Reserved).
func (w *phaseVU) Reserved() uint32 { return w.v.Reserved() }

// Release implements engine.Reserver (vu.Release): a request that was
// never sent (its connection failed, or a signal stopped the phase)
// gives back the value it took (the id a teardown's DELETE was to delete).
func (w *phaseVU) Release(token uint32, unsent bool) { w.v.Release(token, unsent) }

// Done implements engine.Requests: the step's checks and captures run as
// in the load; a failed request, check or unexpected status ≥ 400 stops
// the step.
func (w *phaseVU) Done(step int, r *http1.Parser) engine.Verdict {
	verdict := w.v.Done(0, r)
	switch {
	case r == nil:
		w.p.fail("the request failed", true)
	case verdict.Failed:
		w.p.fail(fmt.Sprintf("status %s, check %s failed", statusText(r.Status), w.v.failedCheck.desc), false)
	case status.Failed(r.Status) && !verdict.Expected:
		w.p.fail(fmt.Sprintf("status %s (give expect: {status: …} if it is expected)", statusText(r.Status)), false)
	}
	return verdict
}

// statusText is a status as messages say it: an HTTP code, or a gRPC
// status name.
func statusText(status int) string { return string(statusValue(nil, status)) }
