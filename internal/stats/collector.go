package stats

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Second is one entry of a run's per-second series.
type Second struct {
	// Index is the second of the run this entry covers, from 0.
	Index int `json:"t"`
	// Span is the seconds this entry covers: 1, or less for the last one.
	Span float64 `json:"span"`
	// Requests are the sent requests that ended in this second (responses
	// + errors + truncated streams), Errors of them failed (those the
	// run's end aborted included). NotSent are requests that failed in this second before a
	// byte was written (connect failures): errors, but never sent.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	NotSent  int64 `json:"not_sent,omitempty"`
	// CutOff are the sent requests the run's end cut off: those it
	// aborted (among the Errors) and Truncated streams (not errors: hail
	// llm's and --sse's streams still running after the drain).
	CutOff    int64 `json:"cut_off,omitempty"`
	Truncated int64 `json:"truncated,omitempty"`
	// Drained of the Requests ended in the -w drain, after the run stopped
	// sending (the drain begins summary.total − hail.drain.seconds into
	// the run).
	Drained int64 `json:"drained,omitempty"`
	// BodyBytes received in this second; WireBytes all bytes read, SentBytes all written.
	BodyBytes int64 `json:"body_bytes"`
	WireBytes int64 `json:"wire_bytes"`
	SentBytes int64 `json:"sent_bytes"`
	// Latency percentiles of the responses in this second, ns.
	P50  int64 `json:"p50_ns"`
	P90  int64 `json:"p90_ns"`
	P99  int64 `json:"p99_ns"`
	P999 int64 `json:"p999_ns"`
	Max  int64 `json:"max_ns"`
	// AllP50, AllP99 and AllMax are over every sent request that ended in
	// this second, failures at their elapsed time (cut-off requests
	// excluded), ns.
	AllP50 int64 `json:"all_sent_p50_ns"`
	AllP99 int64 `json:"all_sent_p99_ns"`
	AllMax int64 `json:"all_sent_max_ns"`
	// LagP99 is the p99 of hail's own lateness in this second, ns (open
	// model: its send lateness; closed: from a response's arrival to the
	// next send on its connection).
	LagP99 int64 `json:"lag_p99_ns"`
	// WaitP99 is the p99 of the time requests waited for a free connection
	// in this second, ns (open model): the target's backpressure.
	WaitP99 int64 `json:"wait_p99_ns,omitempty"`
	// Events are the server-sent events streams delivered in this second;
	// Tokens the output tokens (hail llm) by their arrival, corrected when
	// each stream ended (a failed or cut stream's are taken back).
	Events int64 `json:"events,omitempty"`
	Tokens int64 `json:"tokens,omitempty"`
	// InFlight and ConnsOpen are sampled at the end of the second.
	InFlight  int64 `json:"in_flight"`
	ConnsOpen int64 `json:"conns_open"`
	// CPU is the generator's CPU use in this second, in cores (1.0 = one core busy).
	CPU float64 `json:"cpu"`
	// Others is the share of hail's CPUs that other processes used in this
	// second (Linux; 0 where unknown).
	Others float64 `json:"others_cpu,omitempty"`
	// TargetRSS and TargetCPU are the monitored target's resident memory
	// (bytes, summed over its processes) and CPU use (cores) in this
	// second (--target-pid, --target-cmd, --target-cgroup).
	TargetRSS int64   `json:"target_rss_bytes,omitempty"`
	TargetCPU float64 `json:"target_cpu,omitempty"`
	// TargetPSS is the target's proportional set size (bytes: shared pages
	// divided among their sharers) and TargetProcs its processes, in this
	// second (--target-pid, --target-cmd, --target-cgroup).
	TargetPSS   int64 `json:"target_pss_bytes,omitempty"`
	TargetProcs int   `json:"target_processes,omitempty"`
	// TargetShare is the share of hail's CPUs the target's processes used
	// in this second (not in Others).
	TargetShare float64 `json:"target_on_hail_cpus,omitempty"`
}

// Collector periodically drains a run's recorders into running totals and a
// per-second series, off the hot path. Its methods are safe for concurrent use.
type Collector struct {
	groups [][]*Recorder // one group of recorders per step and stage slot: groups[slot*nsteps+step]
	nsteps int
	start  time.Time

	mu      sync.Mutex
	total   *Totals
	second  *Totals // scratch for the current tick
	last    Second
	series  []Second
	all     *Totals    // scratch: this tick, all steps
	steps   []*Totals  // per step, the run so far
	stepSer [][]Second // per step series
	stages  []*Totals  // per stage slot, the run so far
	slotSec *Totals    // scratch: this tick, one step in one slot
	usage   Usage
	started Usage
	mreader MachineReader
	machine Machine // the last reading of hail's CPUs
	mstart  Machine // the reading at the start
	mwhen   time.Time
	next    int   // index of the next second to close
	p99     int64 // run-so-far latency p99 as of the last tick, ns
	merged  *hdr.Histogram
	lat     *hdr.Histogram // scratch: one tick's latencies
	onSec   func(*Second)  // fills extra fields of each closed second (target sampling)
	tick    *Totals        // the last closed second's totals, all steps (LastTick)
	live    atomic.Bool    // drain the stream histograms every tick (LiveStreams)
}

// LiveStreams makes every tick drain the token streams' TTFT, TPOT, ITL
// and E2E histograms (from the intended and the actual send), not only the
// run's end, for views and exporters that show them while the run goes:
// it costs a scan of those six histograms of each recorder whose streams
// moved, every second. The other stream histograms (inter-event gap, read
// lag, …) still wait for the run's end. Call it before or during the run.
func (c *Collector) LiveStreams() { c.live.Store(true) }

// LastTick calls f with the totals of the last closed second (all steps;
// empty before the first tick), under the collector's lock: f must not
// keep them. With LiveStreams, their stream histograms are that second's.
func (c *Collector) LastTick(f func(t *Totals)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tick == nil {
		f(NewTotals())
		return
	}
	f(c.tick)
}

// OnSecond sets a hook that is called, under the collector's lock, with
// every second as it closes, to fill fields the recorders do not measure
// (such as the target process's RSS and CPU). Call it before the run starts.
func (c *Collector) OnSecond(f func(*Second)) {
	c.mu.Lock()
	c.onSec = f
	c.mu.Unlock()
}

// NewCollector returns a Collector over recs for a run that started at start.
func NewCollector(recs []*Recorder, start time.Time) *Collector {
	return NewStepCollector([][]*Recorder{recs}, start)
}

// NewStepCollector returns a Collector that also keeps totals and a series
// per step: groups[i] are step i's recorders.
func NewStepCollector(groups [][]*Recorder, start time.Time) *Collector {
	return NewStageCollector(groups, len(groups), start)
}

// NewStageCollector returns a Collector that keeps totals per step and
// per stage slot (engine.Job.Stages): groups[slot*steps+step] are the
// recorders of a step in a slot. A slot's totals are its steps' sum, a
// step's its slots' sum, and the run's the sum of all.
func NewStageCollector(groups [][]*Recorder, steps int, start time.Time) *Collector {
	c := &Collector{groups: groups, nsteps: steps, start: start, total: NewTotals(), second: NewTotals(),
		mwhen: time.Now(), merged: NewHist(), lat: NewHist(), stepSer: make([][]Second, steps)}
	c.usage, c.machine = ReadUsage(), c.mreader.Read()
	c.started, c.mstart = c.usage, c.machine
	if slots := len(groups) / steps; slots > 1 {
		c.slotSec = NewTotals()
		for range slots {
			c.stages = append(c.stages, NewTotals())
		}
	} else {
		c.stages = []*Totals{c.total} // one slot: the run
	}
	if steps == 1 {
		// One step: its totals are the run's (no second copy of the histograms).
		c.steps = []*Totals{c.total}
		return c
	}
	c.all = NewTotals()
	for range steps {
		c.steps = append(c.steps, NewTotals())
	}
	return c
}

// Start returns the run's start time.
func (c *Collector) Start() time.Time { return c.start }

// Run ticks at every whole second of the run until stop is closed, calling
// onTick (if not nil) after each tick.
func (c *Collector) Run(stop <-chan struct{}, onTick func()) {
	for {
		next := c.start.Add(time.Duration(c.next+1) * time.Second)
		t := time.NewTimer(time.Until(next))
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
			c.Tick(time.Now())
			if onTick != nil {
				onTick()
			}
		}
	}
}

// Tick closes the current second: everything recorded since the previous
// tick is added to the totals and becomes one entry of the series.
func (c *Collector) Tick(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	span := c.span(now)
	if span <= 0 {
		return
	}
	c.closeSecond(min(span, 1), now, false)
}

// Finish drains what is left at the end of the run (at end) and returns the
// totals. Call it once, after every request has been recorded.
func (c *Collector) Finish(end time.Time) *Totals {
	c.mu.Lock()
	defer c.mu.Unlock()
	span := c.span(end)
	if span < 0 {
		span = 0
	}
	c.closeSecond(min(span, 1), end, true)
	c.mreader.Close()
	return c.total
}

// span is the seconds from the start of the current second to now: a
// whole number of nanoseconds, as every time in a Result is.
func (c *Collector) span(now time.Time) float64 {
	return (now.Sub(c.start) - time.Duration(c.next)*time.Second).Seconds()
}

// closeSecond drains the recorders into one entry of the series; final
// (and, once LiveStreams was called, every tick) drains the stream
// histograms too: each stage slot's land in its stage's totals, so they
// are per stage too.
func (c *Collector) closeSecond(span float64, now time.Time, final bool) {
	live := c.live.Load()
	single := c.nsteps == 1
	all := c.all
	if single {
		all = c.second // the one step's tick is the whole tick
	} else {
		all.reset()
	}
	var inflight, open int64
	u, m := ReadUsage(), c.mreader.Read()
	cpu := u.Sub(c.usage).CPU()
	others := m.Use(c.machine, cpu, now.Sub(c.mwhen)).Others
	c.usage, c.machine, c.mwhen = u, m, now
	keep := span > 0
	for g := range c.nsteps {
		s := c.second
		s.reset()
		var gin, gopen int64
		for slot := range len(c.groups) / c.nsteps {
			d := s // one slot: the step's tick
			if c.slotSec != nil {
				d = c.slotSec
				d.reset()
			}
			for _, r := range c.groups[slot*c.nsteps+g] {
				d.drain(r, live, final)
				gin += atomic.LoadInt64(&r.inflight)
				gopen += atomic.LoadInt64(&r.connsOpen) - atomic.LoadInt64(&r.connsClosed)
			}
			if d != s {
				c.stages[slot].Add(d)
				s.Add(d)
			}
		}
		inflight += gin
		open += gopen
		if single {
			break
		}
		c.steps[g].Add(s)
		all.Add(s)
		if keep {
			c.stepSer[g] = append(c.stepSer[g], secondOf(s, c.lat, c.next, span, gin, gopen))
		}
	}
	sec := secondOf(all, c.lat, c.next, span, inflight, open)
	if span > 0 {
		sec.CPU = cpu.Seconds() / span
	}
	sec.Others = others
	if c.onSec != nil {
		c.onSec(&sec)
	}
	c.total.Add(all)
	c.tick = all
	c.merged.Merge(all.LatencyOK)
	c.merged.Merge(all.LatencyBad)
	c.p99 = c.merged.ValueAtQuantile(99)
	c.last = sec
	if keep && (all.Requests() > 0 || span >= 0.05) {
		c.series = append(c.series, sec)
	}
	c.next++
}

// secondOf summarises one tick's totals s as entry index of a series.
func secondOf(s *Totals, lat *hdr.Histogram, index int, span float64, inflight, open int64) Second {
	resetHist(lat)
	lat.Merge(s.LatencyOK)
	lat.Merge(s.LatencyBad)
	var events, tokens int64
	if st := s.Stream; st != nil {
		events = st.Events
		if st.Tokens != nil {
			tokens = st.Tokens.Series
		}
	}
	sec := Second{
		Events: events, Tokens: tokens,
		Index: index, Span: span,
		Requests: s.Sent(), Errors: s.ErrorCount() - s.NotSent, NotSent: s.NotSent, CutOff: s.CutOff(), Truncated: s.Truncated(), Drained: s.Drained, BodyBytes: s.BodyBytes, WireBytes: s.WireBytes, SentBytes: s.SentBytes,
		P50: lat.ValueAtQuantile(50), P90: lat.ValueAtQuantile(90), P99: lat.ValueAtQuantile(99), P999: lat.ValueAtQuantile(99.9), Max: lat.Max(),
		LagP99: s.Lag.ValueAtQuantile(99), WaitP99: s.ConnWait.ValueAtQuantile(99),
		InFlight: inflight, ConnsOpen: open,
	}
	lat.Merge(s.Failed)
	sec.AllP50, sec.AllP99, sec.AllMax = lat.ValueAtQuantile(50), lat.ValueAtQuantile(99), lat.Max()
	return sec
}

// Steps calls f with each step's totals and series so far (series are
// empty for a single-step run), under the collector's lock: f must not
// keep them.
func (c *Collector) Steps(f func(totals []*Totals, series [][]Second)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.steps, c.stepSer)
}

// Stages calls f with each stage slot's totals so far (one slot, without
// stages: the run's), under the collector's lock: f must not keep them.
func (c *Collector) Stages(f func(totals []*Totals)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.stages)
}

// Snapshot is a cheap summary of the run so far, for progress displays.
type Snapshot struct {
	Elapsed   time.Duration
	Requests  int64
	Errors    int64
	BodyBytes int64
	P99       int64 // ns, over the run so far
	Last      Second
	Queued    int64
	Unsent    int64   // requests taken but not sent (so far: aborted before writing)
	CPU       float64 // cores used over the run so far
}

// Snapshot returns the state as of the last tick.
func (c *Collector) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := time.Since(c.start)
	cpu := c.usage.Sub(c.started).CPU().Seconds()
	s := Snapshot{Elapsed: el, Requests: c.total.Requests(), Errors: c.total.ErrorCount(),
		BodyBytes: c.total.BodyBytes, Last: c.last, Queued: c.total.Queued, Unsent: c.total.Unsent}
	if sec := float64(c.next); sec > 0 {
		s.CPU = cpu / sec
	}
	s.P99 = c.p99
	return s
}

// View calls f with the totals and series so far, under the collector's
// lock: f must not keep them.
func (c *Collector) View(f func(t *Totals, series []Second)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.total, c.series)
}

// Series returns a copy of the per-second series.
func (c *Collector) Series() []Second {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Second(nil), c.series...)
}

// Machine is what happened on hail's CPUs from the collector's start to its
// last tick (Finish included): other processes' share, steal, pressure.
func (c *Collector) Machine() MachineUse {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.machine.Use(c.mstart, c.usage.Sub(c.started).CPU(), c.mwhen.Sub(c.start))
}

// Usage returns the generator's resource use since the collector was made.
func (c *Collector) Usage() Usage { return ReadUsage().Sub(c.started) }

// Cores is how many CPUs the generator may use: GOMAXPROCS bounded by the
// CPUs it is allowed to run on.
func Cores() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }
