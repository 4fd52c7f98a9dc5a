package run

// A run that sends to several servers: one leg per origin, each a job on
// the engine its protocol needs (HTTP/1.1 on net or uring, HTTP/2 on h2),
// all under one schedule, one controller and one collector.
//
// The schedule is dealt among the legs in proportion to each origin's
// Share. In the open model a schedule.Split deals the run's request numbers
// (and their intended times), interleaved, so the legs together send
// exactly the run's schedule, and its connections (each origin's pool). In
// the closed model a stage's count of connections is the total over all
// origins, dealt as virtual users would share their time (connshare.go),
// so that the mix of requests across origins follows the weights there
// too. A request limit (-n) is dealt by the Split in both. Each leg
// is built as a run of its own (buildWith) over the run's recorders and
// stage clock (a request records in its origin's step and its stage's
// slot), so the collector, the live view, thresholds, the per-step and
// per-stage results and the -w drain see one run; the target's processes
// are the run's. Result.Hail.Origins adds each origin's own counts,
// rates, latency and verdict.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
	"github.com/hail-loadgen/hail/result"
)

// Origin is one server of a workload that sends to several (a scenario
// whose steps name their targets).
type Origin struct {
	// Name names it in reports ("api", "rpc").
	Name string
	// Plan gives its URL, protocol and transport; the run's plan gives the
	// length, model, connections, requests and rate, which the run deals
	// among the origins by Share.
	Plan *plan.Plan
	// Steps are the indices in Workload.Steps of the steps it serves.
	Steps []int
	// Share is its part of the requests and connections (the weights of
	// its steps over all); the shares need not sum to 1.
	Share float64
	// NewRequests returns a worker's request builder: it builds only the
	// origin's steps, and returns their indices in Workload.Steps.
	NewRequests func(worker int) engine.Requests
	// BodyLimit, CaptureHeaders and PerConnection are Workload's, for its
	// steps.
	BodyLimit      int
	CaptureHeaders []string
	PerConnection  bool
	// Dialer, if set, is its plan's dialer (NewDialer), shared by the runs
	// of one scenario (setup, load, teardown).
	Dialer *transport.Dialer
}

// buildOrigins makes the setup of a run with several origins: a leg per
// origin over the run's recorders.
func buildOrigins(ctx context.Context, whole *plan.Plan, o Options) (*setup, error) {
	w := o.Workload
	p := ShardShare(whole)
	s := &setup{whole: whole, share: p, steps: w.Steps}
	if len(w.Stages) > 0 {
		s.stages = schedule.NewStageClock(w.Stages, p.Duration)
	}
	s.groups = recorders(p.Connections, len(s.steps), slotsOf(s.stages), o.Tracer)
	weights := make([]float64, len(w.Origins))
	for k, org := range w.Origins {
		weights[k] = org.Share
	}
	s.split = schedule.NewSplit(weights)
	global := pacerOf(whole, w)
	s.pacer = shardPacer(whole, global)
	ramp := w.Connections
	if global == nil {
		steps := make([][]int, len(w.Origins))
		for k := range w.Origins {
			steps[k] = w.Origins[k].Steps
		}
		s.conns = newConnShare(weights, steps)
		if ramp == nil {
			ramp = &schedule.Ramp{Start: float64(whole.Connections)}
		}
		r := ShardRamp(*ramp, whole.ShardCount)
		s.ramp = &r
	}
	for k := range w.Origins {
		org := &w.Origins[k]
		lp := *org.Plan
		lp.Connections = int(s.split.Count(k, uint64(whole.Connections)))
		if s.conns != nil { // any of the run's connections but one per other origin
			lp.Connections = whole.Connections - (len(w.Origins)-1)*max(1, whole.ShardCount)
		}
		if lp.Connections < max(1, whole.ShardCount) {
			return nil, fmt.Errorf("%d connections are too few for %d targets: target %s gets none; give -c of at least %d", whole.Connections, len(w.Origins), org.Name, minConnections(s.split, k, max(1, whole.ShardCount)))
		}
		if whole.Requests > 0 {
			lp.Requests = s.split.Count(k, whole.Requests)
			if lp.Requests < uint64(max(1, whole.ShardCount)) {
				continue // its share of -n is nothing: the leg never sends
			}
		}
		lp.Rate, lp.BurstEvery, lp.BurstSize = 0, 0, 0
		if lp.HTTPVersion != plan.HTTP1 { // --engine and --sqpoll choose the HTTP/1.1 origins' engine
			lp.Engine, lp.SQPoll = plan.EngineAuto, false
		}
		newRequests := org.NewRequests
		if s.conns != nil {
			pause, every := &s.conns.pause[k], &s.conns.every[k]
			newRequests = func(worker int) engine.Requests {
				return newPaced(org.NewRequests(worker), pause, every)
			}
		}
		lw := &Workload{Steps: w.Steps, NewRequests: newRequests, BodyLimit: org.BodyLimit,
			CaptureHeaders: org.CaptureHeaders, PerConnection: org.PerConnection, Connections: ramp}
		if global != nil {
			lw.Pacer = s.split.Pacer(global, k)
		}
		lo := o
		lo.Workload, lo.Dialer, lo.Engine = lw, org.Dialer, nil
		leg, err := buildWith(ctx, &lp, lo, legGroups(s.groups, len(s.steps), org.Steps), s.stages)
		if err != nil {
			return nil, fmt.Errorf("target %s: %v", org.Name, err)
		}
		if s.conns != nil {
			leg.job.Source.SplitConnections(func(total int) int { return s.conns.part(k, total) })
		}
		leg.name = org.Name
		s.legs = append(s.legs, leg)
	}
	if len(s.legs) == 0 {
		return nil, errors.New("no target has a request to send: raise -n")
	}
	// One stream configuration for every leg: the run's --sse, idle timeout
	// and drain, and one count of the streams in progress, which the
	// controller's drain at -z reads (controller.watch).
	stream := streamConfig(p, w)
	for _, leg := range s.legs {
		leg.job.Stream = stream
	}
	first := s.legs[0]
	s.eng, s.reason, s.dialer, s.job = first.eng, first.reason, first.dialer, first.job
	return s, nil
}

// rebalance re-deals a closed-model run's connections among its origins
// by their latencies (connShare), once a collector tick.
func (s *setup) rebalance(c *stats.Collector) {
	if s.conns == nil {
		return
	}
	now := s.job.Since()
	active := int(math.Floor(s.ramp.At(now) + 1e-9))
	dt := now - s.lastTick
	s.lastTick = now
	c.Steps(func(totals []*stats.Totals, _ [][]stats.Second) { s.conns.rebalance(totals, active, dt) })
}

// minConnections is the run's connections at which part k gets n.
func minConnections(s *schedule.Split, k, n int) uint64 {
	c := uint64(n)
	for s.Count(k, c) < uint64(n) {
		c++
	}
	return c
}

// legGroups are the recorders of a leg that serves steps, out of the
// run's groups (per stage slot and step: groups[slot*n+step], n steps):
// in each slot, each of its steps' own, and for the steps it does not
// serve its first step's (its engine records connection setups under
// step 0: they stay the origin's). A request so records in its origin's
// step and its stage's slot.
func legGroups(groups [][]*stats.Recorder, n int, steps []int) [][]*stats.Recorder {
	out := make([][]*stats.Recorder, len(groups))
	for slot := 0; slot < len(groups)/n; slot++ {
		base := slot * n
		for i := range n {
			out[base+i] = groups[base+steps[0]]
		}
		for _, st := range steps {
			out[base+st] = groups[base+st]
		}
	}
	return out
}

// jobs are the run's jobs: one, or one per origin.
func (s *setup) jobs() []*engine.Job {
	if s.legs == nil {
		return []*engine.Job{s.job}
	}
	out := make([]*engine.Job, len(s.legs))
	for i, leg := range s.legs {
		out[i] = leg.job
	}
	return out
}

// start sets every job's time zero.
func (s *setup) start(t time.Time) {
	for _, j := range s.jobs() {
		j.Start = t
	}
}

// runEngines runs the run's engine, or every origin's at once; an origin
// whose engine cannot run ends the others, and its error is the run's.
func (s *setup) runEngines(ctl *controller) error {
	if s.legs == nil {
		return s.eng.Run(s.job)
	}
	errs := make([]error, len(s.legs))
	var wg sync.WaitGroup
	for i, leg := range s.legs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := leg.eng.Run(leg.job); err != nil {
				errs[i] = fmt.Errorf("target %s: %v", leg.name, err)
				ctl.end(endInterrupt, false)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// originResults completes the Result of a run with legs: what the run's
// engines, protocols and transports were, its gRPC calls, and each
// origin's own counts, rates, latency and verdict (Result.Hail.Origins).
// in is what the run's Result was built from.
func (s *setup) originResults(res *result.Result, col *collecting, in report.Input, o Options) {
	h := &res.Hail
	var engines, reasons, protocols, transports, alpns []string
	var tls *result.TLSCounts
	var calls, retries, sent, received int64
	add := func(list []string, v string) []string {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
		return list
	}
	for _, leg := range s.legs {
		engines = add(engines, leg.eng.Name())
		reasons = append(reasons, leg.name+": "+leg.reason)
		protocols = add(protocols, leg.share.Protocol())
		transports = add(transports, transportName(leg.share, leg.dialer))
		alpns = add(alpns, leg.dialer.TLSStats().ALPN)
		if t := tlsCounts(leg.dialer); t != nil {
			if tls == nil {
				tls = &result.TLSCounts{}
			}
			tls.Handshakes += t.Handshakes
			tls.Resumptions += t.Resumptions
		}
		m := &leg.job.Messages
		calls, retries = calls+m.Calls.Load(), retries+m.Retries.Load()
		sent, received = sent+m.Sent.Load(), received+m.Received.Load()
	}
	h.Engine, h.EngineReason = strings.Join(engines, "+"), strings.Join(reasons, "; ")
	h.Protocol, h.Transport, h.ALPN, h.TLS = strings.Join(protocols, "+"), strings.Join(transports, "+"), strings.Join(alpns, "+"), tls
	h.GRPC = nil
	if calls > 0 {
		h.GRPC = &result.GRPCStats{Calls: calls, Retries: retries, MessagesSent: sent, MessagesReceived: received}
	}
	w := o.Workload
	var sum float64
	for _, org := range w.Origins {
		sum += org.Share
	}
	col.coll.Steps(func(totals []*stats.Totals, series [][]stats.Second) {
		var all int64
		for _, t := range totals {
			all += t.Requests()
		}
		for k := range w.Origins {
			org := &w.Origins[k]
			// What the origins share (the run's length, hail's CPU and the
			// machine's, the target's processes, the drain); the rest is
			// the origin's own.
			oin := report.Input{Elapsed: in.Elapsed, Usage: in.Usage, Machine: in.Machine, Cores: in.Cores, Interrupted: in.Interrupted,
				Version: in.Version, Stopped: in.Stopped, Wait: in.Wait, Target: in.Target, Rate: s.share.Rate * org.Share / sum}
			h.Origins = append(h.Origins, s.originResult(k, org, totals, series, all, in.Intent, oin))
		}
	})
}

// legOf is the leg of the origin called name (nil: it never sent).
func (s *setup) legOf(name string) *setup {
	for _, leg := range s.legs {
		if leg.name == name {
			return leg
		}
	}
	return nil
}

// originResult is origin k's part of the run: its steps' totals, summed,
// judged as a run of their own (report.Build: the verdict's rules see the
// origin's own counts, lateness and stalls beside hail's CPU over the
// run). in holds what all origins share.
func (s *setup) originResult(k int, org *Origin, totals []*stats.Totals, series [][]stats.Second, all int64, intent report.Intent, in report.Input) result.OriginResult {
	t := stats.NewTotals()
	var names []string
	for _, st := range org.Steps {
		t.Add(totals[st])
		names = append(names, s.steps[st])
	}
	out := result.OriginResult{Name: org.Name, URL: org.Plan.URL.String(), Steps: names, Protocol: org.Plan.Protocol()}
	if n := org.Plan.StreamsPerConn(); n > 1 {
		out.Streams = n
	}
	report.SetOriginTotals(&out, t, in.Elapsed)
	out.Connects = t.Connects
	if all > 0 {
		out.Share = float64(t.Requests()) / float64(all)
	}
	leg := s.legOf(org.Name)
	if leg == nil {
		out.Verdict = result.Verdict{Bottleneck: result.BottleneckNone, Reasons: []string{"nothing was sent to it: its share of -n was none"}}
		return out
	}
	out.Engine, out.Connections = leg.eng.Name(), leg.share.Connections
	if s.conns != nil {
		out.Connections = int(s.conns.most[k].Load())
	}
	in.Intent = report.Intent{Sent: t.Sent(), Unsent: t.Unsent, Skipped: t.Skipped, Reason: intent.Reason}
	in.Intent.Intended = t.Requests() + in.Intent.Unsent + in.Intent.Skipped
	if leg.pacer != nil {
		// The run's intended requests, dealt as its schedule deals them.
		in.Intent.Intended = max(in.Intent.Intended, int64(s.split.Count(k, uint64(intent.Intended))))
	}
	in.Totals, in.Series, in.Engine, in.Open, in.Start = t, originSeries(org.Steps, series), leg.eng.Name(), leg.pacer != nil, leg.job.Start
	// Its connections as the verdict weighs them (the target's service
	// time over them): its pool, or in the closed model the most it held.
	in.Connections, in.Protocol = out.Connections, leg.share.Protocol()
	in.Addr, in.Mismatch = leg.dialer.Target(), certNames(leg.dialer)
	sub := report.Build(in)
	out.Counts.Intended, out.Counts.Unsent = sub.Hail.Counts.Intended, sub.Hail.Counts.Unsent
	out.SendDelay, out.Verdict = sub.Hail.SendDelay, sub.Hail.Verdict
	if m := &leg.job.Messages; m.Calls.Load() > 0 {
		out.GRPC = &result.GRPCStats{Calls: m.Calls.Load(), Retries: m.Retries.Load(), MessagesSent: m.Sent.Load(), MessagesReceived: m.Received.Load()}
	}
	return out
}

// originSeries sums the per-second series of an origin's steps: counts,
// bytes, requests in flight and connections open add up exactly; a
// second's latency percentiles (of the responses and of every sent
// request) are its slowest step's (an upper bound), for the verdict's
// view of stalls only.
func originSeries(steps []int, series [][]stats.Second) []stats.Second {
	var out []stats.Second
	for _, st := range steps {
		if st >= len(series) {
			continue
		}
		for i, sec := range series[st] {
			if i == len(out) {
				out = append(out, stats.Second{Index: sec.Index, Span: sec.Span})
			}
			o := &out[i]
			o.Requests += sec.Requests
			o.Errors += sec.Errors
			o.NotSent += sec.NotSent
			o.CutOff += sec.CutOff
			o.Drained += sec.Drained
			o.BodyBytes += sec.BodyBytes
			o.WireBytes += sec.WireBytes
			o.SentBytes += sec.SentBytes
			o.InFlight += sec.InFlight
			o.ConnsOpen += sec.ConnsOpen
			o.P50, o.P90, o.P99 = max(o.P50, sec.P50), max(o.P90, sec.P90), max(o.P99, sec.P99)
			o.P999, o.Max = max(o.P999, sec.P999), max(o.Max, sec.Max)
			o.AllSentP50, o.AllSentP99, o.AllSentMax = max(o.AllSentP50, sec.AllSentP50), max(o.AllSentP99, sec.AllSentP99), max(o.AllSentMax, sec.AllSentMax)
			o.LagP99, o.WaitP99 = max(o.LagP99, sec.LagP99), max(o.WaitP99, sec.WaitP99)
		}
	}
	return out
}

// addr is where the run's connections went, for the verdict's words: its
// target's address, or each origin's.
func (s *setup) addr() string {
	if s.legs == nil {
		return s.dialer.Target()
	}
	var addrs []string
	for _, leg := range s.legs {
		addrs = append(addrs, leg.dialer.Target())
	}
	return strings.Join(addrs, " and ")
}

// mismatch is the first certificate met for other names than the one
// checked, by the run's dialer or any origin's (nil: none).
func (s *setup) mismatch() *report.CertNames {
	for _, d := range s.dialers() {
		if m := certNames(d); m != nil {
			return m
		}
	}
	return nil
}
