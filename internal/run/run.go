// Package run carries out one load test: it builds the engine's job from a
// plan, runs the engine under the run's deadline and signals, collects the
// measurements, and returns the Result. Nothing measured is lost: an
// interrupted or aborted run still returns a complete Result.
package run

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"hail/internal/engine"
	"hail/internal/http1"
	"hail/internal/plan"
	"hail/internal/report"
	"hail/internal/schedule"
	"hail/internal/stats"
	"hail/internal/transport"
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
}

// Workload replaces the plan's request with a set of steps: a scenario
// file's, or a list of URLs (--urls-from-file, --rand-regex-url). The plan
// still gives the target, connections, duration and transport.
type Workload struct {
	// Steps name the steps (Job.Steps); one "" for a single unnamed step.
	// A run with named steps reports each in Result.Hail.Steps.
	Steps []string
	// NewRequests returns a worker's request builder (Job.NewRequests).
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
	// Check, if set, is called after every collector tick; a non-empty
	// reason stops the run at once (a threshold with abort_on_fail) and is
	// reported as Result.Hail.StoppedBy.
	Check func(*stats.Collector) string
}

// DefaultGrace bounds how long -w waits for in-flight requests when no
// request timeout (-t) is set, so a server that never answers cannot hang hail.
const DefaultGrace = 30 * time.Second

// Run executes p and returns its Result. An error means the run could not
// start (bad target, engine unavailable); it is phrased for the user.
func Run(ctx context.Context, p *plan.Plan, o Options) (*report.Result, error) {
	whole := p
	p = ShardShare(p)
	eng, reason, err := Select(p)
	if err != nil {
		return nil, err
	}
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return nil, err
	}
	dialer, err := transport.NewDialer(ctx, topt)
	if _, ok := err.(*transport.SocketPathError); ok {
		return nil, err // it names the flag and the path
	}
	if err != nil {
		return nil, fmt.Errorf("%v: check the URL's host name or use --connect-to", err)
	}
	specs := p.Specs()
	reqs := make([][]byte, len(specs))
	for i := range specs {
		reqs[i] = http1.AppendRequest(nil, &specs[i])
	}
	nrec := min(p.Connections, 2*stats.Cores())
	w := o.Workload
	steps := []string{""}
	if w != nil {
		steps = w.Steps
		if len(steps) > 4 { // each Recorder holds ~1 MB of histograms
			nrec = max(1, nrec*4/len(steps))
		}
	}
	groups := make([][]*stats.Recorder, len(steps))
	for g := range groups {
		groups[g] = make([]*stats.Recorder, nrec)
		for i := range groups[g] {
			groups[g][i] = stats.NewRecorder()
			if o.Tracer != nil {
				o.Tracer.Attach(groups[g][i])
			}
		}
	}
	static := &engine.Static{Variants: reqs, Head: specs[0].Method == "HEAD"}
	newRequests := func(int) engine.Requests { return static }
	bodyLimit := 0
	if w != nil {
		newRequests, bodyLimit = w.NewRequests, w.BodyLimit
	}
	var pacer schedule.Pacer
	switch {
	case p.Rate > 0:
		pacer = schedule.Rate{PerSecond: p.Rate}
	case p.BurstEvery > 0:
		pacer = schedule.Burst{Every: p.BurstEvery, Size: max(p.BurstSize, 1)}
	}
	if w != nil && w.Pacer != nil {
		pacer = w.Pacer
	}
	pacer = shardPacer(whole, pacer)
	stop := make(chan struct{})
	abort := make(chan struct{})
	if !waitStart(p.StartAt, o.Interrupt) {
		return nil, fmt.Errorf("interrupted while waiting for --start-at %s: nothing was sent", p.StartAt.Format(time.RFC3339))
	}
	start := time.Now()
	job := &engine.Job{
		Start: start, Source: schedule.NewSource(pacer, p.Requests, p.Duration),
		Steps: steps, Recorders: groups, NewRequests: newRequests, BodyLimit: bodyLimit, PerConnection: w != nil && w.PerConnection,
		Connections: p.Connections, Redirect: specs[0], URL: p.URL,
		Dialer: dialer, Timeout: p.Timeout, KeepAlive: p.KeepAlive && !p.HTTP10 || p.HTTP10 && p.KeepAlive,
		MaxRedirects: p.MaxRedirects, MaxHeaderBytes: 64 << 10, Stop: stop, Abort: abort,
		RedirectDialer: func(u *url.URL) (*transport.Dialer, error) {
			opt, err := p.TransportOptions(u)
			if err != nil {
				return nil, err
			}
			return transport.NewDialer(context.Background(), opt)
		},
	}
	if w != nil {
		job.CaptureHeaders = w.CaptureHeaders
	}
	if w != nil && w.Connections != nil {
		job.Source.SetConnections(ShardRamp(*w.Connections, whole.ShardCount))
	}
	coll := stats.NewStepCollector(groups, start)
	if o.OnSecond != nil {
		coll.OnSecond(o.OnSecond)
	}
	if o.Observe != nil {
		o.Observe(coll)
	}
	collStop := make(chan struct{})
	checkFailed := make(chan struct{}) // closed when the workload's Check says stop
	var stoppedBy string
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		var onTick func()
		if o.Progress != nil || w != nil && w.Check != nil {
			onTick = func() {
				if w != nil && w.Check != nil && stoppedBy == "" {
					if why := w.Check(coll); why != "" {
						stoppedBy = why
						close(checkFailed)
					}
				}
				if o.Progress != nil {
					o.Progress(coll.Snapshot())
				}
			}
		}
		coll.Run(collStop, onTick)
	}()

	// The deadline and interrupt controller.
	var interrupted bool
	var once sync.Once
	end := func(waitOngoing bool) {
		once.Do(func() {
			job.Source.Stop()
			close(stop)
			if !waitOngoing {
				job.MarkAborting()
				close(abort)
				return
			}
			grace := DefaultGrace
			if p.Timeout > 0 {
				grace = p.Timeout
			}
			// While in-flight requests settle, an interrupt aborts them
			// now, unless an interrupt is what started the settling.
			intr := o.Interrupt
			if interrupted {
				intr = nil
			}
			go func() {
				select {
				case <-time.After(grace):
					job.MarkAborting()
					close(abort)
				case <-intr:
					job.MarkAborting()
					close(abort)
				case <-collStop:
				}
			}()
		})
	}
	done := make(chan struct{})
	go func() {
		var deadline <-chan time.Time
		if p.Duration > 0 {
			t := time.NewTimer(p.Duration)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-deadline:
			end(p.WaitOngoing)
		case <-o.Interrupt:
			interrupted = true
			end(p.WaitOngoing)
		case <-checkFailed:
			end(false)
		case <-done:
		}
	}()

	if err := eng.Run(job); err != nil {
		close(done)
		close(collStop)
		bg.Wait()
		return nil, err
	}
	finish := time.Now()
	close(done)
	close(collStop)
	bg.Wait()
	totals := coll.Finish(finish)
	elapsed := finish.Sub(start)
	if p.Duration > 0 && !p.WaitOngoing && elapsed > p.Duration && !interrupted {
		elapsed = p.Duration
	}
	res := report.Build(report.Input{
		Totals: totals, Series: coll.Series(), Elapsed: elapsed, Usage: coll.Usage(), Cores: stats.Cores(),
		Engine: eng.Name(), EngineReason: reason, Open: pacer != nil, Rate: p.Rate, Start: start,
		Interrupted: interrupted, Config: o.Config, Version: plan.Version, SuccessSplit: o.SuccessBreakdown,
		Protocol: p.Protocol(), ALPN: dialer.TLSStats().ALPN, Transport: transportName(p, dialer), TLS: tlsCounts(dialer),
	})
	res.Hail.Shard = shardInfo(whole, p)
	if w != nil && (len(steps) > 1 || steps[0] != "") {
		coll.Steps(func(t []*stats.Totals, s [][]stats.Second) {
			if len(steps) == 1 { // one step: its series is the run's
				s = [][]stats.Second{res.Hail.Series}
			}
			res.Hail.Steps = report.BuildSteps(steps, t, s, elapsed)
		})
	}
	res.Hail.StoppedBy = stoppedBy
	return res, nil
}

// transportName is how the run's connections travelled, for the report.
func transportName(p *plan.Plan, d *transport.Dialer) string {
	if p.HTTPVersion == "3" {
		return "quic"
	}
	return d.Transport()
}

// tlsCounts are the run's TLS handshakes and resumptions; nil without TLS.
func tlsCounts(d *transport.Dialer) *report.TLSCounts {
	st := d.TLSStats()
	if st.Handshakes == 0 && d.Options().TLS == nil {
		return nil
	}
	return &report.TLSCounts{Handshakes: st.Handshakes, Resumptions: st.Resumptions}
}
