package stats

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// The atomic histogram must index exactly as HdrHistogram does, or drained
// counts would land on the wrong values.
func TestCountsIndexMatchesHdr(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []int64{1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 1e6, 123456789, HistHighest}
	for range 1500 {
		values = append(values, 1+rng.Int64N(HistHighest))
		values = append(values, 1+rng.Int64N(100000))
	}
	h := NewHist()
	for _, v := range values {
		h.Reset()
		_ = h.RecordValue(v)
		counts := h.Export().Counts
		want := -1
		for i, c := range counts {
			if c != 0 {
				want = i
			}
		}
		if got := countsIndex(v); got != want {
			t.Fatalf("countsIndex(%d) = %d, hdr uses %d", v, got, want)
		}
		if lo := valueAt(want); !h.ValuesAreEquivalent(lo, v) {
			t.Fatalf("valueAt(%d) = %d, not equivalent to %d", want, lo, v)
		}
	}
}

// Concurrent recording and draining loses nothing and counts nothing twice.
func TestRecorderDrainExact(t *testing.T) {
	r := NewRecorder()
	c := NewCollector([]*Recorder{r}, timeNowForTest())
	const writers, per = 4, 5000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if i%10 == 0 {
					r.Error(ErrTimeout)
					continue
				}
				r.Response(200+w, int64(1000+i), 500, 12, 100)
			}
		}()
	}
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-stop:
				return
			default:
				c.Tick(timeNowForTest().Add(1e9))
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-drained
	tot := c.Finish(timeNowForTest().Add(2e9))
	if got, want := tot.Requests(), int64(writers*per); got != want {
		t.Fatalf("requests = %d, want %d", got, want)
	}
	if got, want := tot.Errors[ErrTimeout], int64(writers*per/10); got != want {
		t.Fatalf("timeouts = %d, want %d", got, want)
	}
	if got, want := tot.Latency().TotalCount(), int64(writers*per*9/10); got != want {
		t.Fatalf("latency samples = %d, want %d", got, want)
	}
	if got, want := tot.BodyBytes, int64(writers*per*9/10*12); got != want {
		t.Fatalf("body bytes = %d, want %d", got, want)
	}
	for w := range writers {
		if got := tot.Status[200+w]; got != per*9/10 {
			t.Fatalf("status %d = %d, want %d", 200+w, got, per*9/10)
		}
	}
}

func TestRecorderNoAllocs(t *testing.T) {
	r := NewRecorder()
	allocs := testing.AllocsPerRun(1000, func() {
		r.Response(200, 12345, 2345, 12, 80)
		r.Delay(100, 50)
		r.Error(ErrReset)
	})
	if allocs != 0 {
		t.Fatalf("recording allocates %v times per request", allocs)
	}
}

func BenchmarkRecorderResponse(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Response(200, int64(20000+i&1023), 10000, 12, 80)
	}
}
