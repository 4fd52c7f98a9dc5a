package schedule

import (
	"math"
	"testing"
	"time"
)

// StageAt names the stage in progress, the target now and at its end; past
// the last stage, the last, whose target the ramp holds.
func TestRampStageAt(t *testing.T) {
	t.Parallel()
	r := Ramp{Stages: []Stage{{Duration: 2 * time.Second, Target: 10, Step: true}, {Duration: 2 * time.Second, Target: 30}}}
	for _, c := range []struct {
		at          time.Duration
		index       int
		now, target float64
	}{
		{0, 1, 10, 10}, {1999 * time.Millisecond, 1, 10, 10}, {2 * time.Second, 2, 10, 30}, {3 * time.Second, 2, 20, 30}, {9 * time.Second, 2, 30, 30},
	} {
		i, now, target := r.StageAt(c.at)
		if i != c.index || math.Abs(now-c.now) > 1e-9 || target != c.target {
			t.Errorf("at %v: stage %d, now %v, target %v; want %d, %v, %v", c.at, i, now, target, c.index, c.now, c.target)
		}
	}
	if i, _, _ := (Ramp{}).StageAt(time.Second); i != 0 {
		t.Errorf("no stages: stage %d", i)
	}
}
