package run

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
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
// share. (Its "latency" here is the time a request holds a connection: the
// server's latency and hail's own work around it, measured as connections
// over rate.) The mix of requests across origins then follows the weights
// in the closed model as it does in the open one, and the total in flight
// is the stage's count. An origin whose part is less than one connection
// (one far faster than the others) holds one, which sends a run of
// requests and then pauses, for as long as keeps it busy only that part of
// the time: a fraction of a connection. Its runs are long enough that the
// pause is some milliseconds (a timer oversleeps a pause of microseconds),
// and the pause is corrected each second by the requests it did send
// against those its share asks for. Latencies are
// measured once a second (an exponential average of each second's mean),
// and the deal changes only when an origin's weight moves by more than a
// tenth, so that connections are not parked and reopened for noise.
type connShare struct {
	shares  []float64
	steps   [][]int         // each origin's steps
	weights []atomic.Uint64 // float64 bits: share × latency
	lat     []float64       // the averaged time a request holds a connection, s (0: none measured yet)
	prev    []struct{ sum, n int64 }
	rate    []float64      // requests a second of each origin over the last tick
	active  int            // the connections active at the last tick
	most    []atomic.Int64 // the most connections each origin held at a tick
	pause   []atomic.Int64 // ns a fraction of a connection waits after each run of requests
	every   []atomic.Int64 // its runs' length, in requests
}

// The pause of a fraction of a connection: at most a second, so that a
// change of the stages is followed within it, and at least some
// milliseconds (its runs of requests are as long as that takes). An
// origin whose part is under pacedBelow connections is paced so: its
// connections round the part too coarsely to give its share (a part of
// 1.4 is one or two, 40% off).
const (
	maxPause   = time.Second
	minPause   = 10 * time.Millisecond
	pacedBelow = 8
)

func newConnShare(shares []float64, steps [][]int) *connShare {
	c := &connShare{shares: shares, steps: steps, weights: make([]atomic.Uint64, len(shares)),
		lat: make([]float64, len(shares)), prev: make([]struct{ sum, n int64 }, len(shares)), most: make([]atomic.Int64, len(shares)),
		pause: make([]atomic.Int64, len(shares)), every: make([]atomic.Int64, len(shares)), rate: make([]float64, len(shares))}
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

// rebalance measures each origin over the last tick (dt long), from the
// steps' totals (the collector's, so far): its requests a second, and the
// time each of its requests held a connection — its connections over its
// rate, less its pauses; its latency when that is larger, or when it sent
// nothing — and updates the weights and pauses. What a request holds a
// connection for is its latency and hail's own work around it, which for a
// fast server may be most of it.
func (c *connShare) rebalance(totals []*stats.Totals, active int, dt time.Duration) {
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
		if dt <= 0 || dn <= 0 {
			continue
		}
		c.rate[k] = float64(dn) / dt.Seconds()
		busy := float64(dsum) / float64(dn) / 1e9 // its latency
		if held := c.part(k, c.active); held > 0 && c.active > 0 {
			cycle := float64(held) / c.rate[k]
			if every := c.every[k].Load(); every > 0 {
				cycle -= time.Duration(c.pause[k].Load()).Seconds() / float64(every)
			}
			busy = max(busy, cycle)
		}
		if c.lat[k] == 0 {
			c.lat[k] = busy
		} else {
			c.lat[k] = 0.3*busy + 0.7*c.lat[k]
		}
	}
	c.active = active
	// Until every origin has been measured, the weights stay the shares.
	for _, l := range c.lat {
		if l == 0 {
			c.noteMost(active)
			return
		}
	}
	var sum float64
	for k := range c.weights {
		w := c.shares[k] * math.Max(c.lat[k], 1e-9)
		old := math.Float64frombits(c.weights[k].Load())
		if math.Abs(w-old) > 0.1*old {
			c.weights[k].Store(math.Float64bits(w))
		}
		sum += math.Float64frombits(c.weights[k].Load())
	}
	// The rate a share buys: that of the origins holding many connections.
	var refRate, refShare float64
	xs := make([]float64, len(c.weights))
	for k := range c.weights {
		xs[k] = float64(active) * math.Float64frombits(c.weights[k].Load()) / sum
		if xs[k] >= pacedBelow {
			refRate += c.rate[k]
			refShare += c.shares[k]
		}
	}
	for k, x := range xs {
		// Few connections round its part coarsely (1.4 is one or two): they
		// send runs of requests, then pause, for the rate its share asks for.
		var pause time.Duration
		every := int64(1)
		held := c.part(k, active)
		if x < pacedBelow && refRate > 0 && held > 0 {
			target := refRate * c.shares[k] / refShare / float64(held) // requests a second of each of its connections
			every = max(1, int64(math.Round(minPause.Seconds()*target)))
			run := float64(every) / target // a run and its pause
			old, oldEvery := time.Duration(c.pause[k].Load()), c.every[k].Load()
			if old > 0 && oldEvery == every && c.rate[k] > 0 {
				// Move the cycle toward the one its share asks for.
				pause = old + time.Duration(0.7*(run-float64(every)*float64(held)/c.rate[k])*1e9)
			} else {
				pause = time.Duration((run - float64(every)*c.lat[k]) * 1e9)
			}
			pause = min(max(pause, time.Microsecond), maxPause)
		}
		c.every[k].Store(every)
		c.pause[k].Store(int64(pause))
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

// paced is an origin's request builder in a closed-model run whose
// connections it may hold a fraction of: after each run of requests, its
// connection pauses as connShare says (or as long as the step says, if
// longer).
type paced struct {
	engine.Requests
	pause, every *atomic.Int64
	n            int64 // requests since the last pause
}

// newPaced wraps r, keeping what the engines ask of it beside Requests:
// its shared bodies (engine.SharedBody: a body_file of engine.SplitAt or
// more, which the engine sends after the head), its reservations and its
// token captures.
func newPaced(r engine.Requests, pause, every *atomic.Int64) engine.Requests {
	p := &paced{Requests: r, pause: pause, every: every}
	if sb := engine.SharedBodies(r); sb != nil {
		return &pacedBody{paced: p, body: sb}
	}
	return p
}

// pacedBody is a paced builder whose requests may have shared bodies.
type pacedBody struct {
	*paced
	body engine.SharedBody
}

// Body implements engine.SharedBody.
func (p *pacedBody) Body(hit uint64, step int) []byte { return p.body.Body(hit, step) }

// StreamTokens hands a token stream's tokens to the builder it wraps, if
// it reads them (engine.TokenReader: a scenario's llm captures).
func (p *paced) StreamTokens(in, out int64) {
	if t, ok := p.Requests.(engine.TokenReader); ok {
		t.StreamTokens(in, out)
	}
}

// Reserved implements engine.Reserver for the builder it wraps (0 when
// it reserves nothing): a {{take}} of a request never sent goes back to
// its pool on a paced origin too.
func (p *paced) Reserved() uint32 {
	if r, ok := p.Requests.(engine.Reserver); ok {
		return r.Reserved()
	}
	return 0
}

// Release implements engine.Reserver for the builder it wraps.
func (p *paced) Release(token uint32, unsent bool) {
	if r, ok := p.Requests.(engine.Reserver); ok {
		r.Release(token, unsent)
	}
}

// Done implements engine.Requests.
func (p *paced) Done(step int, r *http1.Parser) engine.Verdict {
	v := p.Requests.Done(step, r)
	if pause := time.Duration(p.pause.Load()); pause > 0 {
		if p.n++; p.n >= p.every.Load() {
			p.n = 0
			v.Think = max(v.Think, pause)
		}
	}
	return v
}
