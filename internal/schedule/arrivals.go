package schedule

import (
	"math"
	"math/rand/v2"
	"time"
)

// arrivalCycle is how many gaps an Arrivals schedule draws; they repeat
// after that many requests.
const arrivalCycle = 1 << 16

// Arrivals is an open-model Pacer with random gaps between requests, at
// PerSecond on average: exponential gaps (a Poisson process, as real
// request traffic arrives), or gamma-distributed ones of a given shape
// (vLLM's --burstiness: below 1 burstier than Poisson, above 1 more
// regular). The gaps are drawn once from a seeded generator, arrivalCycle
// of them, and scaled so that the cycle lasts exactly arrivalCycle ÷
// PerSecond; the schedule repeats the cycle. So Pace is a pure function of
// the request number, shards of one run (each taking every n-th request)
// share one schedule, and the long-run rate is exact.
type Arrivals struct {
	start  []time.Duration // start[i]: when request i of a cycle is due, from the cycle's start
	period time.Duration
}

// NewArrivals draws a schedule of perSecond requests per second whose gaps
// follow a gamma distribution of the given shape (1: exponential, a
// Poisson process), from seed.
func NewArrivals(perSecond, shape float64, seed uint64) *Arrivals {
	r := rand.New(rand.NewPCG(seed, 0x68a11))
	gaps := make([]float64, arrivalCycle)
	var sum float64
	for i := range gaps {
		gaps[i] = gamma(r, shape)
		sum += gaps[i]
	}
	period := float64(arrivalCycle) / perSecond * 1e9 // ns
	a := &Arrivals{start: make([]time.Duration, arrivalCycle), period: time.Duration(period)}
	var t float64
	for i, g := range gaps {
		a.start[i] = time.Duration(t)
		t += g / sum * period
	}
	return a
}

// Pace implements Pacer.
func (a *Arrivals) Pace(hits uint64) (time.Duration, bool) {
	n := hits / arrivalCycle
	if a.period <= 0 || n >= uint64(math.MaxInt64/int64(a.period)) {
		return 0, true
	}
	return time.Duration(n)*a.period + a.start[hits%arrivalCycle], false
}

// gamma draws from the gamma distribution of the given shape and scale 1
// (Marsaglia and Tsang's method; shapes below 1 by boosting).
func gamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(r, shape+1) * math.Pow(1-r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
