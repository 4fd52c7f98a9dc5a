package schedule

import (
	"testing"
	"time"
)

// A split deals every number to exactly one part, in proportion to the
// weights over every period, and Global and Count agree.
func TestSplit(t *testing.T) {
	t.Parallel()
	for _, weights := range [][]float64{{70, 30}, {7, 2, 1}, {1}, {0.5, 0.25, 0.25}, {3, 0, 1}, {1, 999}} {
		s := NewSplit(weights)
		const n = 5000
		owner := make([]int, n)
		for i := range owner {
			owner[i] = -1
		}
		for k := range weights {
			if weights[k] == 0 {
				if s.Count(k, n) != 0 {
					t.Errorf("%v: part %d of weight 0 counts %d numbers", weights, k, s.Count(k, n))
				}
				continue
			}
			for i := uint64(0); ; i++ {
				g := s.Global(k, i)
				if g >= n {
					if c := s.Count(k, n); c != i {
						t.Errorf("%v: part %d: Count(%d) = %d, Global reached %d numbers", weights, k, n, c, i)
					}
					break
				}
				if owner[g] >= 0 {
					t.Fatalf("%v: number %d dealt to parts %d and %d", weights, g, owner[g], k)
				}
				owner[g] = k
				if c := s.Count(k, g); c != i {
					t.Fatalf("%v: part %d: Count(%d) = %d, want %d", weights, k, g, c, i)
				}
			}
		}
		var sum float64
		for _, w := range weights {
			sum += w
		}
		got := make([]int, len(weights))
		for g, k := range owner {
			if k < 0 {
				t.Fatalf("%v: number %d dealt to no part", weights, g)
			}
			got[k]++
		}
		for k, w := range weights {
			if want := w / sum * n; float64(got[k]) < want-float64(n)/splitScale-1 || float64(got[k]) > want+float64(n)/splitScale+1 {
				t.Errorf("%v: part %d got %d of %d numbers, want about %.0f", weights, k, got[k], n, want)
			}
		}
	}
	// Interleaved, not in blocks: 70/30 never gives the second part two
	// numbers in a row, nor the first more than three.
	s := NewSplit([]float64{70, 30})
	run, prev := 0, -1
	for g := uint64(0); g < 1000; g++ {
		k := 0
		if s.Count(1, g+1) > s.Count(1, g) {
			k = 1
		}
		if k == prev {
			run++
		} else {
			run = 1
		}
		prev = k
		if k == 1 && run > 1 || k == 0 && run > 3 {
			t.Fatalf("part %d has %d numbers in a row at %d", k, run, g)
		}
	}
}

// A part's pacer gives its requests the whole schedule's times.
func TestSplitPacer(t *testing.T) {
	t.Parallel()
	s := NewSplit([]float64{3, 1})
	whole := Rate{PerSecond: 1000}
	for k := range 2 {
		p := s.Pacer(whole, k)
		for i := uint64(0); i < 100; i++ {
			at, stop := p.Pace(i)
			want, _ := whole.Pace(s.Global(k, i))
			if stop || at != want {
				t.Fatalf("part %d request %d at %v, want %v", k, i, at, want)
			}
		}
	}
	if _, stop := NewSplit([]float64{1, 0}).Pacer(whole, 1).Pace(0); !stop {
		t.Error("a part of weight 0 was paced")
	}
}

// Connection stages split: the parts' active connections add up to the
// ramp's at every moment.
func TestSplitConnections(t *testing.T) {
	t.Parallel()
	s := NewSplit([]float64{7, 2, 1})
	r := Ramp{Stages: []Stage{{Duration: time.Second, Target: 100}}}
	srcs := make([]*Source, 3)
	for k := range srcs {
		srcs[k] = NewSource(nil, 0, 0)
		srcs[k].SetConnections(r)
		srcs[k].SplitConnections(func(total int) int { return int(s.Count(k, uint64(total))) })
	}
	whole := NewSource(nil, 0, 0)
	whole.SetConnections(r)
	for ms := 0; ms <= 1000; ms += 7 {
		el := time.Duration(ms) * time.Millisecond
		sum := 0
		for _, src := range srcs {
			sum += src.ActiveConns(el)
		}
		if w := whole.ActiveConns(el); sum != w {
			t.Fatalf("at %v the parts have %d active connections, the ramp %d", el, sum, w)
		}
	}
	if active, wait, never := srcs[2].Active(9, 500*time.Millisecond); active || never || wait <= 0 {
		t.Errorf("part 2's 10th connection at 0.5 s: active %v, wait %v, never %v; want inactive until later", active, wait, never)
	}
}

// A connection that its part of a split leaves inactive is told never once
// the run has no request left for it: its requests all claimed, the run
// stopped, or a closed-model duration over. (It used to look again every
// 100 ms for good, and a run of a request count, whose engine waits for
// every connection, never ended: TestScenarioFileTargets hung.)
func TestSplitConnectionNeverWhenOver(t *testing.T) {
	t.Parallel()
	r := Ramp{Stages: []Stage{{Duration: time.Second, Target: 4}}}
	for _, tc := range []struct {
		name string
		src  *Source
		at   time.Duration
		end  func(*Source)
	}{
		{"claimed", NewSource(nil, 3, 0), 2 * time.Second, func(s *Source) {
			for range 3 {
				s.Claim(0)
			}
		}},
		{"stopped", NewSource(nil, 0, 0), 2 * time.Second, (*Source).Stop},
		{"duration", NewSource(nil, 0, 5*time.Second), 5 * time.Second, func(*Source) {}},
	} {
		tc.src.SetConnections(r)
		tc.src.SplitConnections(func(total int) int { return total / 2 })
		if active, wait, never := tc.src.Active(3, 2*time.Second); active || never || wait != partRecheck {
			t.Errorf("%s: before the end: active %v, wait %v, never %v; want inactive, looking again in %v", tc.name, active, wait, never, partRecheck)
		}
		tc.end(tc.src)
		if active, _, never := tc.src.Active(3, tc.at); active || !never {
			t.Errorf("%s: after the end: active %v, never %v; want never", tc.name, active, never)
		}
	}
}
