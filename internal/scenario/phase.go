package scenario

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
)

// PhaseError is a setup step that failed: the load is not run.
type PhaseError struct {
	Phase string // "setup"
	Step  string
	Why   string
}

func (e *PhaseError) Error() string {
	return fmt.Sprintf("%s step %s failed: %s; the load was not run", e.Phase, e.Step, e.Why)
}

// RunSetup runs the setup steps, in order, each as many times as it
// repeats, on one connection of its own (the net engine), before the load:
// their captures fill the pools the load reads. It returns their report
// (nil when there are none). A step that fails — a transport error, a
// failed check, a status ≥ 400 it does not expect, or a value it needs
// that is missing — ends the setup with a *PhaseError. interrupt (Ctrl-C)
// ends it too.
func (s *Scenario) RunSetup(ctx context.Context, p *plan.Plan, interrupt <-chan struct{}) (*report.Phase, error) {
	if len(s.Setup) == 0 {
		return nil, nil
	}
	ph, failed, err := s.runPhase(ctx, p, s.Setup, interrupt)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		failed.Phase = "setup"
		return ph, failed
	}
	return ph, nil
}

// RunTeardown runs the teardown steps after the load, as RunSetup runs the
// setup: a step that fails ends the teardown, which its report says
// (Phase.Failed); the error is for a teardown that could not run at all.
func (s *Scenario) RunTeardown(ctx context.Context, p *plan.Plan, interrupt <-chan struct{}) (*report.Phase, error) {
	if len(s.Teardown) == 0 {
		return nil, nil
	}
	ph, _, err := s.runPhase(ctx, p, s.Teardown, interrupt)
	return ph, err
}

// runPhase runs steps as one sequence on one connection and reports them.
func (s *Scenario) runPhase(ctx context.Context, p *plan.Plan, steps []*Step, interrupt <-chan struct{}) (*report.Phase, *PhaseError, error) {
	ps := &Scenario{File: s.File, Name: s.Name, Base: s.Base, Headers: s.Headers, Settings: s.Settings,
		Steps: steps, Pools: s.Pools, Feeds: s.Feeds, captures: s.captures, maxSlots: s.maxSlots, seed: s.seed ^ 0x5e7a9}
	pv := &phaseVU{v: newVU(ps, -1), steps: steps, end: make(chan struct{})}
	q := *p
	q.Connections, q.Requests, q.Duration, q.Rate, q.BurstEvery, q.BurstSize = 1, 0, 0, 0, 0, 0
	q.Engine, q.SQPoll, q.WaitOngoing, q.StartAt, q.ShardIndex, q.ShardCount = "net", false, true, time.Time{}, 0, 0
	names := make([]string, len(steps))
	for i, st := range steps {
		names[i] = st.Name
	}
	w := &run.Workload{Steps: names, NewRequests: func(int) engine.Requests { return pv },
		BodyLimit: bodyLimit(steps, s.Settings.BodyLimit), CaptureHeaders: captureHeaders(steps), Ended: pv.end}
	res, err := run.Run(ctx, &q, run.Options{Workload: w, Interrupt: interrupt})
	if err != nil {
		return nil, nil, err
	}
	annotateSteps(steps, res.Hail.Steps)
	ph := &report.Phase{Steps: res.Hail.Steps, Seconds: res.Summary.Total}
	for i := range ph.Steps {
		ph.Steps[i].Series = nil
	}
	var failed *PhaseError
	switch {
	case pv.failed != "":
		why := pv.failed
		if pv.transport && pv.failStep < len(res.Hail.Steps) {
			kinds := make([]string, 0, 1)
			for k := range res.Hail.Steps[pv.failStep].ErrorDistribution {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			why = strings.Join(kinds, ", ")
		}
		failed = &PhaseError{Step: steps[pv.failStep].Name, Why: why}
	case res.Hail.Interrupted:
		failed = &PhaseError{Step: steps[min(pv.i, len(steps)-1)].Name, Why: "interrupted"}
	}
	if failed != nil {
		ph.Failed = failed.Step + ": " + failed.Why
	}
	return ph, failed, nil
}

// phaseVU walks a setup or teardown list on one connection: each step as
// many times as it repeats (repeat: all, until it cannot be built because
// a pool it takes from is empty). Its first failure stops the walk.
type phaseVU struct {
	v     *vu
	steps []*Step
	i, n  int // the current step and how often it ran
	end   chan struct{}
	once  sync.Once

	failed    string // why the walk stopped early; "" if it did not
	failStep  int
	transport bool // the failure was a transport error (the result names its kind)
}

// Next implements engine.Requests.
func (pv *phaseVU) Next(hit uint64) ([]byte, int, bool, bool) {
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
func (pv *phaseVU) Done(step int, p *http1.Parser) engine.Verdict {
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

func (pv *phaseVU) fail(step int, why string) {
	if pv.failed == "" {
		pv.failed, pv.failStep = why, step
	}
}
