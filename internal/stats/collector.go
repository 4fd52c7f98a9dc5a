package stats

import (
	"github.com/hail-loadgen/hail/result"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Second is one entry of a run's per-second series (declared in package
// result).
type Second = result.Second

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
	c.second.track()
	c.usage, c.machine = ReadUsage(), c.mreader.Read()
	c.started, c.mstart = c.usage, c.machine
	if slots := len(groups) / steps; slots > 1 {
		c.slotSec = NewTotals()
		c.slotSec.track()
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
	c.all.track()
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
	c.closeSecond(min(span, time.Second), now, false)
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
	c.closeSecond(min(span, time.Second), end, true)
	c.mreader.Close()
	return c.total
}

// span is the seconds from the start of the current second to now: a
// whole number of nanoseconds, as every time in a Result is.
func (c *Collector) span(now time.Time) time.Duration {
	return now.Sub(c.start) - time.Duration(c.next)*time.Second
}

// closeSecond drains the recorders into one entry of the series; final
// (and, once LiveStreams was called, every tick) drains the stream
// histograms too: each stage slot's land in its stage's totals, so they
// are per stage too.
func (c *Collector) closeSecond(span time.Duration, now time.Time, final bool) {
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
		sec.CPU = cpu.Seconds() / span.Seconds()
	}
	sec.Others = others
	if c.onSec != nil {
		c.onSec(&sec)
	}
	c.total.Add(all)
	c.tick = all
	all.mergeInto(c.merged, histLatencyOK, nil)
	all.mergeInto(c.merged, histLatencyBad, nil)
	c.p99 = c.merged.ValueAtQuantile(99)
	c.last = sec
	if keep && (all.Requests() > 0 || span >= 50*time.Millisecond) {
		c.series = append(c.series, sec)
	}
	c.next++
}

// secondOf summarises one tick's totals s as entry index of a series.
func secondOf(s *Totals, lat *hdr.Histogram, index int, span time.Duration, inflight, open int64) Second {
	resetHist(lat)
	s.mergeInto(lat, histLatencyOK, nil)
	s.mergeInto(lat, histLatencyBad, nil)
	// ValueAtQuantile(100) is Max, found by a block scan where Max walks
	// every bucket; ValueAtPercentilesSlice would allocate, every second.
	q := func(h *hdr.Histogram, p float64) time.Duration { return time.Duration(h.ValueAtQuantile(p)) }
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
		P50: q(lat, 50), P90: q(lat, 90), P99: q(lat, 99), P999: q(lat, 99.9), Max: q(lat, 100),
		LagP99: q(s.Lag, 99), WaitP99: q(s.ConnWait, 99),
		InFlight: inflight, ConnsOpen: open,
	}
	s.mergeInto(lat, histFailed, nil)
	sec.AllSentP50, sec.AllSentP99, sec.AllSentMax = q(lat, 50), q(lat, 99), q(lat, 100)
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
