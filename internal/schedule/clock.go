package schedule

import "time"

// StageClock tells which stage of a ramp a request belongs to from its
// intended send time: each stage is one slot, and each stage's warmup
// another (the slots after the stages'), so that a run can keep a recorder
// per slot and report every stage on its own, its warmup left out. It is
// read-only after NewStageClock and safe for concurrent use; Slot neither
// locks nor allocates.
type StageClock struct {
	stages []Stage
	starts []time.Duration // stage i begins at starts[i]; starts[len] is the end
	warm   []int           // slot of stage i's warmup; -1 without one
	slots  int
}

// NewStageClock returns the clock of stages, cut at length (0: not cut):
// stages that begin at or after length are left out, and the last one kept
// ends at length. It returns nil when no stage is left.
func NewStageClock(stages []Stage, length time.Duration) *StageClock {
	c := &StageClock{}
	var t time.Duration
	for _, s := range stages {
		if length > 0 && t >= length {
			break
		}
		if length > 0 && t+s.Duration > length {
			s.Duration = length - t
		}
		c.stages = append(c.stages, s)
		c.starts = append(c.starts, t)
		t += s.Duration
	}
	if len(c.stages) == 0 {
		return nil
	}
	c.starts = append(c.starts, t)
	c.slots = len(c.stages)
	for _, s := range c.stages {
		w := -1
		if s.Warmup > 0 {
			w = c.slots
			c.slots++
		}
		c.warm = append(c.warm, w)
	}
	return c
}

// Stages are the clock's stages (the last one cut at the run's length).
func (c *StageClock) Stages() []Stage { return c.stages }

// Start is when stage i begins, from the start of the run.
func (c *StageClock) Start(i int) time.Duration { return c.starts[i] }

// End is when stage i ends.
func (c *StageClock) End(i int) time.Duration { return c.starts[i+1] }

// Slots is how many slots the clock hands out: one per stage, one per
// warmup.
func (c *StageClock) Slots() int { return c.slots }

// WarmupSlot is the slot of stage i's warmup, or -1 when it has none.
func (c *StageClock) WarmupSlot(i int) int { return c.warm[i] }

// Slot is the slot of a request intended at at (from the start of the
// run): its stage's, or its stage's warmup's. A time before the first
// stage belongs to it, one after the last to the last.
func (c *StageClock) Slot(at time.Duration) int {
	i := 0
	for i < len(c.stages)-1 && at >= c.starts[i+1] {
		i++
	}
	if w := c.warm[i]; w >= 0 && at < c.starts[i]+c.stages[i].Warmup {
		return w
	}
	return i
}
