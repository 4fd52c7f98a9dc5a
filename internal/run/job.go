package run

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/transport"
)

// setup is what one run is made of, built from the plan before anything is
// sent: the engine and why it was chosen, the dialer, the recorders (one
// group per step and stage slot) and the engine's job, minus its start
// time.
type setup struct {
	whole, share *plan.Plan // the plan, and this shard's part of it
	woke         time.Time  // when the run began (after its start time, if any)
	eng          engine.Engine
	reason       string
	dialer       *transport.Dialer
	steps        []string
	groups       [][]*stats.Recorder // per step and stage slot: groups[slot*len(steps)+step]
	stages       *schedule.StageClock
	pacer        schedule.Pacer // nil: closed model
	job          *engine.Job
	target       *targetProc // the target's processes, if known
	// legs are a run's origins when it sends to several, each with its own
	// plan, engine, dialer and job over the run's recorders and stage clock
	// (origins.go); the fields above are then the run's (the first leg's
	// engine, dialer and job).
	legs     []*setup
	name     string          // a leg's origin
	split    *schedule.Split // how a run with legs deals its requests (and, open model, its connections)
	conns    *connShare      // how a closed-model run with legs deals its connections
	lastTick time.Duration   // when conns was last rebalanced
	ramp     *schedule.Ramp  // a closed-model run's connections over time
}

// build makes the run's setup, with its target's processes. Its errors
// are phrased for the user.
func build(ctx context.Context, whole *plan.Plan, o Options) (*setup, error) {
	var s *setup
	var err error
	if o.Workload != nil && len(o.Workload.Origins) > 0 {
		s, err = buildOrigins(ctx, whole, o)
	} else {
		s, err = buildWith(ctx, whole, o, nil, nil)
	}
	if err != nil {
		return nil, err
	}
	if s.target, err = findTarget(o, s.dialers()); err != nil {
		return nil, err
	}
	return s, nil
}

// buildWith makes a run's setup or, given the run's groups of recorders
// (per step and stage slot, as a leg sees them: legGroups) and its stage
// clock, one leg's. A run's own groups (nil) are one per step and stage
// slot of the workload's stages.
func buildWith(ctx context.Context, whole *plan.Plan, o Options, groups [][]*stats.Recorder, stages *schedule.StageClock) (*setup, error) {
	p := ShardShare(whole)
	eng, reason, err := o.Engine, "the caller's engine (run.Options.Engine)", error(nil)
	if eng == nil {
		eng, reason, err = Select(p)
	}
	if err != nil {
		return nil, err
	}
	var dialer *transport.Dialer
	if o.Dialer != nil {
		dialer = o.Dialer.Clone() // the run counts (and resumes) its own handshakes
	} else if dialer, err = NewDialer(ctx, p); err != nil {
		return nil, err
	}
	s := &setup{whole: whole, share: p, eng: eng, reason: reason, dialer: dialer, steps: []string{""}}
	w := o.Workload
	if w != nil && len(w.Steps) > 0 {
		s.steps = w.Steps
	}
	if groups == nil {
		if w != nil && len(w.Stages) > 0 {
			stages = schedule.NewStageClock(w.Stages, p.Duration)
		}
		groups = recorders(p.Connections, len(s.steps), slotsOf(stages), o.Tracer)
	}
	s.groups, s.stages = groups, stages
	s.pacer = shardPacer(whole, pacerOf(p, w))
	s.job = &engine.Job{
		Source: schedule.NewSource(s.pacer, p.Requests, p.Duration),
		Steps:  s.steps, Recorders: s.groups, Stages: s.stages, Connections: p.Connections, URL: p.URL,
		Dialer: dialer, Timeout: p.Timeout, KeepAlive: p.KeepAlive, Pacing: p.Pacing(),
		MaxRedirects: p.MaxRedirects, MaxHeaderBytes: 64 << 10,
		RedirectDialer: func(u *url.URL) (*transport.Dialer, error) {
			opt, err := p.TransportOptions(u)
			if err != nil {
				return nil, err
			}
			return transport.NewDialer(context.Background(), opt)
		},
	}
	s.job.Stream = streamConfig(p, w)
	if w != nil {
		s.job.NewRequests, s.job.BodyLimit, s.job.CaptureHeaders, s.job.PerConnection =
			w.NewRequests, w.BodyLimit, w.CaptureHeaders, w.PerConnection
		if w.Connections != nil {
			s.job.Source.SetConnections(ShardRamp(*w.Connections, whole.ShardCount))
		}
	}
	if s.job.NewRequests == nil {
		s.job.NewRequests = staticRequests(p)
	}
	return s, nil
}

// streamConfig is how the run measures streaming responses: the plan's
// --sse, --idle-timeout and --stream-drain over the workload's own
// settings (hail llm's tokens), if any.
func streamConfig(p *plan.Plan, w *Workload) *stream.Config {
	c := &stream.Config{}
	if w != nil && w.Stream != nil {
		c = &stream.Config{Tokens: w.Stream.Tokens, MaxEvent: w.Stream.MaxEvent, SLO: w.Stream.SLO, Expect: w.Stream.Expect, Steps: w.Stream.Steps}
	}
	c.All, c.Idle, c.Drain = p.SSE, p.Idle(), p.Drain()
	return c
}

// NewDialer builds the dialer of p's target: its TLS configuration (the
// files it names read once) and, unless --no-pre-lookup, its addresses.
// Runs of one target may share it (Options.Dialer). Its errors are phrased
// for the user.
func NewDialer(ctx context.Context, p *plan.Plan) (*transport.Dialer, error) {
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return nil, err
	}
	dialer, err := transport.NewDialer(ctx, topt)
	if _, ok := err.(*transport.SocketPathError); ok {
		return nil, err // it names the flag and the path
	}
	if err != nil {
		return nil, fmt.Errorf("%w: check the URL's host name or use --connect-to", err)
	}
	return dialer, nil
}

// maxStageRecorders bounds the recorders of a run with stages: only one
// stage slot records at a time (two at a boundary), so the recorders of
// the others cost memory (a Recorder holds ~1.6 MB of histograms, mostly
// never touched) and the collector's time, not contention.
const maxStageRecorders = 64

// slotsOf is how many stage slots a run has: one without stages.
func slotsOf(c *schedule.StageClock) int {
	if c == nil {
		return 1
	}
	return c.Slots()
}

// recorders makes one group of recorders per step and stage slot
// (groups[slot*steps+step]): min(connections, 2 × cores) each, fewer per
// step when there are many steps (a Recorder holds ~1 MB of histograms),
// and fewer when the stage slots would make them more than
// maxStageRecorders. A tracer, if any, is attached to all.
func recorders(connections, steps, slots int, tr *stats.Tracer) [][]*stats.Recorder {
	n := min(connections, 2*stats.Cores())
	if steps > 4 {
		n = max(1, n*4/steps)
	}
	if slots > 1 {
		n = max(1, min(n, maxStageRecorders/(steps*slots)))
	}
	groups := make([][]*stats.Recorder, steps*slots)
	for g := range groups {
		groups[g] = make([]*stats.Recorder, n)
		for i := range groups[g] {
			groups[g][i] = stats.NewRecorder()
			if tr != nil {
				tr.Attach(groups[g][i])
			}
		}
	}
	return groups
}

// OpenModel reports whether a run of p with w (nil: the plan's own
// requests) paces its requests, the open model: a workload's rate stages,
// -q, or bursts. Reports, the request log and the live view name the model
// from it.
func OpenModel(p *plan.Plan, w *Workload) bool { return pacerOf(p, w) != nil }

// pacerOf is the open model's schedule: a workload's rate stages, -q, or
// bursts; nil for the closed model.
func pacerOf(p *plan.Plan, w *Workload) schedule.Pacer {
	switch {
	case w != nil && w.Pacer != nil:
		return w.Pacer
	case p.Rate > 0:
		return schedule.Rate{PerSecond: p.Rate}
	case p.BurstEvery > 0:
		return schedule.Burst{Every: p.BurstEvery, Size: max(p.BurstSize, 1)}
	}
	return nil
}

// staticRequests serves the plan's own request variants, encoded once. A
// body of engine.SplitAt or more is not copied into its variant: the
// variant is its head, and the body is shared (engine.SharedBody).
func staticRequests(p *plan.Plan) func(int) engine.Requests {
	specs := p.Specs()
	reqs := make([][]byte, len(specs))
	var bodies [][]byte
	for i := range specs {
		if len(specs[i].Body) < engine.SplitAt {
			reqs[i] = http1.AppendRequest(nil, &specs[i])
			continue
		}
		if bodies == nil {
			bodies = make([][]byte, len(specs))
		}
		reqs[i], bodies[i] = http1.AppendHead(nil, &specs[i]), specs[i].Body
	}
	static := &engine.Static{Variants: reqs, Bodies: bodies, Head: specs[0].Method == "HEAD"}
	return func(int) engine.Requests { return static }
}

// intended is how many requests the open model's schedule held before end
// (the elapsed time at which the run stopped sending), within the -n
// limit: every one of them ended as sent or unsent.
func intended(pacer schedule.Pacer, limit uint64, end time.Duration) uint64 {
	hi := limit
	if hi == 0 {
		hi = 1 << 62
	}
	// The first request number whose intended time is at or after end.
	lo := uint64(0)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if at, stop := pacer.Pace(mid); !stop && at < end {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
