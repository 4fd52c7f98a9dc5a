package run

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/stats"
)

// The parts of every total add up to it, one each at least while the
// total allows, in proportion to the weights.
func TestConnSharePartsAddUp(t *testing.T) {
	t.Parallel()
	for _, shares := range [][]float64{{0.7, 0.3}, {1, 1, 1}, {0.98, 0.01, 0.01}, {0.5, 0.5}} {
		c := newConnShare(shares, make([][]int, len(shares)))
		for total := 0; total <= 200; total++ {
			sum := 0
			for k := range shares {
				p := c.part(k, total)
				if total >= len(shares) && p < 1 {
					t.Fatalf("%v: origin %d gets %d of %d", shares, k, p, total)
				}
				sum += p
			}
			if sum != total {
				t.Fatalf("%v: the parts of %d add up to %d", shares, total, sum)
			}
		}
		if p := c.part(0, 100); shares[0] == 0.7 && p != 70 {
			t.Errorf("%v: origin 0 gets %d of 100, want 70", shares, p)
		}
	}
}

// A closed-model run's connections follow each origin's share times its
// latency: an origin four times slower holds four times the connections
// at the same share, so both send at the same rate.
func TestConnShareFollowsLatency(t *testing.T) {
	t.Parallel()
	c := newConnShare([]float64{0.5, 0.5}, [][]int{{0}, {1}})
	totals := []*stats.Totals{stats.NewTotals(), stats.NewTotals()}
	add := func(step int, n int64, lat float64) {
		totals[step].Status[200] += n
		totals[step].LatencySum += int64(float64(n) * lat * 1e9)
	}
	if a, b := c.part(0, 20), c.part(1, 20); a != 10 || b != 10 {
		t.Fatalf("before any latency: %d and %d of 20", a, b)
	}
	// A closed loop: each origin's connections send back to back, so a
	// second brings it its connections over its latency in requests.
	lat := []float64{0.001, 0.004}
	for range 10 {
		for k := range lat {
			add(k, int64(float64(c.part(k, 20))/lat[k]), lat[k])
		}
		c.rebalance(totals, 20, time.Second)
	}
	if a, b := c.part(0, 20), c.part(1, 20); a != 4 || b != 16 {
		t.Errorf("1 ms and 4 ms: %d and %d of 20, want 4 and 16", a, b)
	}
	if c.most[1].Load() != 16 || c.most[0].Load() != 4 {
		t.Errorf("most held: %d and %d", c.most[0].Load(), c.most[1].Load())
	}
	// Noise under a tenth moves nothing.
	before := c.weights[0].Load()
	add(0, 4000, 0.00104)
	add(1, 4000, 0.004)
	c.rebalance(totals, 20, time.Second)
	if c.weights[0].Load() != before {
		t.Error("a 4% change of latency re-dealt the connections")
	}
}

// An origin far faster than the others gets less than a connection: it
// holds one, which pauses after each request for as long as keeps it busy
// only its part of the time.
func TestConnSharePausesAFraction(t *testing.T) {
	t.Parallel()
	c := newConnShare([]float64{0.5, 0.5}, [][]int{{0}, {1}})
	totals := []*stats.Totals{stats.NewTotals(), stats.NewTotals()}
	totals[0].Status[200], totals[0].LatencySum = 100000, 100000*5000 // 5 µs
	totals[1].Status[200], totals[1].LatencySum = 1000, 1000*1000000  // 1 ms
	c.rebalance(totals, 20, time.Second)
	// Its part: 20 × 5 µs / (5 µs + 1 ms) ≈ 0.0995 of a connection: as
	// many requests a second as the slow origin's 19 connections send
	// (1,000 in the tick), in runs of 10 ms' worth (10 requests), each
	// run 10 × 5 µs busy and the rest of its 10 ms a pause.
	if every, got := c.every[0].Load(), time.Duration(c.pause[0].Load()); every != 10 || got < 9949*time.Microsecond || got > 9951*time.Microsecond {
		t.Errorf("the fast origin pauses %v every %d requests, want 9.95ms every 10", got, every)
	}
	if c.pause[1].Load() != 0 || c.part(0, 20) != 1 || c.part(1, 20) != 19 {
		t.Errorf("the slow origin pauses %v; parts %d and %d", time.Duration(c.pause[1].Load()), c.part(0, 20), c.part(1, 20))
	}
}

// forwarding is a builder that reads token streams and reserves values.
type forwarding struct {
	in, out  int64
	released uint32
}

func (f *forwarding) Next(uint64) ([]byte, int, bool, bool)  { return nil, 0, false, false }
func (f *forwarding) Done(int, *http1.Parser) engine.Verdict { return engine.Verdict{} }

func (f *forwarding) StreamTokens(in, out int64)   { f.in, f.out = in, out }
func (f *forwarding) Reserved() uint32             { return 7 }
func (f *forwarding) Release(token uint32, _ bool) { f.released = token }

// A paced origin's builder still reads its streams' tokens and gives back
// what it reserved: paced forwards engine.TokenReader and engine.Reserver.
func TestPacedForwards(t *testing.T) {
	f := &forwarding{}
	var pause, every atomic.Int64
	var reqs engine.Requests = newPaced(f, &pause, &every)
	reqs.(engine.TokenReader).StreamTokens(3, 4)
	r := reqs.(engine.Reserver)
	r.Release(r.Reserved(), true)
	if f.in != 3 || f.out != 4 || f.released != 7 {
		t.Errorf("forwarded tokens %d, %d and release %d; want 3, 4 and 7", f.in, f.out, f.released)
	}
	if engine.SharedBodies(reqs) != nil {
		t.Error("a builder without shared bodies has some once paced")
	}
	body := []byte("a shared body")
	shared := newPaced(&engine.Static{Bodies: [][]byte{body}}, &pause, &every)
	if sb := engine.SharedBodies(shared); sb == nil || string(sb.Body(0, 0)) != string(body) {
		t.Error("a paced builder hides its shared bodies: the engine would send their heads alone")
	}
}
