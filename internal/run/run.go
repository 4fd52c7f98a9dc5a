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
}

// DefaultGrace bounds how long -w waits for in-flight requests when no
// request timeout (-t) is set, so a server that never answers cannot hang hail.
const DefaultGrace = 30 * time.Second

// Run executes p and returns its Result. An error means the run could not
// start (bad target, engine unavailable); it is phrased for the user.
func Run(ctx context.Context, p *plan.Plan, o Options) (*report.Result, error) {
	eng, reason, err := Select(p)
	if err != nil {
		return nil, err
	}
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return nil, err
	}
	dialer, err := transport.NewDialer(ctx, topt)
	if err != nil {
		return nil, fmt.Errorf("%v: check the URL's host name or use --connect-to", err)
	}
	specs := p.Specs()
	reqs := make([][]byte, len(specs))
	for i := range specs {
		reqs[i] = http1.AppendRequest(nil, &specs[i])
	}
	nrec := min(p.Connections, 4*stats.Cores())
	recs := make([]*stats.Recorder, nrec)
	for i := range recs {
		recs[i] = stats.NewRecorder()
	}
	static := &engine.Static{Variants: reqs, Head: specs[0].Method == "HEAD"}
	var pacer schedule.Pacer
	switch {
	case p.Rate > 0:
		pacer = schedule.Rate{PerSecond: p.Rate}
	case p.BurstEvery > 0:
		pacer = schedule.Burst{Every: p.BurstEvery, Size: max(p.BurstSize, 1)}
	}
	stop := make(chan struct{})
	abort := make(chan struct{})
	start := time.Now()
	job := &engine.Job{
		Start: start, Source: schedule.NewSource(pacer, p.Requests, p.Duration),
		Steps: []string{""}, Recorders: [][]*stats.Recorder{recs}, NewRequests: func(int) engine.Requests { return static },
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
	coll := stats.NewCollector(recs, start)
	if o.Observe != nil {
		o.Observe(coll)
	}
	collStop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		var onTick func()
		if o.Progress != nil {
			onTick = func() { o.Progress(coll.Snapshot()) }
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
			go func() {
				select {
				case <-time.After(grace):
					job.MarkAborting()
					close(abort)
				case <-o.Interrupt:
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
	return report.Build(report.Input{
		Totals: totals, Series: coll.Series(), Elapsed: elapsed, Usage: coll.Usage(), Cores: stats.Cores(),
		Engine: eng.Name(), EngineReason: reason, Open: p.Open(), Rate: p.Rate, Start: start,
		Interrupted: interrupted, Config: o.Config, Version: plan.Version, SuccessSplit: o.SuccessBreakdown,
	}), nil
}
