package schedule

import (
	"math"
	"sync"
	"testing"
	"time"
)

func TestRatePace(t *testing.T) {
	r := Rate{PerSecond: 500}
	for _, tc := range []struct {
		hits uint64
		at   time.Duration
	}{{0, 0}, {1, 2 * time.Millisecond}, {500, time.Second}, {1500, 3 * time.Second}} {
		if at, stop := r.Pace(tc.hits); stop || at != tc.at {
			t.Errorf("Pace(%d) = %v, %v; want %v", tc.hits, at, stop, tc.at)
		}
	}
}

func TestBurstPace(t *testing.T) {
	b := Burst{Every: 100 * time.Millisecond, Size: 3}
	want := []time.Duration{0, 0, 0, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}
	for i, w := range want {
		if at, _ := b.Pace(uint64(i)); at != w {
			t.Errorf("Pace(%d) = %v, want %v", i, at, w)
		}
	}
}

// The ramp pacer's schedule integrates the rate: ramping 0→100/s over 2 s
// then holding 100/s for 1 s schedules 100 + 100 requests.
func TestRampRatePace(t *testing.T) {
	p := NewRampRate(Ramp{Start: 0, Stages: []Stage{{Duration: 2 * time.Second, Target: 100}, {Duration: time.Second, Target: 100}}})
	var n uint64
	var last time.Duration
	for {
		at, stop := p.Pace(n)
		if stop {
			break
		}
		if at < last {
			t.Fatalf("schedule goes back at %d: %v < %v", n, at, last)
		}
		last = at
		n++
	}
	if n != 200 {
		t.Errorf("scheduled %d requests, want 200", n)
	}
	// At the end of the ramp, 100 requests are scheduled: the 100th at ~2 s.
	if at, _ := p.Pace(99); math.Abs(at.Seconds()-math.Sqrt(2*99/50.0)) > 1e-6 {
		t.Errorf("Pace(99) = %v, want %.6fs", at, math.Sqrt(2*99/50.0))
	}
	// In the ramp, the rate at t is 50·t: requests before t are 25·t².
	if at, _ := p.Pace(25); math.Abs(at.Seconds()-1) > 1e-9 {
		t.Errorf("Pace(25) = %v, want 1s", at)
	}
	step := NewRampRate(Ramp{Stages: []Stage{{Duration: time.Second, Target: 10, Step: true}, {Duration: time.Second, Target: 20, Step: true}}})
	if at, _ := step.Pace(15); at != 1250*time.Millisecond {
		t.Errorf("step Pace(15) = %v, want 1.25s", at)
	}
}

func TestSourceLimitExact(t *testing.T) {
	s := NewSource(nil, 1000, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, _, ok := s.Claim(0); !ok {
					return
				}
				mu.Lock()
				got++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got != 1000 {
		t.Errorf("claimed %d, want 1000", got)
	}
}

func TestSourceDuration(t *testing.T) {
	open := NewSource(Rate{PerSecond: 10}, 0, time.Second)
	n := 0
	for {
		if _, _, ok := open.Claim(0); !ok {
			break
		}
		n++
	}
	if n != 10 {
		t.Errorf("open model: %d requests in 1 s at 10/s, want 10", n)
	}
	closed := NewSource(nil, 0, time.Second)
	if _, _, ok := closed.Claim(999 * time.Millisecond); !ok {
		t.Error("closed model refused a claim before the deadline")
	}
	if _, _, ok := closed.Claim(time.Second); ok {
		t.Error("closed model claimed at the deadline")
	}
	closed.Stop()
	if _, _, ok := closed.Claim(0); ok {
		t.Error("claim after Stop")
	}
}

func TestSourceActive(t *testing.T) {
	s := NewSource(nil, 0, 3*time.Second)
	s.SetConnections(Ramp{Start: 0, Stages: []Stage{{Duration: time.Second, Target: 10}, {Duration: time.Second, Target: 10}, {Duration: time.Second, Target: 0}}})
	if ok, _, _ := s.Active(0, 0); ok {
		t.Error("connection 0 active at 0 with a ramp from 0")
	}
	if ok, wait, _ := s.Active(4, 200*time.Millisecond); ok || wait < 280*time.Millisecond || wait > 310*time.Millisecond {
		t.Errorf("connection 4 at 0.2 s: active %v, wait %v; want ~0.3 s", ok, wait)
	}
	if ok, _, _ := s.Active(9, 1500*time.Millisecond); !ok {
		t.Error("connection 9 inactive at the plateau")
	}
	if ok, _, never := s.Active(9, 2500*time.Millisecond); ok || !never {
		t.Errorf("connection 9 during ramp-down: active %v never %v", ok, never)
	}
	if ok, _, _ := NewSource(nil, 0, 0).Active(12345, 0); !ok {
		t.Error("without stages every connection is active")
	}
}

// A warped schedule follows each stage's rate with random gaps: its
// requests per stage are the stage's rate × length (within Poisson's
// spread), and it ends with the last stage.
func TestWarped(t *testing.T) {
	t.Parallel()
	ramp := NewRampRate(Ramp{Stages: []Stage{{Duration: 10 * time.Second, Target: 100, Step: true}, {Duration: 10 * time.Second, Target: 400, Step: true}}})
	w := Warped{Unit: NewArrivals(1, 1, 3), Ramp: ramp}
	var first, second int
	var last time.Duration
	gaps := map[time.Duration]bool{}
	for hit := uint64(0); ; hit++ {
		at, stop := w.Pace(hit)
		if stop {
			break
		}
		if at < last {
			t.Fatalf("request %d at %v, before %v", hit, at, last)
		}
		gaps[(at-last)/time.Millisecond] = true
		last = at
		if at < 10*time.Second {
			first++
		} else {
			second++
		}
	}
	if first < 900 || first > 1100 || second < 3800 || second > 4200 || len(gaps) < 20 {
		t.Errorf("%d requests in the first stage (1000 asked), %d in the second (4000), %d distinct gaps", first, second, len(gaps))
	}
}
