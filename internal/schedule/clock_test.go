package schedule

import (
	"testing"
	"time"
)

func TestStageClock(t *testing.T) {
	t.Parallel()
	s := time.Second
	c := NewStageClock([]Stage{
		{Duration: 10 * s, Target: 500, Step: true, Warmup: 2 * s},
		{Duration: 0, Target: 100}, // a jump: no time of its own
		{Duration: 10 * s, Target: 5000, Step: true, Warmup: 3 * s},
		{Duration: 10 * s, Target: 10},
		{Duration: 10 * s, Target: 20}, // cut away by the length
	}, 25*s)
	if c.Slots() != 6 || len(c.Stages()) != 4 {
		t.Fatalf("%d slots, %d stages; want 6 and 4", c.Slots(), len(c.Stages()))
	}
	if c.End(3) != 25*s || c.Stages()[3].Duration != 5*s {
		t.Errorf("last stage ends at %v, lasts %v; want cut at 25s", c.End(3), c.Stages()[3].Duration)
	}
	for _, tc := range []struct {
		at   time.Duration
		slot int
	}{
		{0, 4}, {2*s - 1, 4}, {2 * s, 0}, {10*s - 1, 0},
		{10 * s, 5}, {13*s - 1, 5}, {13 * s, 2}, {20*s - 1, 2},
		{20 * s, 3}, {24 * s, 3}, {99 * s, 3}, {-s, 4},
	} {
		if got := c.Slot(tc.at); got != tc.slot {
			t.Errorf("Slot(%v) = %d, want %d", tc.at, got, tc.slot)
		}
	}
	if c.WarmupSlot(0) != 4 || c.WarmupSlot(1) != -1 || c.WarmupSlot(2) != 5 {
		t.Errorf("warmup slots %d %d %d", c.WarmupSlot(0), c.WarmupSlot(1), c.WarmupSlot(2))
	}
	if NewStageClock([]Stage{{Duration: s}}, 0).Slots() != 1 || NewStageClock(nil, 0) != nil {
		t.Error("one stage without warmup is one slot; no stage is no clock")
	}
}

func TestStageClockAllocatesNothing(t *testing.T) {
	c := NewStageClock([]Stage{{Duration: time.Second, Warmup: time.Millisecond}, {Duration: time.Second}}, 0)
	if n := testing.AllocsPerRun(100, func() { c.Slot(1500 * time.Millisecond) }); n != 0 {
		t.Errorf("Slot allocates %v times", n)
	}
}
