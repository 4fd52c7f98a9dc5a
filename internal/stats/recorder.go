package stats

import (
	"math"
	"sync/atomic"

	"github.com/hail-loadgen/hail/internal/status"
)

// MaxStatus bounds the status slots (package status): HTTP codes 100–999, then
// gRPC's codes from status.GRPCBase; any other code is counted under 0.
const MaxStatus = status.GRPCBase + status.NumGRPCCodes

// Recorder accumulates the measurements of many requests. Any number of
// goroutines record into one Recorder at once without locks: every field is
// updated with a single atomic add, and a Collector drains it periodically
// by atomic swaps, so no request is lost or counted twice. Engines give each
// worker (or each group of connections) its own Recorder to keep the adds
// uncontended.
type Recorder struct {
	latencyOK  atomicHist // 2xx responses, ns from (intended) start to last byte
	latencyBad atomicHist // other responses
	firstByte  atomicHist // ns from send to first response byte
	lag        atomicHist // hail's own lateness: open model, the send delay minus connection wait, every sent request; closed model, from the previous response's arrival on the connection to the next send
	connWait   atomicHist // open model: time a request waited because every connection was busy (0 for most), every sent request
	failed     atomicHist // sent requests that ended in an error, not cut off by the run's end: ns from (intended) start to the failure

	status [MaxStatus]int64
	errors [NumErrorKinds]int64

	latencySum int64 // ns, for an exact mean
	failedSum  int64 // ns, over the failed histogram
	bodyBytes  int64
	wireBytes  int64
	sentBytes  int64
	queued     int64 // open model: requests that waited for a free connection (wait > 0)
	unsent     int64 // requests taken but never sent: aborted before a byte was written
	notSent    int64 // requests that failed before a byte was written (connect failures): errors, never sent
	drained    int64 // requests that ended while the run drained in-flight requests (-w)
	draining   int32 // set (atomically) once the run stopped sending and lets in-flight requests finish
	skipped    int64 // request numbers no step could serve (a scenario's pools were empty)
	expected   int64 // responses with status ≥ 400 that their step expects: not failures
	reconnects int64 // requests sent again on a new connection: their keep-alive connection had been closed
	queueWait  int64 // ns summed over queued requests
	inflight   int64

	connects    int64 // successful connection setups
	connectSum  int64 // ns: DNS + dial + TLS
	connectMin  int64
	connectMax  int64
	dnsSum      int64
	dnsMin      int64
	dnsMax      int64
	connsOpen   int64
	connsClosed int64

	trace *traceBuf // per-request log (trace.go); nil when off

	streams atomic.Pointer[streamRec] // streaming responses (stream.go); nil until the first
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		latencyOK:  newAtomicHist(),
		latencyBad: newAtomicHist(),
		firstByte:  newAtomicHist(),
		lag:        newAtomicHist(),
		connWait:   newAtomicHist(),
		failed:     newAtomicHist(),
		connectMin: math.MaxInt64,
		dnsMin:     math.MaxInt64,
	}
}

// hists lists r's six histograms in the order of Totals.hists.
func (r *Recorder) hists() [numHists]*atomicHist {
	return [numHists]*atomicHist{&r.latencyOK, &r.latencyBad, &r.firstByte, &r.lag, &r.connWait, &r.failed}
}

// Response records one request that ended in a response: slot is its
// slot (an HTTP code, or status.GRPC of a gRPC call's code). latency and
// firstByte are in ns; body is the decoded body size and wire the bytes
// read for the whole response.
func (r *Recorder) Response(slot int, latency, firstByte int64, body, wire int64) {
	if status.Success(slot) {
		r.latencyOK.record(latency)
	} else {
		r.latencyBad.record(latency)
	}
	r.firstByte.record(firstByte)
	if slot < 100 || slot >= MaxStatus {
		slot = 0
	}
	atomic.AddInt64(&r.status[slot], 1)
	atomic.AddInt64(&r.latencySum, latency)
	atomic.AddInt64(&r.bodyBytes, body)
	atomic.AddInt64(&r.wireBytes, wire)
}

// CutShort records the wire bytes of a response that failed part way
// (they count in the wire bytes, as a complete response's do).
func (r *Recorder) CutShort(wire int64) { atomic.AddInt64(&r.wireBytes, wire) }

// Error records one request that failed without a response.
func (r *Recorder) Error(k ErrorKind) {
	if k >= numErrorKinds {
		k = ErrOther
	}
	atomic.AddInt64(&r.errors[k], 1)
}

// Failed records a sent request that ended in an error kind k after
// elapsed ns (from its intended or actual start). A request cut off by the
// run's end (ErrAborted) is counted as an error only: its elapsed time
// says when the run ended, not how the target answered.
func (r *Recorder) Failed(k ErrorKind, elapsed int64) {
	r.Error(k)
	if k != ErrAborted {
		r.failed.record(elapsed)
		atomic.AddInt64(&r.failedSum, elapsed)
	}
}

// NotSent records a request that failed as k before any of its bytes was
// written (the connection could not be set up, or broke first): an error,
// intended but never sent.
func (r *Recorder) NotSent(k ErrorKind) {
	r.Error(k)
	atomic.AddInt64(&r.notSent, 1)
}

// Drain marks the recorder's requests that end from now on as ended in
// the run's drain (-w: it stopped sending and lets in-flight requests
// finish).
func (r *Recorder) Drain() { atomic.StoreInt32(&r.draining, 1) }

// Ended counts a request that ended in a response or an error, if it ended
// during the drain.
func (r *Recorder) Ended() {
	if atomic.LoadInt32(&r.draining) != 0 {
		atomic.AddInt64(&r.drained, 1)
	}
}

// Expected records that a response just recorded, whose status counts as
// failed (status.Failed), is one its scenario step expects (expect:
// status): it is not a failure.
func (r *Recorder) Expected() { atomic.AddInt64(&r.expected, 1) }

// Sent records bytes written for a request.
func (r *Recorder) Sent(n int64) { atomic.AddInt64(&r.sentBytes, n) }

// Delay records how late a sent request was against its intended time
// (open model), in two parts, ns: wait is the time it waited because every
// connection had a request in flight (the target's backpressure), own the
// rest (hail's own lateness). Both go into histograms over every sent
// request; a request that waited is also counted as queued.
func (r *Recorder) Delay(own, wait int64) {
	r.lag.record(own)
	r.connWait.record(wait)
	if wait > 0 {
		atomic.AddInt64(&r.queued, 1)
		atomic.AddInt64(&r.queueWait, wait)
	}
}

// Late records hail's own lateness in the closed model, ns: from the
// arrival of the previous response on a connection (its kernel receive
// time where known) to the send of the next request on it.
func (r *Recorder) Late(own int64) { r.lag.record(own) }

// Unsent records a request that was taken but never sent: the run ended
// (deadline, interrupt, abort) before any of its bytes was written.
func (r *Recorder) Unsent() { atomic.AddInt64(&r.unsent, 1) }

// Reconnect records a request sent again on a new connection because the
// server had closed its keep-alive connection before it answered.
func (r *Recorder) Reconnect() { atomic.AddInt64(&r.reconnects, 1) }

// Skipped records a request number that no step could serve.
func (r *Recorder) Skipped() { atomic.AddInt64(&r.skipped, 1) }

// InFlight adjusts the number of requests in flight by d.
func (r *Recorder) InFlight(d int64) { atomic.AddInt64(&r.inflight, d) }

// Connected records a connection setup: dns is the name lookup time, total
// the lookup + dial + handshake time, both ns.
func (r *Recorder) Connected(dns, total int64) {
	atomic.AddInt64(&r.connects, 1)
	atomic.AddInt64(&r.connectSum, total)
	atomic.AddInt64(&r.dnsSum, dns)
	atomicMin(&r.connectMin, total)
	atomicMax(&r.connectMax, total)
	atomicMin(&r.dnsMin, dns)
	atomicMax(&r.dnsMax, dns)
	atomic.AddInt64(&r.connsOpen, 1)
}

// Closed records that a connection opened by Connected was closed.
func (r *Recorder) Closed() { atomic.AddInt64(&r.connsClosed, 1) }

func atomicMin(p *int64, v int64) {
	for {
		old := atomic.LoadInt64(p)
		if v >= old || atomic.CompareAndSwapInt64(p, old, v) {
			return
		}
	}
}

func atomicMax(p *int64, v int64) {
	for {
		old := atomic.LoadInt64(p)
		if v <= old || atomic.CompareAndSwapInt64(p, old, v) {
			return
		}
	}
}
