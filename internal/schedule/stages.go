package schedule

import (
	"math"
	"sort"
	"time"
)

// Stage is one segment of a ramped run (k6's stages): over Duration the
// target moves linearly from the previous stage's target (or Start for the
// first stage) to Target; Step jumps to Target at the start instead.
type Stage struct {
	Duration time.Duration
	Target   float64 // requests per second (rate stages) or connections
	Step     bool
	// Warmup is the stage's first part whose requests count in the run
	// but not in the stage's own results (a plateau measured once it has
	// settled); less than Duration.
	Warmup time.Duration
	// Name names the stage in reports and thresholds ("": its number).
	Name string
}

// Ramp is a piecewise-linear function of time built from stages.
type Ramp struct {
	Start  float64
	Stages []Stage
}

// Total is the sum of the stages' durations.
func (r Ramp) Total() time.Duration {
	var t time.Duration
	for _, s := range r.Stages {
		t += s.Duration
	}
	return t
}

// At returns the target at time t (the last target after the end).
func (r Ramp) At(t time.Duration) float64 {
	from := r.Start
	var begin time.Duration
	for _, s := range r.Stages {
		if t < begin+s.Duration {
			if s.Step || s.Duration == 0 {
				return s.Target
			}
			f := float64(t-begin) / float64(s.Duration)
			return from + (s.Target-from)*f
		}
		begin += s.Duration
		from = s.Target
	}
	return from
}

// StageAt says which stage is in progress t into the ramp (from 1; the
// last after the end, whose target the ramp holds; 0 without stages), the
// target now and at that stage's end.
func (r Ramp) StageAt(t time.Duration) (index int, now, target float64) {
	if len(r.Stages) == 0 {
		return 0, 0, 0
	}
	index = len(r.Stages)
	var begin time.Duration
	for i, sg := range r.Stages {
		if t >= begin && t < begin+sg.Duration {
			index = i + 1
			break
		}
		begin += sg.Duration
	}
	return index, r.At(t), r.Stages[index-1].Target
}

// RampRate is an open-model Pacer whose rate follows a Ramp of requests per
// second; the schedule ends with the last stage.
type RampRate struct {
	ramp   Ramp
	starts []time.Duration // start of each stage
	cum    []float64       // requests scheduled before each stage
}

// NewRampRate returns the pacer for r.
func NewRampRate(r Ramp) *RampRate {
	p := &RampRate{ramp: r}
	var t time.Duration
	var n float64
	from := r.Start
	for _, s := range r.Stages {
		p.starts = append(p.starts, t)
		p.cum = append(p.cum, n)
		d := s.Duration.Seconds()
		if s.Step {
			n += s.Target * d
		} else {
			n += (from + s.Target) / 2 * d
		}
		t += s.Duration
		from = s.Target
	}
	p.starts = append(p.starts, t)
	p.cum = append(p.cum, n)
	return p
}

// Pace implements Pacer: the intended time of request number hits is where
// the integral of the rate reaches hits.
func (p *RampRate) Pace(hits uint64) (time.Duration, bool) { return p.At(float64(hits)) }

// At is when the integral of the rate reaches h requests (a fraction of
// one included): Pace's time of a request number, or of a point of a
// unit-rate process warped onto the ramp (Warped).
func (p *RampRate) At(h float64) (time.Duration, bool) {
	i := sort.Search(len(p.cum), func(i int) bool { return p.cum[i] > h }) - 1
	if i < 0 || i >= len(p.ramp.Stages) {
		return 0, true
	}
	s := p.ramp.Stages[i]
	from := p.ramp.Start
	if i > 0 {
		from = p.ramp.Stages[i-1].Target
	}
	need := h - p.cum[i] // requests into this stage
	var x float64        // seconds into the stage
	if s.Step || from == s.Target {
		rate := s.Target
		if !s.Step {
			rate = from
		}
		if rate <= 0 {
			return 0, true
		}
		x = need / rate
	} else {
		// rate(x) = from + a x; integral = from x + a x²/2 = need.
		a := (s.Target - from) / s.Duration.Seconds()
		disc := from*from + 2*a*need
		if disc < 0 {
			return 0, true
		}
		x = (-from + math.Sqrt(disc)) / a
	}
	return p.starts[i] + time.Duration(x*1e9), false
}

// Warped is an open-model Pacer whose rate follows a ramp with random
// arrivals: a unit-rate schedule of Arrivals' kind (Poisson, gamma) mapped
// through the ramp's integral, so that its gaps stay random and its rate
// follows each stage.
type Warped struct {
	Unit *Arrivals // one request per second on average
	Ramp *RampRate
}

// Pace implements Pacer.
func (w Warped) Pace(hits uint64) (time.Duration, bool) {
	u, stop := w.Unit.Pace(hits)
	if stop {
		return 0, true
	}
	return w.Ramp.At(u.Seconds())
}
