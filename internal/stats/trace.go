package stats

import (
	"sync"
)

// TraceRecord is one request as the per-request log (--db-url, per-request
// CSV) stores it. Times are nanoseconds since the run's start. It is a fixed
// size value: tracing copies it into a preallocated buffer, so it allocates
// nothing per request.
type TraceRecord struct {
	Hit       uint64 // the request's number, as the Source handed it out and Requests.Next received it
	Intended  int64  // intended send time (open model); = Start in the closed model
	Start     int64  // actual send time
	End       int64  // last byte received, or the failure
	FirstByte int64  // first response byte, since the run's start; 0: none arrived
	// FirstToken is when a token stream's first content token arrived
	// (hail llm), since the run's start; 0: none.
	FirstToken int64
	// LastToken is when a completed token stream's last content token
	// arrived, since the run's start; OutTokens and InTokens are its
	// output and input tokens as counted (docs/llm.md); 0: none.
	LastToken           int64
	OutTokens, InTokens int32
	Connect             int64 // DNS + dial + TLS (ns) when this request opened its connection; 0: reused
	DNS                 int64 // the DNS part of Connect (ns)
	Body                int64 // body bytes received
	Status              int32 // HTTP status; 0 when the request failed
	Conn                int32 // connection number (0-based, across the run)
	Step                uint16
	Err                 uint8 // ErrorKind+1 when the request failed; 0 when it got a response
}

// Failed reports whether the request ended without a response, and how.
func (r *TraceRecord) Failed() (ErrorKind, bool) {
	if r.Err == 0 {
		return 0, false
	}
	return ErrorKind(r.Err - 1), true
}

// SetError marks the record as failed with kind k.
func (r *TraceRecord) SetError(k ErrorKind) { r.Err = uint8(k) + 1 }

// TraceBatchSize is how many records a recorder's trace buffer holds before
// it is handed to the writer.
const TraceBatchSize = 4096

// Tracer collects the TraceRecords of a run off the hot path: every
// Recorder it is attached to appends into its own buffer (an uncontended
// lock and a copy), and full buffers are handed to the consumer through a
// channel in batches, then recycled. A nil *Tracer (and a Recorder without
// one) costs only a nil check.
type Tracer struct {
	out  chan []TraceRecord
	free chan []TraceRecord
	mu   sync.Mutex
	bufs []*traceBuf
	done bool
}

type traceBuf struct {
	mu  sync.Mutex
	t   *Tracer
	buf []TraceRecord
}

// NewTracer returns a Tracer whose batches are read from Batches. depth is
// how many full batches may wait for the consumer before recording blocks
// (so nothing is dropped); 0 picks 64 (256k records).
func NewTracer(depth int) *Tracer {
	if depth <= 0 {
		depth = 64
	}
	return &Tracer{out: make(chan []TraceRecord, depth), free: make(chan []TraceRecord, depth+16)}
}

// Batches delivers the recorded batches; it is closed by Close. A consumer
// returns each batch with Recycle when done with it.
func (t *Tracer) Batches() <-chan []TraceRecord { return t.out }

// Recycle gives a batch's memory back for reuse.
func (t *Tracer) Recycle(b []TraceRecord) {
	select {
	case t.free <- b[:0]:
	default:
	}
}

func (t *Tracer) newBuf() []TraceRecord {
	select {
	case b := <-t.free:
		return b
	default:
		return make([]TraceRecord, 0, TraceBatchSize)
	}
}

// Attach makes r record into t (call before the run starts).
func (t *Tracer) Attach(r *Recorder) {
	b := &traceBuf{t: t, buf: t.newBuf()}
	t.mu.Lock()
	t.bufs = append(t.bufs, b)
	t.mu.Unlock()
	r.trace = b
}

// Flush hands every partly filled buffer to the consumer, skipping any
// that is busy or while the consumer is behind (they follow with the next
// batch). It never blocks, so the consumer itself calls it periodically to
// stream records out at low rates.
func (t *Tracer) Flush() {
	if !t.mu.TryLock() {
		return // Close is handing everything over
	}
	defer t.mu.Unlock()
	t.flush(false)
}

// flush hands partly filled buffers over; t.mu is held.
func (t *Tracer) flush(block bool) {
	if t.done {
		return
	}
	for _, b := range t.bufs {
		if block {
			b.mu.Lock()
		} else if !b.mu.TryLock() {
			// A recorder is appending, or is handing over a full buffer
			// while the consumer is behind (and the consumer may be the
			// caller): its records follow with that buffer.
			continue
		}
		if len(b.buf) > 0 {
			if block {
				t.out <- b.buf
				b.buf = t.newBuf()
			} else {
				select {
				case t.out <- b.buf:
					b.buf = t.newBuf()
				default:
				}
			}
		}
		b.mu.Unlock()
	}
}

// Close hands over what is left and closes Batches. Call it once, after
// every request has been recorded, while the consumer is reading.
func (t *Tracer) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.flush(true)
	t.done = true
	close(t.out)
}

func (b *traceBuf) add(r *TraceRecord) {
	b.mu.Lock()
	b.buf = append(b.buf, *r)
	if len(b.buf) == cap(b.buf) {
		full := b.buf
		b.buf = b.t.newBuf()
		b.t.out <- full
	}
	b.mu.Unlock()
}

// Tracing reports whether r has a Tracer attached: engines build a
// TraceRecord only when it does.
func (r *Recorder) Tracing() bool { return r.trace != nil }

// Trace records one request's TraceRecord (a no-op without a Tracer).
func (r *Recorder) Trace(rec *TraceRecord) {
	if r.trace != nil {
		r.trace.add(rec)
	}
}
