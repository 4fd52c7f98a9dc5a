package scenario

import (
	"math"

	"github.com/hail-loadgen/hail/internal/random"
)

// mix is the weighted choice among a scenario's activities: each step with
// a weight, and each flow (a sequence of steps walked by one virtual user).
// Weights become a cumulative integer table once; a pick is one random
// number and a binary search.
type mix struct {
	acts    []activity
	weights []uint64
	cum     []uint64 // cum[i] = weights[0] + … + weights[i]
	total   uint64
}

// activity is one step (flow < 0) or one flow.
type activity struct {
	step int
	flow int
}

// weightScale spreads the weights over integers with plenty of precision.
const weightScale = 1 << 40

// newMix makes the choice among steps and flows: all of them (origin -1),
// or those sent to one origin.
func newMix(steps []*Step, flows []*Flow, origin int) mix {
	var m mix
	var sum float64
	for _, s := range steps {
		if origin < 0 || s.origin == origin {
			sum += s.Weight
		}
	}
	for _, f := range flows {
		if origin < 0 || f.origin == origin {
			sum += f.Weight
		}
	}
	add := func(a activity, w float64) {
		if w <= 0 || sum <= 0 {
			return
		}
		iw := uint64(math.Round(w / sum * weightScale))
		if iw == 0 {
			iw = 1
		}
		m.acts = append(m.acts, a)
		m.weights = append(m.weights, iw)
		m.total += iw
		m.cum = append(m.cum, m.total)
	}
	for i, s := range steps {
		if origin < 0 || s.origin == origin {
			add(activity{step: i, flow: -1}, s.Weight)
		}
	}
	for i, f := range flows {
		if origin < 0 || f.origin == origin {
			add(activity{step: -1, flow: i}, f.Weight)
		}
	}
	return m
}

// pick chooses an activity by weight.
func (m *mix) pick(r *random.Rand) int {
	x := r.Uint64n(m.total)
	lo, hi := 0, len(m.cum)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.cum[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// pickExcluding chooses by weight among the activities not excluded, or
// returns -1 when every one is.
func (m *mix) pickExcluding(r *random.Rand, excluded []bool) int {
	var total uint64
	for i, w := range m.weights {
		if !excluded[i] {
			total += w
		}
	}
	if total == 0 {
		return -1
	}
	x := r.Uint64n(total)
	for i, w := range m.weights {
		if excluded[i] {
			continue
		}
		if x < w {
			return i
		}
		x -= w
	}
	return -1
}
