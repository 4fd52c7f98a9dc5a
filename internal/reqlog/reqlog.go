// Package reqlog writes hail's per-request log: every request of a run, as
// the engines trace it (stats.TraceRecord), to SQLite (--db-url) and/or as
// CSV rows (--output-format csv). The engines only append fixed-size records
// to per-recorder buffers; a Writer goroutine receives them in batches and
// hands them to the sinks, so the hot path never waits on a disk or a
// database.
package reqlog

import (
	"errors"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// Meta describes the run the records belong to; sinks store it when they close.
type Meta struct {
	Start   time.Time // the run's time zero: record times are offsets from it
	URL     string
	Method  string
	Model   string
	Steps   []string // step names by index ("" for a plain URL)
	Version string
	Shard   string // "I/N" for a shard of a distributed run, else ""
	// Latency summarises the run's latency when it ended: the responses'
	// (oha's) and every sent request's (a failure at its elapsed time).
	Latency []Latency
}

// Latency is one scope of a run's latency summary.
type Latency struct {
	// Scope is "responses" (oha's latencies) or "all_sent" (every sent
	// request; a failure at its elapsed time, requests cut off by the
	// run's end left out).
	Scope string
	// Requests the percentiles hold; Failed of them failed (sent, no
	// response that counts); CutOff and NotSent are left out: aborted by
	// the run's end, failed before they were sent.
	Requests, Failed, CutOff, NotSent int64
	// Percentiles and max in ns; -1 when there was none (NULL).
	P50, P90, P99, Max int64
}

// Sink receives batches of records, in the order they were handed over
// (roughly completion order, not sorted by start time).
type Sink interface {
	// Write stores one batch; it must not keep recs after returning.
	Write(recs []stats.TraceRecord) error
	// Close finishes the sink once every batch has been written.
	Close(m Meta) error
	// Abort releases the sink without finishing it (the run never started).
	Abort()
}

// FlushEvery is how often partly filled buffers are handed to the sinks, so
// records stream out at low request rates too.
const FlushEvery = 500 * time.Millisecond

// Writer moves batches from a Tracer to sinks on its own goroutine.
type Writer struct {
	tr    *stats.Tracer
	sinks []Sink
	done  chan struct{}
	mu    sync.Mutex
	err   error
	n     int64
}

// Start attaches nothing by itself: the caller attaches tr to the run's
// recorders (run.Options.Tracer). Start begins writing tr's batches to sinks.
func Start(tr *stats.Tracer, sinks ...Sink) *Writer {
	w := &Writer{tr: tr, sinks: sinks, done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *Writer) loop() {
	defer close(w.done)
	tick := time.NewTicker(FlushEvery)
	defer tick.Stop()
	batches := w.tr.Batches()
	for {
		select {
		case b, ok := <-batches:
			if !ok {
				return
			}
			w.write(b)
		case <-tick.C:
			w.tr.Flush()
		}
	}
}

func (w *Writer) write(b []stats.TraceRecord) {
	for _, s := range w.sinks {
		if err := s.Write(b); err != nil {
			w.mu.Lock()
			if w.err == nil {
				w.err = err
			}
			w.mu.Unlock()
		}
	}
	w.mu.Lock()
	w.n += int64(len(b))
	w.mu.Unlock()
	w.tr.Recycle(b)
}

// Records is how many records have been written so far.
func (w *Writer) Records() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Finish closes the tracer (call it after the run, when every request has
// been recorded), waits until every batch is written and closes the sinks.
// It returns the first error of any sink.
func (w *Writer) Finish(m Meta) error {
	w.tr.Close()
	<-w.done
	var errs []error
	w.mu.Lock()
	if w.err != nil {
		errs = append(errs, w.err)
	}
	w.mu.Unlock()
	for _, s := range w.sinks {
		if err := s.Close(m); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Abort stops writing without finishing the sinks (the run did not start).
func (w *Writer) Abort() {
	w.tr.Close()
	<-w.done
	for _, s := range w.sinks {
		s.Abort()
	}
}
