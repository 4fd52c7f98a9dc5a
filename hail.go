// Package hail runs load tests from Go: the same engines, models and
// measurements as the hail command, for a program or a test that loads a
// service and asserts on the result.
//
//	res, err := hail.Run(ctx, hail.Plan{URL: "http://127.0.0.1:8080/", Requests: 10_000, Connections: 64})
//	if err != nil { ... }                 // *FieldError, *UnreachableError, *NoSuccessError, *ThresholdError, …
//	fmt.Println(res.Hail.Counts.Sent, res.LatencyPercentiles.P99, res.Hail.Verdict.Bottleneck)
//
// A Plan describes every kind of run the command makes: one URL in the
// closed model (Connections), the open model (Rate), rate or connection
// stages, bursts; a Scenario (LoadScenario, ReadScenario, or built in Go
// with package scenario and NewScenario); a gRPC call (Plan.GRPC); an LLM
// inference load with token streams (Plan.LLM); thresholds. Latency counts from each request's intended send time in
// the open model, so a stalled server cannot hide, and
// Result.Hail.Verdict names the run's bottleneck. Cancelling the context
// ends a run as Ctrl-C ends the command's: no new request starts, and the
// Result covers what was done. Runs in one process are independent: each
// has its own connections, recorders and dial slots.
//
// # The Result
//
// Result is the JSON report the command writes, as Go values with times as
// time.Duration; WriteJSON and ReadJSON (and encoding/json) write and read
// the command's files byte for byte. Result and all its parts (Counts,
// Histograms, Verdict, ThresholdResult, Generator, TargetUse, Merged, …)
// are declared once, in package result, and named here by aliases;
// internal/report builds, merges and renders those same types.
//
// hailtest starts the built-in target in a test, with its faults and its
// own counts, and asserts a run's counts against the server's.
package hail

import (
	"context"
	"errors"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario/runner"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/target"
	"github.com/hail-loadgen/hail/result"
)

// Run carries out p and returns its Result.
//
// Before anything is sent, a Plan that cannot run is a *FieldError (a
// *ScenarioError for a scenario's file), and a target whose name does not
// resolve (or a gRPC server that cannot be reached) an *UnreachableError;
// a scenario's failed setup step is a *SetupError. After the run, the Result is complete and the error says
// how it went: nil; *UnreachableError (no request could be sent: every
// connection failed); *NoSuccessError (requests were sent, none
// succeeded); *ThresholdError (a threshold failed, or one stopped the
// run). Cancelling ctx ends the run early with a complete Result
// (Hail.Interrupted) and no error of its own; a scenario's teardown still
// runs.
func Run(ctx context.Context, p Plan, opts ...Option) (*Result, error) {
	var o options
	for _, opt := range opts {
		opt.apply(&o)
	}
	j, err := p.compile(ctx, true)
	if err != nil {
		return nil, err
	}
	defer j.close()
	if err := j.plan.Validate(); err != nil {
		return nil, public(err)
	}
	return j.run(ctx, o)
}

// Option adjusts a Run.
type Option struct{ apply func(*options) }

type options struct {
	progress         func(Progress)
	successBreakdown bool
	target           target.Spec
}

// WithProgress calls f with the run so far about once a second, from a
// goroutine of the run's (f must return quickly: the next second waits).
// To receive it on a channel, send from f without blocking.
func WithProgress(f func(Progress)) Option { return Option{func(o *options) { o.progress = f }} }

// WithSuccessBreakdown adds latency percentiles of the successful and the
// other responses to the Result (Result.LatencyPercentilesSuccessful).
func WithSuccessBreakdown() Option { return Option{func(o *options) { o.successBreakdown = true }} }

// WithTargetPID samples the target's process (on this machine) and its
// descendants once a second: their memory (RSS and PSS) and CPU go into
// Result.Hail.Target (with a per-process breakdown), the series and each
// stage's figures, and the verdict counts their CPU on hail's CPUs as the
// target's. Each use adds a process; WithTargetCmd and WithTargetCgroup
// add others.
func WithTargetPID(pid int) Option {
	return Option{func(o *options) { o.target.PIDs = append(o.target.PIDs, pid) }}
}

// WithTargetCmd samples, as WithTargetPID does, every process called
// name (its command name, or its program's or script's base name: a
// server run as python app.py is app.py) and their descendants, looked
// for again every second: workers that come and go are counted while
// they live.
func WithTargetCmd(name string) Option {
	return Option{func(o *options) { o.target.Cmds = append(o.target.Cmds, name) }}
}

// WithTargetCgroup samples, as WithTargetPID does, the processes of a
// cgroup (v1 or v2: a path under /sys/fs/cgroup, or one relative to its
// hierarchy such as /system.slice/app.service) and those beneath it, with
// the cgroup's own CPU and memory counters.
func WithTargetCgroup(path string) Option {
	return Option{func(o *options) { o.target.Cgroups = append(o.target.Cgroups, path) }}
}

// run carries out j: a scenario's setup, the load, its teardown, the
// thresholds.
func (j *job) run(ctx context.Context, o options) (*Result, error) {
	ro := run.Options{SuccessBreakdown: o.successBreakdown, Config: j.config, Workload: j.workload, Target: o.target}
	if o.progress != nil {
		var steps []string
		if j.workload != nil {
			steps = j.workload.Steps
		}
		var coll *stats.Collector
		lat := stats.NewHist()
		ro.Observe = func(c *stats.Collector) { coll = c }
		ro.Progress = func(stats.Snapshot) { o.progress(progressOf(coll, steps, lat)) }
	}
	var setup *result.Phase
	var targets *runner.Targets
	if j.sc != nil {
		// One dialer per origin for the setup, the load and the teardown.
		var err error
		if targets, err = runner.NewTargets(ctx, j.sc, j.plan); err != nil {
			return nil, j.startError(err)
		}
		ro.Dialer = targets.Route(j.workload)
		if setup, err = j.setup(ctx, targets); err != nil {
			return nil, err
		}
	}
	res, err := run.Run(ctx, j.plan, ro)
	if err != nil {
		return nil, j.startError(err)
	}
	if j.sc != nil {
		j.sc.Annotate(res) // the pools as the load left them, before the teardown
		res.Hail.Setup, res.Hail.Teardown = setup, j.teardown(ctx, targets)
	}
	failed := 0
	if len(j.thresholds) > 0 {
		failed = threshold.Evaluate(j.thresholds, res)
	}
	if j.llm != nil {
		j.llm.Describe(res)
	}
	if j.grpcName != "" {
		if res.Hail.GRPC == nil {
			res.Hail.GRPC = &result.GRPCStats{}
		}
		res.Hail.GRPC.Call, res.Hail.GRPC.Kind = j.grpcName, j.grpcKind
	}
	return res, j.outcome(res, failed)
}

// setup runs a scenario's setup; when a step fails, the teardown cleans
// up what it made and the error says which step and why.
func (j *job) setup(ctx context.Context, t *runner.Targets) (*result.Phase, error) {
	if len(j.sc.Setup) == 0 {
		return nil, nil
	}
	ph, err := runner.Setup(ctx, j.sc, t, runner.PhaseOptions{Interrupt: ctx.Done()})
	var pe *runner.PhaseError
	if errors.As(err, &pe) {
		se := &SetupError{Step: pe.Step, Reason: pe.Why}
		se.Setup, se.Teardown = ph, j.teardown(ctx, t)
		return nil, se
	}
	if err != nil {
		return nil, j.startError(err)
	}
	return ph, nil
}

// teardown runs a scenario's teardown: after a cancelled load too, to
// clean up; a cancellation during it stops it (unless the load's was).
func (j *job) teardown(ctx context.Context, t *runner.Targets) *result.Phase {
	if len(j.sc.Teardown) == 0 {
		return nil
	}
	interrupt := ctx.Done()
	if ctx.Err() != nil {
		ctx, interrupt = context.WithoutCancel(ctx), nil
	}
	ph, err := runner.Teardown(ctx, j.sc, t, runner.PhaseOptions{Interrupt: interrupt})
	if err != nil && ph == nil {
		ph = &result.Phase{Failed: "the teardown could not run: " + err.Error()}
	}
	return ph
}

// startError is an error that kept a run from starting, in the API's
// words: a name that does not resolve is an *UnreachableError.
func (j *job) startError(err error) error {
	if unreachable(err) {
		return &UnreachableError{Addr: j.plan.URL.Host, Reason: apiWords(err).Error()}
	}
	return apiWords(err)
}

// outcome is how a finished run went, as Run's error.
func (j *job) outcome(res *Result, failed int) error {
	c := res.Hail.Counts
	if why := report.Failure(res); why != "" {
		if c.Sent == 0 && c.NotSent > 0 {
			addr := j.plan.URL.Host
			if j.plan.UnixSocket != "" {
				addr = j.plan.UnixSocket
			}
			return &UnreachableError{Addr: addr, NotSent: c.NotSent, Errors: res.ErrorDistribution, Reason: why}
		}
		return &NoSuccessError{Reason: why}
	}
	if failed > 0 || res.Hail.StoppedBy != "" {
		e := &ThresholdError{Total: len(res.Hail.Thresholds), StoppedBy: res.Hail.StoppedBy}
		for _, t := range res.Hail.Thresholds {
			if !t.Pass {
				e.Failed = append(e.Failed, t)
			}
		}
		return e
	}
	return nil
}
