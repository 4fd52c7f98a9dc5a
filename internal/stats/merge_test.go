package stats

import (
	"encoding/binary"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// drainAll is the drain before touched blocks: every count of h looked at.
// It is the reference the tests compare with, and the benchmarks' baseline.
func drainAll(h *atomicHist, dst *hdr.Histogram) {
	for i := range h.counts {
		if c := atomic.SwapInt64(&h.counts[i], 0); c != 0 {
			_ = dst.RecordValues(valueAt(i), c)
		}
	}
	atomic.StoreUint64(&h.touched, 0)
}

// secondOfHdr is secondOf as it was: merges and percentiles by hdr's own
// Merge, ValueAtQuantile and Max, the reference for the series' fields.
func secondOfHdr(s *Totals) Second {
	lat := NewHist()
	lat.Merge(s.LatencyOK)
	lat.Merge(s.LatencyBad)
	sec := Second{P50: time.Duration(lat.ValueAtQuantile(50)), P90: time.Duration(lat.ValueAtQuantile(90)),
		P99: time.Duration(lat.ValueAtQuantile(99)), P999: time.Duration(lat.ValueAtQuantile(99.9)), Max: time.Duration(lat.Max())}
	lat.Merge(s.Failed)
	sec.AllSentP50, sec.AllSentP99, sec.AllSentMax = time.Duration(lat.ValueAtQuantile(50)), time.Duration(lat.ValueAtQuantile(99)), time.Duration(lat.Max())
	return sec
}

// mergeCase records values (v, histogram k, recorder i) into a collector of
// steps × slots groups of two recorders each, ticking after each batch, and
// into hdr histograms directly (the run's, each step's, each slot's), then
// checks that every histogram of the collector's totals equals its
// reference exactly, and each second's percentiles equal hdr's.
func mergeCase(t *testing.T, steps, slots int, live bool, batches [][][3]int64) {
	t.Helper()
	groups := make([][]*Recorder, steps*slots)
	for g := range groups {
		groups[g] = []*Recorder{NewRecorder(), NewRecorder()}
	}
	start := time.Unix(1000, 0)
	c := NewStageCollector(groups, steps, start)
	if live {
		c.LiveStreams()
	}
	const all = numHists + numStreamHists
	ref := func() [all]*hdr.Histogram {
		var hs [all]*hdr.Histogram
		for k := range hs {
			hs[k] = NewHist()
		}
		return hs
	}
	total, perStep, perSlot := ref(), make([][all]*hdr.Histogram, steps), make([][all]*hdr.Histogram, slots)
	for i := range perStep {
		perStep[i] = ref()
	}
	for i := range perSlot {
		perSlot[i] = ref()
	}
	for b, batch := range batches {
		tick := NewTotals()
		for _, x := range batch {
			v, k, g := x[0], int(x[1])%all, int(x[2])%len(groups)
			r := groups[g][int(x[2]/int64(len(groups)))%2]
			if k < numHists {
				r.hists()[k].record(v)
			} else {
				r.stream(true).hists()[k-numHists].record(v)
				r.StreamEvent() // the stream moved: a live drain scans it
			}
			cv := min(max(v, HistLowest), HistHighest)
			for _, h := range []*hdr.Histogram{total[k], perStep[g%steps][k], perSlot[g/steps][k]} {
				_ = h.RecordValue(cv)
			}
			if k < numHists {
				_ = tick.hists()[k].RecordValue(cv)
			}
		}
		now := start.Add(time.Duration(b+1) * time.Second)
		if b == len(batches)-1 {
			c.Finish(now)
		} else {
			c.Tick(now)
		}
		want := secondOfHdr(tick)
		c.LastTick(func(got *Totals) {
			for k, h := range got.hists() {
				if !h.Equals(tick.hists()[k]) {
					t.Fatalf("tick %d: histogram %d differs from hdr's", b, k)
				}
			}
		})
		got := c.last
		if got.P50 != want.P50 || got.P90 != want.P90 || got.P99 != want.P99 || got.P999 != want.P999 || got.Max != want.Max ||
			got.AllSentP50 != want.AllSentP50 || got.AllSentP99 != want.AllSentP99 || got.AllSentMax != want.AllSentMax {
			t.Fatalf("tick %d: second %+v, hdr's %+v", b, got, want)
		}
	}
	check := func(what string, got *Totals, want [all]*hdr.Histogram) {
		t.Helper()
		hists := got.hists()
		if got.Stream == nil {
			got.ensureStreams(true)
		}
		for k, h := range append(hists[:], got.Stream.Hists()...) {
			if !h.Equals(want[k]) {
				t.Fatalf("%s: histogram %d: %d values, hdr's %d (or other counts)", what, k, h.TotalCount(), want[k].TotalCount())
			}
		}
	}
	check("run", c.total, total)
	c.Steps(func(totals []*Totals, _ [][]Second) {
		for i, tot := range totals {
			check("step", tot, perStep[i])
		}
	})
	c.Stages(func(totals []*Totals) {
		if slots > 1 {
			for i, tot := range totals {
				check("stage", tot, perSlot[i])
			}
		}
	})
}

// Draining touched blocks and merging by the drain log give exactly the
// histograms (every count) and the per-second percentiles that scanning
// every count and hdr's Merge gave: one step and slot, several steps,
// several stage slots, values across the whole range and clustered.
func TestMergeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, shape := range [][2]int{{1, 1}, {3, 1}, {1, 3}, {2, 2}} {
		var batches [][][3]int64
		for range 6 {
			var batch [][3]int64
			for range rng.IntN(3000) {
				v := 45_000_000 + rng.Int64N(10_000_000) // near 50 ms
				switch rng.IntN(4) {
				case 0:
					v = rng.Int64N(HistHighest + 100)
				case 1:
					v = rng.Int64N(5000) - 10
				}
				batch = append(batch, [3]int64{v, rng.Int64N(numHists + numStreamHists), rng.Int64N(64)})
			}
			batches = append(batches, batch)
		}
		mergeCase(t, shape[0], shape[1], shape[0] == 2, batches)
	}
}

// The drain of touched blocks moves what a scan of every count moves.
func TestDrainTouchedMatchesFullScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	if histCountsLen() > 64*subBucketHalfCount {
		t.Fatalf("%d counts: more blocks than touched has bits", histCountsLen())
	}
	a, b := newAtomicHist(), newAtomicHist()
	for range 20 {
		for range rng.IntN(2000) {
			v := rng.Int64N(HistHighest+10) >> rng.IntN(40)
			a.record(v)
			b.record(v)
		}
		ha, hb := NewHist(), NewHist()
		a.drainInto(ha, nil)
		drainAll(&b, hb)
		if !ha.Equals(hb) {
			t.Fatal("touched-block drain differs from a full scan")
		}
	}
}

// FuzzMergeExact: any values, in any histograms and recorders, ticks of
// any sizes: the collector's histograms and seconds equal hdr's.
func FuzzMergeExact(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add(make([]byte, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		steps, slots, live := 1+int(data[0]%3), 1+int(data[1]%3), data[1]&4 != 0
		data = data[2:]
		var batches [][][3]int64
		var batch [][3]int64
		for len(data) >= 10 {
			if data[0] == 0xff {
				batches = append(batches, batch)
				batch = nil
			}
			v := int64(binary.LittleEndian.Uint64(data[2:10]) >> (data[1] % 64))
			batch = append(batch, [3]int64{v, int64(data[0] % (numHists + numStreamHists)), int64(data[1])})
			data = data[10:]
		}
		mergeCase(t, steps, slots, live, append(batches, batch))
	})
}

func benchValues() []int64 {
	rng := rand.New(rand.NewPCG(1, 1))
	vs := make([]int64, 4000) // a second of 200 streams' first bytes, near 50 ms
	for i := range vs {
		vs[i] = 45_000_000 + rng.Int64N(10_000_000)
	}
	return vs
}

// BenchmarkDrain: one histogram's drain of a second's values, the old
// full scan against the touched blocks.
func BenchmarkDrain(b *testing.B) {
	vs := benchValues()
	for _, full := range []bool{true, false} {
		name := "touched"
		if full {
			name = "full-scan"
		}
		b.Run(name, func(b *testing.B) {
			h, dst := newAtomicHist(), NewHist()
			b.ReportAllocs()
			for b.Loop() {
				for _, v := range vs[:200] {
					h.record(v)
				}
				if full {
					drainAll(&h, dst)
				} else {
					h.drainInto(dst, nil)
				}
			}
		})
	}
}

// BenchmarkTickMerge: one tick's merges of a second's histogram into the
// run's totals: hdr's Merge against the drain log.
func BenchmarkTickMerge(b *testing.B) {
	vs := benchValues()
	for _, logged := range []bool{false, true} {
		name := "hdr-merge"
		if logged {
			name = "drain-log"
		}
		b.Run(name, func(b *testing.B) {
			r, sec, total := NewRecorder(), NewTotals(), NewTotals()
			if logged {
				sec.track()
			}
			for _, v := range vs {
				r.firstByte.record(v)
			}
			sec.drain(r, false, false)
			b.ReportAllocs()
			for b.Loop() {
				total.Add(sec)
			}
		})
	}
}
