package run

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/result"
)

// ShardShare returns the plan of shard p.ShardIndex of p.ShardCount: its
// exact share of -n (the first n mod N shards take one more), of the rate
// (-q / N), of the connections (-c / N, the first c mod N shards one more,
// at least 1) and of burst sizes. A plan that is not sharded is returned as is.
func ShardShare(p *plan.Plan) *plan.Plan {
	n, i := p.ShardCount, p.ShardIndex
	if n <= 1 {
		return p
	}
	q := *p
	q.Requests = splitU(p.Requests, i, n)
	q.Connections = max(1, int(splitU(uint64(p.Connections), i, n)))
	q.Rate = p.Rate / float64(n)
	if p.BurstSize > 0 {
		q.BurstSize = max(1, splitU(p.BurstSize, i, n))
	}
	return &q
}

// splitU is shard i's part of total split exactly over n shards.
func splitU(total uint64, i, n int) uint64 {
	share := total / uint64(n)
	if uint64(i) < total%uint64(n) {
		share++
	}
	return share
}

// ShardRamp divides every target of a ramp (rate or connection stages) by n.
func ShardRamp(r schedule.Ramp, n int) schedule.Ramp {
	if n <= 1 {
		return r
	}
	out := schedule.Ramp{Start: r.Start / float64(n), Stages: make([]schedule.Stage, len(r.Stages))}
	for k, s := range r.Stages {
		s.Target /= float64(n)
		out.Stages[k] = s
	}
	return out
}

// shardInfo describes a sharded plan (whole) and its share for the Result;
// started is when it began sending, to record how late it was.
func shardInfo(whole, share *plan.Plan, started time.Time) *result.Shard {
	if whole.ShardCount <= 1 {
		return nil
	}
	s := &result.Shard{Index: whole.ShardIndex, Count: whole.ShardCount, Requests: share.Requests,
		Rate: share.Rate, Connections: share.Connections}
	if !whole.StartAt.IsZero() {
		s.StartAt = whole.StartAt.UTC().Format(time.RFC3339Nano)
		s.Late = max(0, started.Sub(whole.StartAt))
	}
	return s
}

// MaxStartAhead bounds how far ahead --start-at may be, and how far in the
// past it may be for a shard.
const MaxStartAhead = 24 * time.Hour

// MaxStartLate is how far in the past --start-at may be for a run that is
// not a shard (a moment late still starts; minutes late is a mistake).
const MaxStartLate = 5 * time.Second

// CheckStartAt says what is wrong with a --start-at time, if anything. A
// shard (sharded) whose time has passed is not refused: scheduled late, it
// starts at once and its result records by how much (report.Shard.Late),
// so the whole run is reported incomplete rather than a shard lost.
func CheckStartAt(t, now time.Time, sharded bool) error {
	late := MaxStartLate
	if sharded {
		late = MaxStartAhead
	}
	switch {
	case t.After(now.Add(MaxStartAhead)):
		return fmt.Errorf("--start-at %s is more than 24h ahead: give a time within the next day", t.UTC().Format(time.RFC3339))
	case t.Before(now.Add(-late)):
		return fmt.Errorf("--start-at %s is %s in the past: give a time a little ahead, e.g. $(date -d '+30 sec' +%%s)", t.UTC().Format(time.RFC3339), now.Sub(t).Round(time.Second))
	}
	return nil
}

// waitStart waits until the wall-clock time at, or until interrupt is
// closed or ctx ends (false). The last spinStart before it is spent
// yielding in a loop rather than on a timer, whose wake-up may come a
// millisecond or more late on a busy machine: the shards of a run start
// within that of each other.
func waitStart(ctx context.Context, at time.Time, interrupt <-chan struct{}) bool {
	if at.IsZero() {
		return true
	}
	for {
		left := time.Until(at)
		if left <= spinStart {
			break
		}
		// Re-read the wall clock at least once a second, so a clock step
		// (NTP) during a long wait is followed.
		t := time.NewTimer(min(left-spinStart, time.Second))
		select {
		case <-interrupt:
			t.Stop()
			return false
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	for time.Now().Before(at) {
		runtime.Gosched()
	}
	return true
}

// spinStart is how long before a start time waitStart stops sleeping.
const spinStart = 2 * time.Millisecond

// shardPacer paces a shard's requests: shard I of N takes requests I, I+N,
// I+2N, … of the whole run's schedule, so the shards together send exactly
// the schedule one process would (a ramped rate too) instead of N requests
// at each instant. A plain -q rate is rebuilt at the whole run's rate for
// that; bursts are split by size (ShardShare) and not interleaved.
func shardPacer(whole *plan.Plan, p schedule.Pacer) schedule.Pacer {
	n := whole.ShardCount
	if n <= 1 || p == nil {
		return p
	}
	switch p.(type) {
	case schedule.Burst, *schedule.Burst:
		return p
	case schedule.Rate, *schedule.Rate:
		p = schedule.Rate{PerSecond: whole.Rate}
	}
	return interleaved{inner: p, index: uint64(whole.ShardIndex), count: uint64(n)}
}

type interleaved struct {
	inner        schedule.Pacer
	index, count uint64
}

// Pace implements schedule.Pacer.
func (s interleaved) Pace(hits uint64) (time.Duration, bool) {
	return s.inner.Pace(hits*s.count + s.index)
}

// StartInterruptedError is a run that a signal (or its context) stopped
// while it waited for --start-at: nothing was sent.
type StartInterruptedError struct{ At time.Time }

func (e *StartInterruptedError) Error() string {
	return fmt.Sprintf("interrupted while waiting for --start-at %s: nothing was sent", e.At.Format(time.RFC3339))
}
