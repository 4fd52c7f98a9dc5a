package engine

import (
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
)

// stagedJob is a job of two steps over two stages, the second with a
// warmup: three slots, so six recorder groups of one recorder each.
func stagedJob() *Job {
	clock := schedule.NewStageClock([]schedule.Stage{
		{Duration: time.Second, Target: 10},
		{Duration: time.Second, Target: 20, Warmup: 250 * time.Millisecond},
	}, 0)
	j := &Job{Source: schedule.NewSource(schedule.Rate{PerSecond: 100}, 0, 0), Steps: []string{"a", "b"}, Stages: clock}
	for range clock.Slots() * len(j.Steps) {
		j.Recorders = append(j.Recorders, []*stats.Recorder{stats.NewRecorder()})
	}
	return j
}

// A request records into its step's recorder of the stage slot of its
// intended time, and a whole lifecycle there allocates nothing.
func TestCallRecordsInItsStage(t *testing.T) {
	j := stagedJob()
	reqs := &Static{Variants: [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n")}}
	p := &http1.Parser{Status: 200}
	var c Call
	one := func(step int, at time.Duration) {
		c.Begin(j, 0, step, 0, at, 0)
		c.Start(at)
		c.Wrote(10)
		c.Respond(at+time.Millisecond, p, reqs)
	}
	for _, tc := range []struct {
		step  int
		at    time.Duration
		group int
	}{
		{0, 0, 0}, {1, 999 * time.Millisecond, 1}, // stage 1: slot 0
		{0, 1100 * time.Millisecond, 4}, {1, 1249 * time.Millisecond, 5}, // stage 2's warmup: slot 2
		{1, 1250 * time.Millisecond, 3}, {0, 1999 * time.Millisecond, 2}, // stage 2: slot 1
	} {
		if g := j.Group(tc.step, tc.at); g != tc.group {
			t.Errorf("step %d at %v: group %d, want %d", tc.step, tc.at, g, tc.group)
		}
		one(tc.step, tc.at)
		tot := stats.NewTotals()
		tot.Add(drained(j.Recorders[tc.group][0]))
		if tot.Responses() != 1 {
			t.Errorf("step %d at %v: group %d holds %d responses, want the one", tc.step, tc.at, tc.group, tot.Responses())
		}
	}
	if n := testing.AllocsPerRun(200, func() { one(1, 1500*time.Millisecond) }); n != 0 {
		t.Errorf("a request of a staged job allocates %v times", n)
	}
}

// drained empties r into new Totals.
func drained(r *stats.Recorder) *stats.Totals {
	c := stats.NewCollector([]*stats.Recorder{r}, time.Now())
	return c.Finish(time.Now())
}
