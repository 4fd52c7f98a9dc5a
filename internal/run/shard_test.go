package run

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/schedule"
)

func TestShardShare(t *testing.T) {
	t.Parallel()
	whole := &plan.Plan{Requests: 10, Connections: 5, Rate: 900, ShardCount: 3}
	var reqs uint64
	var conns int
	for i := range 3 {
		w := *whole
		w.ShardIndex = i
		s := ShardShare(&w)
		reqs += s.Requests
		conns += s.Connections
		if s.Rate != 300 || s.Requests != []uint64{4, 3, 3}[i] || s.Connections != []int{2, 2, 1}[i] {
			t.Errorf("shard %d: %d requests, %d connections, rate %g", i, s.Requests, s.Connections, s.Rate)
		}
	}
	if reqs != 10 || conns != 5 {
		t.Errorf("shares add to %d requests, %d connections", reqs, conns)
	}
	one := &plan.Plan{Requests: 10, Connections: 1, ShardCount: 4, ShardIndex: 3}
	if s := ShardShare(one); s.Connections != 1 || s.Requests != 2 {
		t.Errorf("small: %+v", s)
	}
	r := ShardRamp(schedule.Ramp{Start: 8, Stages: []schedule.Stage{{Duration: time.Second, Target: 40}}}, 4)
	if r.Start != 2 || r.Stages[0].Target != 10 {
		t.Errorf("ramp %+v", r)
	}
}

// The shards' schedules interleave into exactly the whole run's schedule,
// for a constant rate and for ramped rate stages.
func TestShardPacerInterleaves(t *testing.T) {
	t.Parallel()
	ramp := schedule.NewRampRate(schedule.Ramp{Stages: []schedule.Stage{{Duration: 2 * time.Second, Target: 1000}}})
	for _, tc := range []struct {
		name  string
		whole schedule.Pacer
		mk    func(p *plan.Plan) schedule.Pacer
	}{
		{"rate", schedule.Rate{PerSecond: 900}, func(p *plan.Plan) schedule.Pacer { return schedule.Rate{PerSecond: ShardShare(p).Rate} }},
		{"ramp", ramp, func(*plan.Plan) schedule.Pacer { return ramp }},
	} {
		var want, got []time.Duration
		for h := range uint64(300) {
			at, _ := tc.whole.Pace(h)
			want = append(want, at)
		}
		for i := range 3 {
			p := &plan.Plan{Rate: 900, ShardCount: 3, ShardIndex: i}
			sp := shardPacer(p, tc.mk(p))
			for h := range uint64(100) {
				at, _ := sp.Pace(h)
				got = append(got, at)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the shards' schedules do not add up to the whole's", tc.name)
		}
	}
	b := schedule.Burst{Every: time.Second, Size: 3}
	if p := shardPacer(&plan.Plan{ShardCount: 2}, b); p != schedule.Pacer(b) {
		t.Error("bursts are interleaved")
	}
}

func TestCheckStartAt(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		at time.Time
		ok bool
	}{{now.Add(time.Minute), true}, {now.Add(-2 * time.Second), true}, {now.Add(-time.Minute), false}, {now.Add(25 * time.Hour), false}} {
		if err := CheckStartAt(tc.at, now, false); (err == nil) != tc.ok {
			t.Errorf("%v: %v", tc.at.Sub(now), err)
		}
	}
	// A shard scheduled late starts, up to a day late.
	for _, tc := range []struct {
		at time.Time
		ok bool
	}{{now.Add(-time.Minute), true}, {now.Add(-23 * time.Hour), true}, {now.Add(-25 * time.Hour), false}, {now.Add(25 * time.Hour), false}} {
		if err := CheckStartAt(tc.at, now, true); (err == nil) != tc.ok {
			t.Errorf("shard, %v: %v", tc.at.Sub(now), err)
		}
	}
	at := now.Add(-3 * time.Second)
	s := shardInfo(&plan.Plan{ShardIndex: 1, ShardCount: 2, StartAt: at}, &plan.Plan{}, now)
	if s == nil || s.Late != 3*time.Second {
		t.Errorf("shard info %+v, want late 3s", s)
	}
	if s := shardInfo(&plan.Plan{ShardCount: 2, StartAt: now.Add(time.Second)}, &plan.Plan{}, now.Add(time.Second)); s.Late != 0 {
		t.Errorf("on time: late %d", s.Late)
	}
	stop := make(chan struct{})
	close(stop)
	if waitStart(context.Background(), time.Now().Add(time.Hour), stop) {
		t.Error("waitStart ignored the interrupt")
	}
	t0 := time.Now()
	if !waitStart(context.Background(), t0.Add(50*time.Millisecond), nil) || time.Since(t0) < 45*time.Millisecond {
		t.Error("waitStart returned early")
	}
}
