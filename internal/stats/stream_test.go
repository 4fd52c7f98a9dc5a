package stats

import (
	"testing"
	"time"
)

func TestStreamRecording(t *testing.T) {
	t.Parallel()
	r := NewRecorder()
	r.StreamBegin(true)
	r.StreamEvent()
	r.StreamChunk(1)
	r.StreamEvent()
	r.StreamChunk(1)
	r.StreamGaps([]int64{-1, 1000, 5000, 2000}, []int64{5000})
	r.StreamITL(2500, 2)
	r.StreamEnd(&StreamSample{FirstEvent: 7000, Stall: 5000, Tokens: true, TTFT: 7000, TTFTSent: 6000, TPOT: 2500,
		E2E: 20000, E2ESent: 19000, Out: 3, In: 10, Counted: 2, Source: FromSpread, Good: true})
	r.StreamBegin(true)
	r.StreamEvent()
	r.StreamChunk(1)
	r.StreamEnd(&StreamSample{Truncated: true, FirstEvent: 9000, Tokens: true, TTFT: 9000, TTFTSent: 8000, Counted: 1})

	tot := NewTotals()
	tot.drain(r, false, true)
	s := tot.Stream
	if s == nil || s.Tokens == nil {
		t.Fatal("no stream totals")
	}
	k := s.Tokens
	if s.Streams != 2 || s.Completed != 1 || s.Truncated != 1 || s.Events != 3 {
		t.Errorf("streams %d completed %d truncated %d events %d", s.Streams, s.Completed, s.Truncated, s.Events)
	}
	if tot.Requests() != 1 { // the truncated stream; the completed one's response is the engine's to record
		t.Errorf("requests %d, want the truncated stream", tot.Requests())
	}
	if s.FirstEvent.TotalCount() != 2 || s.Stall.TotalCount() != 1 || s.Gap.TotalCount() != 1 || s.ReadLag.TotalCount() != 2 {
		t.Errorf("first-event %d stall %d gap %d read-lag %d values", s.FirstEvent.TotalCount(), s.Stall.TotalCount(), s.Gap.TotalCount(), s.ReadLag.TotalCount())
	}
	if k.TTFT.TotalCount() != 2 || k.TPOT.TotalCount() != 1 || k.ITL.TotalCount() != 2 || k.ChunkGap.TotalCount() != 1 {
		t.Errorf("ttft %d tpot %d itl %d chunk gaps %d", k.TTFT.TotalCount(), k.TPOT.TotalCount(), k.ITL.TotalCount(), k.ChunkGap.TotalCount())
	}
	if k.OutSum != 3 || k.InSum != 10 || k.Good != 1 || k.GoodTokens != 3 || k.Sources[FromSpread] != 1 {
		t.Errorf("tokens %+v", *k)
	}
	if k.Series != 3 { // 2 chunks counted live, +1 at the end; the truncated stream's 1 taken back
		t.Errorf("series tokens %d, want 3", k.Series)
	}
	if got := k.PerRequestRate.Max(); got < 157_800_000 || got > 158_100_000 { // 3 tokens in 19 µs: 157,894.7 tokens/s
		t.Errorf("per-request rate %d milli-tokens/s", got)
	}

	// Totals add: a second span merges in.
	sum := NewTotals()
	sum.Add(tot)
	sum.Add(tot)
	if sum.Stream.Tokens.OutSum != 6 || sum.Stream.Events != 6 || sum.Stream.Tokens.TTFT.TotalCount() != 4 {
		t.Errorf("merged: out %d events %d ttft %d", sum.Stream.Tokens.OutSum, sum.Stream.Events, sum.Stream.Tokens.TTFT.TotalCount())
	}
	sum.reset()
	if sum.Stream.Events != 0 || sum.Stream.Tokens.TTFT.TotalCount() != 0 {
		t.Error("reset left stream data")
	}
}

func TestStreamNoAllocs(t *testing.T) {
	r := NewRecorder()
	r.StreamBegin(true)
	x := &struct {
		StreamSample
		gaps []int64
	}{StreamSample{FirstEvent: 1, Stall: 1, Tokens: true, TTFT: 1, TTFTSent: 1, TPOT: 1, E2E: 1, E2ESent: 1, Out: 1, In: 1}, []int64{100, 200}}
	a := testing.AllocsPerRun(1000, func() {
		r.StreamBegin(true)
		r.StreamEvent()
		r.StreamChunk(1)
		r.StreamGaps(x.gaps, x.gaps)
		r.StreamITL(50, 2)
		r.StreamEnd(&x.StreamSample)
	})
	if a != 0 {
		t.Errorf("%v allocations per stream", a)
	}
}

// A collector drains the stream histograms at every tick once LiveStreams
// was called, else at the run's end only; the counts every tick, in-flight
// streams among them.
func TestStreamLiveTicks(t *testing.T) {
	t.Parallel()
	for _, live := range []bool{false, true} {
		r := NewRecorder()
		start := time.Now()
		c := NewCollector([]*Recorder{r}, start)
		if live {
			c.LiveStreams()
		}
		r.StreamBegin(true)
		r.StreamBegin(true) // still streaming at the tick
		r.StreamBegin(true)
		r.StreamFailed(0)
		r.StreamEnd(&StreamSample{FirstEvent: 7000, Tokens: true, TTFT: 7000, TTFTSent: 6000, TPOT: 2500, E2E: 20000, E2ESent: 19000, Out: 3, In: 10})
		c.Tick(start.Add(time.Second))
		var ttft, tick, inFlight int64
		c.View(func(tot *Totals, _ []Second) {
			ttft, inFlight = tot.Stream.Tokens.TTFT.TotalCount(), tot.Stream.InFlight()
		})
		c.LastTick(func(tot *Totals) { tick = tot.Stream.Tokens.TTFT.TotalCount() })
		if want := map[bool]int64{false: 0, true: 1}[live]; ttft != want || tick != want {
			t.Errorf("live %v: TTFT samples after a tick: %d in the run, %d in the tick; want %d", live, ttft, tick, want)
		}
		if inFlight != 1 {
			t.Errorf("live %v: %d streams in flight, want 1", live, inFlight)
		}
		if got := c.Finish(start.Add(1500 * time.Millisecond)).Stream.Tokens.TTFT.TotalCount(); got != 1 {
			t.Errorf("live %v: TTFT samples at the end: %d, want 1", live, got)
		}
	}
}

// BenchmarkTickStreams is one collector tick of a token-stream run of
// four recorders that all streamed in the second: with the stream
// histograms drained (LiveStreams: a live view or --metrics-addr
// watches) and without (they wait for the run's end).
func BenchmarkTickStreams(b *testing.B) {
	for _, live := range []bool{false, true} {
		b.Run(map[bool]string{false: "counts only", true: "live"}[live], func(b *testing.B) {
			recs := []*Recorder{NewRecorder(), NewRecorder(), NewRecorder(), NewRecorder()}
			start := time.Now()
			c := NewCollector(recs, start)
			if live {
				c.LiveStreams()
			}
			x := StreamSample{FirstEvent: 7e6, Stall: 20e6, Tokens: true, TTFT: 7e6, TTFTSent: 6e6, TPOT: 10e6, E2E: 2e9, E2ESent: 2e9, Out: 128, In: 1024}
			b.ResetTimer()
			for i := range b.N {
				for _, r := range recs {
					for k := range 20 { // 20 streams a second each
						r.StreamBegin(true)
						r.StreamGaps([]int64{10e6 + int64(k), 1e4, 10e6 + int64(k), 2e4}, []int64{10e6 + int64(k)})
						r.StreamITL(10e6+int64(k)*1000, 127)
						x.TTFT = 7e6 + int64(k)*1e5
						r.StreamEnd(&x)
					}
				}
				c.Tick(start.Add(time.Duration(i+1) * time.Second))
			}
		})
	}
}
