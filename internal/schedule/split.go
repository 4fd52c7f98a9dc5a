package schedule

import (
	"math"
	"sort"
	"time"
)

// Split deals one schedule's numbers — request numbers, connection numbers
// — among parts in proportion to their weights, interleaved: over every
// period of P numbers, part k gets w_k of them, spread out as a smooth
// weighted round robin lays them out (weights 7 and 3: A B A A B A A B A
// A). A part's i-th number and how many of its numbers lie below a global
// one are each O(1), with no shared state, so every part (a run's origins,
// each on its own engine) paces itself from the one schedule lock-free, and
// the parts together hold exactly the numbers the schedule does.
type Split struct {
	period uint64
	pos    [][]uint64 // per part, its positions within a period, ascending
}

// splitScale is how finely weights are resolved: a part's share is kept
// to within 1/splitScale.
const splitScale = 1000

// NewSplit makes the split of weights (non-negative, at least one
// positive). A part of weight 0 gets no numbers; one of positive weight
// gets at least one per period.
func NewSplit(weights []float64) *Split {
	var sum float64
	for _, w := range weights {
		sum += math.Max(w, 0)
	}
	iw := make([]uint64, len(weights))
	var g uint64
	for k, w := range weights {
		if w > 0 && sum > 0 {
			iw[k] = max(1, uint64(math.Round(w/sum*splitScale)))
			g = gcd(g, iw[k])
		}
	}
	s := &Split{pos: make([][]uint64, len(weights))}
	if g == 0 {
		return s
	}
	for k := range iw {
		iw[k] /= g
		s.period += iw[k]
	}
	// Smooth weighted round robin: each turn every part gains its weight;
	// the one with the most takes the turn and pays the total.
	credit := make([]int64, len(iw))
	for p := uint64(0); p < s.period; p++ {
		best := -1
		for k, w := range iw {
			if w == 0 {
				continue
			}
			credit[k] += int64(w)
			if best < 0 || credit[k] > credit[best] {
				best = k
			}
		}
		credit[best] -= int64(s.period)
		s.pos[best] = append(s.pos[best], p)
	}
	return s
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Parts is the number of parts.
func (s *Split) Parts() int { return len(s.pos) }

// Global is part's i-th number (from 0) in the whole schedule; part must
// have a positive weight.
func (s *Split) Global(part int, i uint64) uint64 {
	pos := s.pos[part]
	n := uint64(len(pos))
	return i/n*s.period + pos[i%n]
}

// Count is how many of part's numbers are below g.
func (s *Split) Count(part int, g uint64) uint64 {
	pos := s.pos[part]
	if len(pos) == 0 {
		return 0
	}
	rest := g % s.period
	in := sort.Search(len(pos), func(i int) bool { return pos[i] >= rest })
	return g/s.period*uint64(len(pos)) + uint64(in)
}

// Pacer paces part's requests: its i-th request is the whole schedule's
// Global(part, i)-th.
func (s *Split) Pacer(inner Pacer, part int) Pacer {
	if len(s.pos[part]) == 0 {
		return splitPacer{s: s, inner: nil, part: part}
	}
	return splitPacer{s: s, inner: inner, part: part}
}

type splitPacer struct {
	s     *Split
	inner Pacer
	part  int
}

// Pace implements Pacer.
func (p splitPacer) Pace(hits uint64) (time.Duration, bool) {
	if p.inner == nil {
		return 0, true
	}
	return p.inner.Pace(p.s.Global(p.part, hits))
}
