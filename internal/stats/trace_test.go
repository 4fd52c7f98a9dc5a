package stats

import (
	"sync"
	"testing"
	"time"
)

// A consumer that flushes while recorders block on a full channel does not
// deadlock, and every record arrives exactly once.
func TestTracerFlushWhileFull(t *testing.T) {
	tr := NewTracer(1)
	recs := []*Recorder{NewRecorder(), NewRecorder()}
	for _, r := range recs {
		tr.Attach(r)
	}
	const per = 3 * TraceBatchSize
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				rec := TraceRecord{Start: int64(g*per + i)}
				recs[g%2].Trace(&rec)
			}
		}()
	}
	seen := make([]bool, 4*per)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := range tr.Batches() {
			tr.Flush() // the consumer flushing, as reqlog's writer does
			for _, r := range b {
				if seen[r.Start] {
					t.Errorf("record %d twice", r.Start)
				}
				seen[r.Start] = true
			}
			time.Sleep(time.Millisecond) // a slow consumer: the channel fills
			tr.Recycle(b)
		}
	}()
	wg.Wait()
	tr.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("deadlock")
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("record %d lost", i)
		}
	}
	r := NewRecorder()
	if r.Tracing() {
		t.Error("a recorder without a tracer traces")
	}
	r.Trace(&TraceRecord{}) // a no-op
}

func TestTraceNoAllocs(t *testing.T) {
	tr := NewTracer(1 << 10)
	r := NewRecorder()
	tr.Attach(r)
	rec := TraceRecord{Start: 1, Status: 200}
	if n := testing.AllocsPerRun(1000, func() { r.Trace(&rec) }); n != 0 {
		t.Errorf("%v allocations per traced request", n)
	}
}
