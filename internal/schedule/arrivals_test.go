package schedule

import (
	"math"
	"testing"
	"time"
)

func TestArrivals(t *testing.T) {
	t.Parallel()
	for _, shape := range []float64{1, 0.25, 4} {
		a := NewArrivals(1000, shape, 7)
		var gaps []float64
		prev := time.Duration(-1)
		for i := uint64(0); i < 3*arrivalCycle; i++ {
			at, stop := a.Pace(i)
			if stop || at < prev {
				t.Fatalf("shape %v: request %d due at %v after %v (stop %v)", shape, i, at, prev, stop)
			}
			if prev >= 0 {
				gaps = append(gaps, float64(at-prev))
			}
			prev = at
		}
		// Exactly the rate over whole cycles.
		if at, _ := a.Pace(2 * arrivalCycle); at != 2*a.period || a.period != time.Duration(arrivalCycle)*time.Millisecond {
			t.Errorf("shape %v: two cycles end at %v, period %v", shape, at, a.period)
		}
		// A gamma of shape k has a coefficient of variation 1/√k: 1 for
		// Poisson arrivals, 2 at burstiness 0.25, 0.5 at 4.
		var sum, sq float64
		for _, g := range gaps {
			sum += g
		}
		mean := sum / float64(len(gaps))
		for _, g := range gaps {
			sq += (g - mean) * (g - mean)
		}
		cv := math.Sqrt(sq/float64(len(gaps))) / mean
		if want := 1 / math.Sqrt(shape); math.Abs(cv-want) > 0.05*want {
			t.Errorf("shape %v: coefficient of variation %.3f, want %.3f", shape, cv, want)
		}
		if math.Abs(mean-1e6) > 1e3 {
			t.Errorf("shape %v: mean gap %.0f ns, want 1 ms", shape, mean)
		}
	}
	// The same seed gives the same schedule; another, another.
	a, b, c := NewArrivals(50, 1, 1), NewArrivals(50, 1, 1), NewArrivals(50, 1, 2)
	x, _ := a.Pace(12345)
	y, _ := b.Pace(12345)
	z, _ := c.Pace(12345)
	if x != y || x == z {
		t.Errorf("seeded schedules: %v %v %v", x, y, z)
	}
}
