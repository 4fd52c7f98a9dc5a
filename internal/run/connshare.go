package run

import (
	"math"
	"sync/atomic"

	"github.com/hail-loadgen/hail/internal/stats"
)

// connShare deals a closed-model run's connections among its origins as
// that many virtual users would share their time: a user spends, on each
// origin, its share of the requests times the origin's latency, so at any
// moment origin k holds
//
//	connections × share_k × latency_k / Σ_j share_j × latency_j
//
// of them. Each origin's connections send back to back, so its requests
// per second are its connections over its latency: proportional to its
// share. The mix of requests across origins then follows the weights in
// the closed model as it does in the open one, and the total in flight is
// the stage's count. Latencies are measured once a second (an exponential
// average of each second's mean), and the deal changes only when an
// origin's weight moves by more than a tenth, so that connections are not
// parked and reopened for noise.
type connShare struct {
	shares  []float64
	steps   [][]int         // each origin's steps
	weights []atomic.Uint64 // float64 bits: share × latency
	lat     []float64       // the averaged latency, s (0: none measured yet)
	prev    []struct{ sum, n int64 }
	most    []atomic.Int64 // the most connections each origin held at a tick
}

func newConnShare(shares []float64, steps [][]int) *connShare {
	c := &connShare{shares: shares, steps: steps, weights: make([]atomic.Uint64, len(shares)),
		lat: make([]float64, len(shares)), prev: make([]struct{ sum, n int64 }, len(shares)), most: make([]atomic.Int64, len(shares))}
	for k, s := range shares {
		c.weights[k].Store(math.Float64bits(s))
	}
	return c
}

// part is origin k's part of total connections: the total dealt by the
// weights, largest remainders first, and at least one each while the
// total allows (an origin whose share would round to none gets one, and
// the others share the rest). Every origin computes the same deal, so the
// parts add up to the total.
func (c *connShare) part(k, total int) int {
	n := len(c.weights)
	if total <= 0 {
		return 0
	}
	var buf [3][8]float64
	w, x, fixed := buf[0][:0], buf[1][:0], buf[2][:0]
	if n > 8 {
		w, x, fixed = make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	}
	for i := range c.weights {
		w = append(w, math.Max(math.Float64frombits(c.weights[i].Load()), 1e-12))
		x = append(x, 0)
		fixed = append(fixed, 0) // 1: held at one connection
	}
	if total < n { // too few for one each: the heaviest get one
		rank := 0
		for i := range w {
			if w[i] > w[k] || w[i] == w[k] && i < k {
				rank++
			}
		}
		if rank < total {
			return 1
		}
		return 0
	}
	for {
		var sum float64
		rest := total
		for i := range w {
			if fixed[i] == 1 {
				rest--
			} else {
				sum += w[i]
			}
		}
		changed := false
		for i := range w {
			if fixed[i] == 0 {
				if x[i] = float64(rest) * w[i] / sum; x[i] < 1 {
					fixed[i], changed = 1, true
				}
			}
		}
		if !changed {
			break
		}
	}
	if fixed[k] == 1 {
		return 1
	}
	left := total
	for i := range x {
		if fixed[i] == 1 {
			left--
		} else {
			left -= int(x[i])
		}
	}
	rk := x[k] - math.Floor(x[k])
	rank := 0
	for i := range x {
		if fixed[i] == 1 || i == k {
			continue
		}
		if ri := x[i] - math.Floor(x[i]); ri > rk || ri == rk && i < k {
			rank++
		}
	}
	if rank < left {
		return int(x[k]) + 1
	}
	return int(x[k])
}

// rebalance measures each origin's latency over the last tick from the
// steps' totals (the collector's, so far) and updates the weights.
func (c *connShare) rebalance(totals []*stats.Totals, active int) {
	for k, steps := range c.steps {
		var sum, n int64
		for _, st := range steps {
			if st < len(totals) {
				sum += totals[st].LatencySum
				n += totals[st].Responses()
			}
		}
		dsum, dn := sum-c.prev[k].sum, n-c.prev[k].n
		c.prev[k].sum, c.prev[k].n = sum, n
		if dn > 0 {
			l := float64(dsum) / float64(dn) / 1e9
			if c.lat[k] == 0 {
				c.lat[k] = l
			} else {
				c.lat[k] = 0.3*l + 0.7*c.lat[k]
			}
		}
	}
	// Until every origin has a latency, the weights stay the shares.
	for _, l := range c.lat {
		if l == 0 {
			c.noteMost(active)
			return
		}
	}
	for k := range c.weights {
		w := c.shares[k] * math.Max(c.lat[k], 1e-6)
		old := math.Float64frombits(c.weights[k].Load())
		if math.Abs(w-old) > 0.1*old {
			c.weights[k].Store(math.Float64bits(w))
		}
	}
	c.noteMost(active)
}

// noteMost records each origin's part of active connections, keeping the
// most.
func (c *connShare) noteMost(active int) {
	for k := range c.most {
		p := int64(c.part(k, active))
		for {
			old := c.most[k].Load()
			if p <= old || c.most[k].CompareAndSwap(old, p) {
				break
			}
		}
	}
}
