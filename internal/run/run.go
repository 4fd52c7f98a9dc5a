// Package run carries out one load test: it builds the engine's job from a
// plan, runs the engine under the run's deadline and signals, collects the
// measurements, and returns the Result. Nothing measured is lost: an
// interrupted or aborted run still returns a complete Result.
package run

import (
	"context"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/target"
	"github.com/hail-loadgen/hail/internal/transport"
	"github.com/hail-loadgen/hail/result"
)

// Options are the inputs of a run beyond its plan.
type Options struct {
	// Progress, if set, is called about once a second with the run so far.
	Progress func(stats.Snapshot)
	// Interrupt, when closed, ends the run early (Ctrl-C): no new request
	// starts, in-flight ones settle (-w) or are aborted.
	Interrupt <-chan struct{}
	// SuccessBreakdown adds 2xx / other latency breakdowns to the Result.
	SuccessBreakdown bool
	// Config is stored in the Result as the run's (redacted) configuration.
	Config map[string]any
	// Observe, if set, receives the collector as soon as the run starts (for live views).
	Observe func(*stats.Collector)
	// Tracer, if set, receives every request's TraceRecord (the per-request
	// log: --db-url, per-request CSV). The caller closes it after Run.
	Tracer *stats.Tracer
	// OnSecond, if set, fills extra fields of each per-second entry as it
	// closes (the target process's RSS and CPU).
	OnSecond func(*stats.Second)
	// Workload, if set, replaces the plan's single request with steps (a
	// scenario, or a list of URLs).
	Workload *Workload
	// Dialer, if set, is the plan's target's dialer (NewDialer), shared by
	// the runs of one scenario (setup, load, teardown): its TLS
	// configuration is built and its name looked up once. Each run counts
	// and resumes its own handshakes (transport.Dialer.Clone). Nil: Run
	// builds its own.
	Dialer *transport.Dialer
	// Engine, if set, runs the plan on this engine instead of the one
	// Select picks (the conformance suite, internal/enginetest, puts each
	// engine through the same runs this way).
	Engine engine.Engine
	// Target names the target's processes on this machine (--target-pid,
	// --target-cmd, --target-cgroup; hail demo's server): their memory and
	// CPU are sampled once a second into the report (Result.Hail.Target,
	// the series, each stage's figures), and their CPU on hail's CPUs is
	// the target's, never other processes', in the run's verdict and each
	// origin's. TargetSource says how it was known ("": the flags).
	Target       target.Spec
	TargetSource string
	// FindTarget, when Target is empty, looks for the processes listening
	// on the ports of the run's loopback targets (/proc; one per origin)
	// and takes them as Target.
	FindTarget bool
	// Gate, if set, is the start barrier of a shard (--start-at barrier):
	// called once the run is prepared, it returns when every shard is
	// ready, with the start time they agreed on (which replaces the plan's
	// StartAt); an error ends the run before anything is sent.
	Gate func(ctx context.Context, interrupt <-chan struct{}) (time.Time, error)
}

// Workload replaces the plan's request with a set of steps: a scenario
// file's, or a list of URLs (--urls-from-file, --rand-regex-url). The plan
// still gives the target, connections, duration and transport.
type Workload struct {
	// Steps name the steps (Job.Steps); one "" (or none) for a single
	// unnamed step. A run with named steps reports each in
	// Result.Hail.Steps.
	Steps []string
	// NewRequests returns a worker's request builder (Job.NewRequests);
	// nil sends the plan's own request (a plain URL with stages, or with
	// a Check).
	NewRequests func(worker int) engine.Requests
	// BodyLimit is how many response body bytes the builders need kept.
	BodyLimit int
	// CaptureHeaders are the response headers (lower case) the builders
	// capture (Job.CaptureHeaders).
	CaptureHeaders []string
	// PerConnection makes engines build one builder per connection
	// (Job.PerConnection): flows keep per-virtual-user state.
	PerConnection bool
	// Pacer, if set, schedules the requests (open model with ramped rate
	// stages) in place of the plan's -q.
	Pacer schedule.Pacer
	// Connections, if set, makes the number of active connections follow a
	// ramp (closed-model stages); the plan's Connections is its maximum.
	Connections *schedule.Ramp
	// Stages, if set, are the stages of the ramp (of Connections or of
	// Pacer's rate) that each get results of their own (Result.Hail.Stages):
	// a request belongs to the stage of its intended send time, and a
	// stage's warmup is left out of its figures.
	Stages []schedule.Stage
	// Ended, if set, is closed by the workload when it has nothing left to
	// send (a scenario's unique data feed is used up): the run then stops
	// sending and lets in-flight requests finish (within the -w grace).
	Ended <-chan struct{}
	// Check, if set, is called after every collector tick; a non-empty
	// reason stops the run at once (a threshold with abort_on_fail) and is
	// reported as Result.Hail.StoppedBy.
	Check func(*stats.Collector) string
	// Stream, if set, says how the workload's streams are read beyond what
	// the plan says (its All, Idle and Drain come from the plan): hail llm
	// reads tokens, with the lengths its requests ask for and objectives.
	Stream *stream.Config
	// Origins, if set, send the steps to several servers, one engine each,
	// under the one schedule, stages and controller (origins.go): each
	// origin's builders replace NewRequests, and its plan the run's URL
	// and protocol.
	Origins []Origin
}

// DefaultGrace bounds how long -w waits for in-flight requests when no
// request timeout (-t) is set, so a server that never answers cannot hang hail.
const DefaultGrace = 30 * time.Second

// Run executes p and returns its Result. An error means the run could not
// start (bad target, engine unavailable); it is phrased for the user.
// Cancelling ctx ends the run as an interrupt does: no new request starts,
// and the Result covers what was done.
func Run(ctx context.Context, p *plan.Plan, o Options) (*result.Result, error) {
	s, err := build(ctx, p, o)
	if err != nil {
		return nil, err
	}
	if o.Gate != nil {
		at, err := o.Gate(ctx, o.Interrupt)
		if err != nil {
			return nil, err
		}
		whole := *s.whole
		whole.StartAt = at
		s.whole = &whole
	}
	if !waitStart(ctx, s.whole.StartAt, o.Interrupt) {
		return nil, &StartInterruptedError{At: s.whole.StartAt}
	}
	woke := time.Now()
	start := woke
	if at := s.whole.StartAt; !at.IsZero() && woke.Sub(at) < report.LateStart {
		// The schedule starts at the agreed time, not at this process's
		// wake-up: shards that woke a moment apart keep one time origin
		// (their intended times and seconds line up exactly), and a late
		// wake-up shows as their own lateness. The monotonic reading is
		// kept (at, from a wall-clock time, has none).
		start = woke.Add(-woke.Sub(at))
	}
	s.woke = woke
	s.start(start)
	ctl := newController(s.jobs(), s.share.WaitOngoing, s.share.Timeout)
	select {
	case <-o.Interrupt: // stopped before the start (a signal during a scenario's setup): nothing is sent
		ctl.end(endInterrupt, false)
	case <-ctx.Done():
		ctl.end(endInterrupt, false)
	default:
	}
	col := startCollecting(s, o)
	var data <-chan struct{}
	if o.Workload != nil {
		data = o.Workload.Ended
	}
	go ctl.watch(ctx, s.share.Duration, o.Interrupt, col.stopRun, data)
	err = s.runEngines(ctl)
	finish := time.Now()
	ctl.finished()
	col.stop()
	if err != nil {
		return nil, err
	}
	return s.result(col, ctl, finish, o), nil
}

// collecting is the collector of a run and the goroutine that drives it.
type collecting struct {
	coll      *stats.Collector
	stopRun   chan struct{} // closed when the workload's Check says stop
	stoppedBy string        // the Check's reason; read after stop
	quit      chan struct{}
	wg        sync.WaitGroup
}

// startCollecting drains the recorders once a second, calling the
// workload's Check and the progress callback after every tick.
func startCollecting(s *setup, o Options) *collecting {
	c := &collecting{coll: stats.NewStageCollector(s.groups, len(s.steps), s.job.Start), stopRun: make(chan struct{}), quit: make(chan struct{})}
	switch on, t := o.OnSecond, s.target; {
	case t != nil && on != nil:
		c.coll.OnSecond(func(sec *stats.Second) { t.fill(sec); on(sec) })
	case t != nil:
		c.coll.OnSecond(t.fill)
	case on != nil:
		c.coll.OnSecond(on)
	}
	if o.Observe != nil {
		o.Observe(c.coll)
	}
	w := o.Workload
	var onTick func()
	if o.Progress != nil || w != nil && w.Check != nil || s.conns != nil {
		onTick = func() {
			s.rebalance(c.coll) // origins.go: a closed-model run's connections among its origins
			if w != nil && w.Check != nil && c.stoppedBy == "" {
				if why := w.Check(c.coll); why != "" {
					c.stoppedBy = why
					close(c.stopRun)
				}
			}
			if o.Progress != nil {
				o.Progress(c.coll.Snapshot())
			}
		}
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.coll.Run(c.quit, onTick)
	}()
	return c
}

// stop ends the collector's goroutine and waits for it.
func (c *collecting) stop() {
	close(c.quit)
	c.wg.Wait()
}

// result builds the run's Result from what was collected.
func (s *setup) result(col *collecting, ctl *controller, finish time.Time, o Options) *result.Result {
	p := s.share
	totals := col.coll.Finish(finish)
	elapsed := finish.Sub(s.job.Start) // as oha: the time the run took, not the nominal -z
	why, stoppedAt := ctl.ending(elapsed)
	counts := report.Intent{Sent: totals.Sent(), Unsent: totals.Unsent, Skipped: totals.Skipped, Reason: why}
	counts.Intended = totals.Requests() + counts.Unsent + counts.Skipped
	if s.pacer != nil {
		end := stoppedAt
		if p.Duration > 0 { // nothing is intended at or after -z
			end = min(end, p.Duration)
		}
		counts.Intended = max(counts.Intended, int64(intended(s.pacer, p.Requests, end)))
	}
	machine := col.coll.Machine()
	var tgt *result.TargetUse
	if s.target != nil {
		tgt, machine = s.target.summary(elapsed, machine)
	}
	in := report.Input{
		Totals: totals, Series: col.coll.Series(), Elapsed: elapsed, Usage: col.coll.Usage(), Cores: stats.Cores(),
		Engine: s.eng.Name(), EngineReason: s.reason, Open: s.pacer != nil, Rate: p.Rate, Start: s.job.Start,
		Interrupted: why == endInterrupt, Config: o.Config, Version: plan.Version, SuccessSplit: o.SuccessBreakdown,
		Protocol: p.Protocol(), ALPN: s.dialer.TLSStats().ALPN, Transport: transportName(p, s.dialer), TLS: tlsCounts(s.dialer),
		Intent: counts, Machine: machine, Connections: p.Connections, Wait: ctl.drained(), Stopped: stoppedIf(why, stoppedAt),
		Addr: s.addr(), Target: tgt, Mismatch: s.mismatch(),
	}
	res := report.Build(in)
	res.Hail.Shard = shardInfo(s.whole, p, s.woke)
	res.Hail.Generator.Machine, res.Hail.Generator.MachineCPUs = stats.BootID(), stats.BootCPUs()
	if o.Workload != nil && (len(s.steps) > 1 || s.steps[0] != "") {
		col.coll.Steps(func(t []*stats.Totals, ser [][]stats.Second) {
			if len(s.steps) == 1 { // one step: its series is the run's
				ser = [][]stats.Second{res.Hail.Series}
			}
			res.Hail.Steps = report.BuildSteps(s.steps, t, ser, elapsed)
		})
	}
	if s.stages != nil {
		// The stages' requests were all taken by stoppedAt; an open-model
		// schedule that ran out by itself (not at -n) covered its stages
		// to their end, however early the last response came.
		sent := stoppedAt
		if why == endDone && s.pacer != nil && (p.Requests == 0 || counts.Intended < int64(p.Requests)) {
			sent = max(sent, p.Duration)
		}
		col.coll.Stages(func(t []*stats.Totals) {
			res.Hail.Stages = report.BuildStages(report.StageInput{Clock: s.stages, Kind: stageKind(o.Workload), Totals: t,
				Series: res.Hail.Series, Stopped: sent})
		})
	}
	res.Hail.StoppedBy = col.stoppedBy
	if m := &s.job.Messages; m.Calls.Load() > 0 {
		res.Hail.GRPC = &result.GRPCStats{Calls: m.Calls.Load(), Retries: m.Retries.Load(), MessagesSent: m.Sent.Load(), MessagesReceived: m.Received.Load()}
	}
	if s.legs != nil {
		s.originResults(res, col, in, o)
	}
	return res
}

// stageKind is what a workload's stages ramp: "connections" or "rate".
func stageKind(w *Workload) string {
	if w.Connections != nil {
		return "connections"
	}
	return "rate"
}

// stoppedIf is when the run stopped sending, or 0 when nothing stopped it.
func stoppedIf(why string, at time.Duration) time.Duration {
	if why == endDone {
		return 0
	}
	return at
}

// transportName is how the run's connections travelled, for the report.
func transportName(p *plan.Plan, d *transport.Dialer) string {
	if p.HTTPVersion == plan.HTTP3 {
		return "quic"
	}
	return d.Transport()
}

// tlsCounts are the run's TLS handshakes and resumptions; nil without TLS.
func tlsCounts(d *transport.Dialer) *result.TLSCounts {
	st := d.TLSStats()
	if st.Handshakes == 0 && d.Options().TLS == nil {
		return nil
	}
	return &result.TLSCounts{Handshakes: st.Handshakes, Resumptions: st.Resumptions}
}

// certNames is the dialer's first certificate issued for other names than
// the one checked, for the report's hint; nil when none was met.
func certNames(d *transport.Dialer) *report.CertNames {
	if m := d.Mismatch(); m != nil {
		return &report.CertNames{Host: m.Host, Names: m.Names}
	}
	return nil
}
