package run

import (
	"context"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/schedule"
)

// An interrupt that comes once the -z deadline has passed but before its
// timer fired (the engines stop starting requests at the deadline on their
// own, so the run is already settling; under load the timer fires late)
// ends the run by its deadline and aborts the settling at once: it does
// not start a settling of its own that only the grace could end. Both
// channels are ready when watch starts, which Go's select picks at random:
// 50 rounds.
func TestInterruptAfterTheDeadlineAborts(t *testing.T) {
	t.Parallel()
	for range 50 {
		j := &engine.Job{Start: time.Now().Add(-time.Second), Source: schedule.NewSource(nil, 0, 500*time.Millisecond)}
		c := newController([]*engine.Job{j}, true, time.Minute)
		intr := make(chan struct{})
		close(intr)
		go c.watch(context.Background(), 500*time.Millisecond, intr, nil, nil)
		select {
		case <-c.abort:
		case <-time.After(10 * time.Second):
			t.Fatal("an interrupt after the deadline did not abort the settling within 10 s (the grace is a minute)")
		}
		c.finished()
		if reason, _ := c.ending(time.Second); reason != endDeadline {
			t.Fatalf("the run ended by %q, want %q: the deadline had passed", reason, endDeadline)
		}
	}
}
