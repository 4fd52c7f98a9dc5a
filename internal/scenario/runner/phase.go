package runner

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Interrupted is PhaseError.Why for a phase that a signal (its interrupt
// channel, or its context) stopped.
const Interrupted = "interrupted"

// PhaseError is a setup step that failed: the load is not run.
type PhaseError struct {
	Phase string // "setup"
	Step  string // the step's name
	Why   string // what went wrong: a check, a status, a missing value, an error kind
}

// Error names the phase, the step and why, and says the load did not run.
func (e *PhaseError) Error() string {
	return fmt.Sprintf("%s step %s failed: %s; the load was not run", e.Phase, e.Step, e.Why)
}

// Setup runs sc's setup steps, in order, each as many times as it
// repeats, on one connection of its own (the net engine), before the load:
// their captures fill the pools the load reads. It returns their report
// (nil when there are none). A step that fails — a transport error, a
// failed check, a status ≥ 400 it does not expect, or a value it needs
// that is missing — ends the setup with a *PhaseError. interrupt (Ctrl-C)
// ends it too. d, if set, is the dialer the load uses too (run.NewDialer,
// run.Options.Dialer): the target's TLS configuration is built and its
// name looked up once for the setup, the load and the teardown.
func Setup(ctx context.Context, sc *scenario.Scenario, p *plan.Plan, d *transport.Dialer, interrupt <-chan struct{}) (*report.Phase, error) {
	if len(sc.Setup) == 0 {
		return nil, nil
	}
	ph, failed, err := runPhase(ctx, sc, p, sc.Setup, d, interrupt)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		failed.Phase = "setup"
		return ph, failed
	}
	return ph, nil
}

// Teardown runs sc's teardown steps after the load, as Setup runs the
// setup: a step that fails ends the teardown, which its report says
// (Phase.Failed); the error is for a teardown that could not run at all.
func Teardown(ctx context.Context, sc *scenario.Scenario, p *plan.Plan, d *transport.Dialer, interrupt <-chan struct{}) (*report.Phase, error) {
	if len(sc.Teardown) == 0 {
		return nil, nil
	}
	ph, _, err := runPhase(ctx, sc, p, sc.Teardown, d, interrupt)
	return ph, err
}

// runPhase runs steps as one sequence on one connection and reports them.
func runPhase(ctx context.Context, sc *scenario.Scenario, p *plan.Plan, steps []*scenario.Step, d *transport.Dialer, interrupt <-chan struct{}) (*report.Phase, *PhaseError, error) {
	walk := sc.NewWalk(steps)
	q := *p
	q.Connections, q.Requests, q.Duration, q.Rate, q.BurstEvery, q.BurstSize = 1, 0, 0, 0, 0, 0
	// Not WaitOngoing: a signal aborts the step in flight at once (a silent
	// server would otherwise hold the phase for the whole grace).
	q.Engine, q.SQPoll, q.WaitOngoing, q.StartAt, q.ShardIndex, q.ShardCount = "net", false, false, time.Time{}, 0, 0
	w := &run.Workload{Steps: scenario.Names(steps), NewRequests: func(int) engine.Requests { return walk },
		BodyLimit: scenario.BodyLimit(steps, sc.Settings.BodyLimit), CaptureHeaders: scenario.ResponseHeaders(steps), Ended: walk.Ended()}
	res, err := run.Run(ctx, &q, run.Options{Workload: w, Interrupt: interrupt, Dialer: d})
	if err != nil {
		return nil, nil, err
	}
	scenario.AnnotateSteps(steps, res.Hail.Steps)
	ph := &report.Phase{Steps: res.Hail.Steps, Seconds: res.Summary.Total}
	for i := range ph.Steps {
		ph.Steps[i].Series = nil
	}
	var failed *PhaseError
	switch step, why, transport := walk.Failure(); {
	case res.Hail.Interrupted: // the step in flight was aborted: that is no failure of its own
		failed = &PhaseError{Step: steps[min(walk.At(), len(steps)-1)].Name, Why: Interrupted}
	case why != "":
		if transport && step < len(res.Hail.Steps) {
			kinds := make([]string, 0, 1)
			for k := range res.Hail.Steps[step].ErrorDistribution {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			why = strings.Join(kinds, ", ")
		}
		failed = &PhaseError{Step: steps[step].Name, Why: why}
	}
	if failed != nil {
		ph.Failed = failed.Step + ": " + failed.Why
	}
	return ph, failed, nil
}
