package runner

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
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

// PhaseOptions are what a setup or teardown run takes beyond the scenario.
type PhaseOptions struct {
	// Interrupt, when closed (a signal), stops the phase: the run of its
	// step in flight ends as an interrupted run does, its requests in
	// flight aborted, and no further step runs.
	Interrupt <-chan struct{}
	// Progress, if set, is called with the step in progress when it starts,
	// about once a second while it runs, and when it ends.
	Progress func(Progress)
}

// Progress is where a setup or teardown is: its step, how many of its
// requests have ended of how many it makes, and how fast.
type Progress struct {
	Phase string // "setup" or "teardown"
	Step  string
	// Index is the step's place in the phase (from 1) of Steps.
	Index, Steps int
	// Done requests ended of Total (0: not known ahead: repeat: all of an
	// empty pool); Concurrency is how many it sends at once.
	Done, Total int64
	Concurrency int
	Elapsed     time.Duration
	// Ended says the step is over (this is its last report).
	Ended bool
}

// Rate is the step's requests per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Done) / p.Elapsed.Seconds()
}

// Setup runs sc's setup steps, in order, each as many times as it repeats
// with its concurrency (the load's connections unless it says otherwise),
// on its target's connections, before the load: their captures fill the
// pools the load reads. It returns their report (nil when there are none).
// A step that fails — a transport error, a failed check, a status it does
// not expect, or a value it needs that is missing — ends the setup with a
// *PhaseError, its requests in flight let finish. o.Interrupt (a signal)
// or ctx ends it too, its requests in flight aborted: a *PhaseError whose
// Why is Interrupted.
func Setup(ctx context.Context, sc *scenario.Scenario, t *Targets, o PhaseOptions) (*result.Phase, error) {
	if len(sc.Setup) == 0 {
		return nil, nil
	}
	ph, failed, err := runPhase(ctx, "setup", sc, t, sc.Setup, o)
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
func Teardown(ctx context.Context, sc *scenario.Scenario, t *Targets, o PhaseOptions) (*result.Phase, error) {
	if len(sc.Teardown) == 0 {
		return nil, nil
	}
	ph, _, err := runPhase(ctx, "teardown", sc, t, sc.Teardown, o)
	return ph, err
}

// runPhase runs steps one after the other, each a run of its own, and
// reports them.
func runPhase(ctx context.Context, name string, sc *scenario.Scenario, t *Targets, steps []*scenario.Step, o PhaseOptions) (*result.Phase, *PhaseError, error) {
	ph := &result.Phase{}
	for i := range steps {
		step, failed, err := runPhaseStep(ctx, name, sc, t, steps, i, o)
		if err != nil {
			return nil, nil, err
		}
		ph.Steps = append(ph.Steps, step.Steps...)
		ph.Duration += step.Duration
		if failed != nil {
			ph.Failed = failed.Step + ": " + failed.Why
			return ph, failed, nil
		}
	}
	return ph, nil, nil
}

// runPhaseStep runs steps[i] with its concurrency on its target's
// connections and reports it.
func runPhaseStep(ctx context.Context, name string, sc *scenario.Scenario, t *Targets, steps []*scenario.Step, i int, o PhaseOptions) (*result.Phase, *PhaseError, error) {
	ps := sc.NewPhaseStep(steps, i)
	st := ps.Step
	k := st.OriginOf()
	q := *t.Plan(k)
	q.Connections, q.Requests = ps.Concurrency(t.run.Connections), ps.Requests()
	q.Duration, q.Rate, q.BurstEvery, q.BurstSize, q.Streams = 0, 0, 0, 0, 0
	// Not WaitOngoing: a signal aborts the requests in flight at once (a
	// silent server would otherwise hold the phase for the whole grace);
	// a step that fails or runs out still lets them finish (Ended).
	q.Engine, q.SQPoll, q.WaitOngoing, q.StartAt, q.ShardIndex, q.ShardCount = "net", false, false, time.Time{}, 0, 0
	w := &run.Workload{Steps: []string{st.Name}, NewRequests: ps.NewRequests,
		BodyLimit: scenario.BodyLimit(steps[i:i+1], sc.Settings.BodyLimit), CaptureHeaders: scenario.ResponseHeaders(steps[i : i+1]), Ended: ps.Ended()}
	prog := Progress{Phase: name, Step: st.Name, Index: i + 1, Steps: len(steps), Total: ps.Total(), Concurrency: q.Connections}
	opts := run.Options{Workload: w, Interrupt: o.Interrupt, Dialer: t.Dialer(k)}
	if o.Progress != nil {
		o.Progress(prog)
		opts.Progress = func(s stats.Snapshot) {
			p := prog
			p.Done, p.Elapsed = s.Requests, s.Elapsed
			o.Progress(p)
		}
	}
	res, err := run.Run(ctx, &q, opts)
	if err != nil {
		if len(sc.Origins) > 1 {
			err = fmt.Errorf("%s step %s (target %s): %v", name, st.Name, sc.Origins[k].Name, err)
		}
		return nil, nil, err
	}
	if o.Progress != nil {
		p := prog
		p.Done, p.Elapsed, p.Ended = res.Hail.Counts.Requests, res.Summary.Total, true
		o.Progress(p)
	}
	scenario.AnnotateSteps(steps[i:i+1], res.Hail.Steps)
	ph := &result.Phase{Steps: res.Hail.Steps, Duration: res.Summary.Total}
	for j := range ph.Steps {
		ph.Steps[j].Series = nil
	}
	var failed *PhaseError
	switch why, transport := ps.Failure(); {
	case res.Hail.Interrupted: // its requests in flight were aborted: that is no failure of its own
		failed = &PhaseError{Step: st.Name, Why: Interrupted}
	case why != "":
		if transport && len(res.Hail.Steps) > 0 {
			kinds := make([]string, 0, 1)
			for k := range res.Hail.Steps[0].ErrorDistribution {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			if len(kinds) > 0 {
				why = strings.Join(kinds, ", ")
			}
		}
		failed = &PhaseError{Step: st.Name, Why: why}
	}
	return ph, failed, nil
}
