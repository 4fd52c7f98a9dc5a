package stats

import (
	"math"
	"sync/atomic"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Totals is everything measured in a span of the run, merged from all
// recorders. It is owned by one goroutine at a time (the Collector, or a
// report after the run).
type Totals struct {
	LatencyOK  *hdr.Histogram // ns, 2xx responses
	LatencyBad *hdr.Histogram // ns, other responses
	FirstByte  *hdr.Histogram // ns
	Lag        *hdr.Histogram // ns, hail's own lateness: open model, every sent request's; closed model, previous response's arrival to the next send
	ConnWait   *hdr.Histogram // ns, open model: wait for a free connection, every sent request (0 for most)
	Failed     *hdr.Histogram // ns, sent requests that ended in an error (not cut off): elapsed time to the failure

	Status [MaxStatus]int64     // responses by status code (0: out of range)
	Errors [NumErrorKinds]int64 // failed requests by kind

	LatencySum int64 // ns, over all responses
	FailedSum  int64 // ns, over Failed
	BodyBytes  int64
	WireBytes  int64
	SentBytes  int64
	Queued     int64 // requests that waited for a free connection
	QueueWait  int64 // ns summed over queued requests
	Unsent     int64 // requests taken but never sent (the run ended first)
	NotSent    int64 // requests that failed before a byte was written (in Errors too): never sent
	Drained    int64 // requests that ended during the -w drain, after the run stopped sending
	Skipped    int64 // request numbers no step could serve
	Expected   int64 // responses with status ≥ 400 their step expects (not failures)
	Reconnects int64 // requests sent again on a new connection (a stale keep-alive connection)

	Connects   int64 // connection setups
	ConnectSum int64 // ns
	ConnectMin int64 // ns; math.MaxInt64 when no connect happened
	ConnectMax int64
	DNSSum     int64
	DNSMin     int64
	DNSMax     int64

	// Stream is what streaming responses measured; nil when none was seen.
	Stream *Streams

	log *drainLog // a collector's scratch totals: what its histograms hold, bin by bin (track)
}

// The six histograms of a Totals, in the order of hists.
const (
	histLatencyOK = iota
	histLatencyBad
	histFirstByte
	histLag
	histConnWait
	histFailed
	numHists
)

// drainLog is what was drained into a collector's scratch totals'
// histograms since their last reset, bin by bin: merging the scratch
// totals elsewhere records these few bins instead of hdr's Merge, which
// walks every bucket from 0 to the highest recorded (16k of them for
// values near 50 ms) for each histogram, each second, at each of a tick's
// several merges.
type drainLog struct {
	hists [numHists + numStreamHists]binLog // a Totals' own, then its Stream's
}

// logBins bounds a binLog: a histogram that drains more distinct values
// in a tick (one bin per value and recorder) is merged by hdr's Merge,
// which then costs little more than the bins would; the log's memory is
// made once and a run allocates nothing for it afterwards.
const logBins = 512

// binLog is the bins drained into one histogram; over is set once a value
// in it is not among them (the log was full, or a merge came from a
// histogram without a log).
type binLog struct {
	bins []bin
	over bool
}

// add logs bs, or marks l over when they do not fit.
func (l *binLog) add(bs ...bin) {
	if l.over || len(l.bins)+len(bs) > cap(l.bins) {
		l.over = true
		return
	}
	l.bins = append(l.bins, bs...)
}

// track makes t keep a drainLog (a collector's scratch totals).
func (t *Totals) track() {
	t.log = &drainLog{}
	for k := range t.log.hists {
		t.log.hists[k].bins = make([]bin, 0, logBins)
	}
}

// hists lists t's six histograms.
func (t *Totals) hists() [numHists]*hdr.Histogram {
	return [numHists]*hdr.Histogram{t.LatencyOK, t.LatencyBad, t.FirstByte, t.Lag, t.ConnWait, t.Failed}
}

// hist is t's histogram k: of hists, or (from firstStreamHist on) of
// t.Stream.Hists.
func (t *Totals) hist(k int) *hdr.Histogram {
	if k < numHists {
		return t.hists()[k]
	}
	return t.Stream.Hists()[k-firstStreamHist]
}

// logOf is where values drained into t's histogram k (as hist numbers
// them) are logged: nil when t keeps no log.
func (t *Totals) logOf(k int) *binLog {
	if t.log == nil {
		return nil
	}
	return &t.log.hists[k]
}

// mergeInto adds t's histogram k to dst (hail's geometry), logging what
// it adds in to when to is not nil: from t's log when it holds all of the
// histogram, else by hdr's Merge (and to is then over, unless nothing was
// added).
func (t *Totals) mergeInto(dst *hdr.Histogram, k int, to *binLog) {
	if l := t.logOf(k); l != nil && !l.over {
		for _, b := range l.bins {
			_ = dst.RecordValues(b.value, b.count)
		}
		if to != nil {
			to.add(l.bins...)
		}
		return
	}
	src := t.hist(k)
	dst.Merge(src)
	if to != nil && src.TotalCount() != 0 {
		to.over = true
	}
}

// NewTotals returns empty Totals.
func NewTotals() *Totals {
	return &Totals{
		LatencyOK: NewHist(), LatencyBad: NewHist(), FirstByte: NewHist(), Lag: NewHist(), ConnWait: NewHist(), Failed: NewHist(),
		ConnectMin: math.MaxInt64, DNSMin: math.MaxInt64,
	}
}

// Responses is the number of requests that got an HTTP response.
func (t *Totals) Responses() int64 {
	var n int64
	for _, c := range t.Status {
		n += c
	}
	return n
}

// ErrorCount is the number of failed requests, aborted ones included.
func (t *Totals) ErrorCount() int64 {
	var n int64
	for _, c := range t.Errors {
		n += c
	}
	return n
}

// Requests is every request that ended: responses, errors (oha's count:
// requests that failed before they were sent included) and truncated
// streams.
func (t *Totals) Requests() int64 { return t.Responses() + t.ErrorCount() + t.Truncated() }

// Truncated is the number of streams hail cut because the run ended while
// they streamed: sent requests that are neither responses nor errors.
func (t *Totals) Truncated() int64 {
	if t.Stream == nil {
		return 0
	}
	return t.Stream.Truncated
}

// Sent is every sent request that ended: Requests less those that failed
// before any byte was written.
func (t *Totals) Sent() int64 { return t.Requests() - t.NotSent }

// CutOff is the number of sent requests the run's end cut off: those it
// aborted (errors of kind ErrAborted) and the streams it truncated (not
// errors). Neither is in the all-sent latency.
func (t *Totals) CutOff() int64 { return t.Errors[ErrAborted] + t.Truncated() }

// AllSent returns a new histogram of every sent request that was not cut
// off: each response at its latency, each failure at its elapsed time.
func (t *Totals) AllSent() *hdr.Histogram {
	h := t.Latency()
	t.mergeInto(h, histFailed, nil)
	return h
}

// Latency returns a new histogram of all responses' latencies.
func (t *Totals) Latency() *hdr.Histogram {
	h := NewHist()
	t.mergeInto(h, histLatencyOK, nil)
	t.mergeInto(h, histLatencyBad, nil)
	return h
}

// Add merges o into t.
func (t *Totals) Add(o *Totals) {
	for k, h := range t.hists() {
		o.mergeInto(h, k, t.logOf(k))
	}
	for i, c := range o.Status {
		t.Status[i] += c
	}
	for i, c := range o.Errors {
		t.Errors[i] += c
	}
	t.LatencySum += o.LatencySum
	t.FailedSum += o.FailedSum
	t.BodyBytes += o.BodyBytes
	t.WireBytes += o.WireBytes
	t.SentBytes += o.SentBytes
	t.Queued += o.Queued
	t.QueueWait += o.QueueWait
	t.Unsent += o.Unsent
	t.NotSent += o.NotSent
	t.Drained += o.Drained
	t.Skipped += o.Skipped
	t.Expected += o.Expected
	t.Reconnects += o.Reconnects
	t.Connects += o.Connects
	t.ConnectSum += o.ConnectSum
	t.DNSSum += o.DNSSum
	t.ConnectMin = min(t.ConnectMin, o.ConnectMin)
	t.ConnectMax = max(t.ConnectMax, o.ConnectMax)
	t.DNSMin = min(t.DNSMin, o.DNSMin)
	t.DNSMax = max(t.DNSMax, o.DNSMax)
	if o.Stream != nil {
		t.ensureStreams(o.Stream.Tokens != nil)
		mine := t.Stream.Hists()
		for i := range o.Stream.Hists() {
			o.mergeInto(mine[i], firstStreamHist+i, t.logOf(firstStreamHist+i))
		}
		t.Stream.addCounts(o.Stream)
	}
}

// reset empties t, keeping its histograms' memory (and its log's).
func (t *Totals) reset() {
	hs := t.hists()
	for _, h := range hs {
		resetHist(h)
	}
	st := t.Stream
	if st != nil {
		st.reset()
	}
	log := t.log
	if log != nil {
		for k := range log.hists {
			log.hists[k] = binLog{bins: log.hists[k].bins[:0]}
		}
	}
	*t = Totals{LatencyOK: hs[0], LatencyBad: hs[1], FirstByte: hs[2], Lag: hs[3], ConnWait: hs[4], Failed: hs[5],
		ConnectMin: math.MaxInt64, DNSMin: math.MaxInt64, Stream: st, log: log}
}

// drain moves everything recorded in r into t; the stream histograms only
// when streamHists is set or at the run's end (final): scanning them every
// second costs a streaming run more than its events do, so only a run
// watched live pays it (drainStreams).
func (t *Totals) drain(r *Recorder, streamHists, final bool) {
	for k, h := range t.hists() {
		r.hists()[k].drainInto(h, t.logOf(k))
	}
	swapAdd := func(dst *int64, src *int64) {
		if atomic.LoadInt64(src) != 0 {
			*dst += atomic.SwapInt64(src, 0)
		}
	}
	for i := range r.status {
		swapAdd(&t.Status[i], &r.status[i])
	}
	for i := range r.errors {
		swapAdd(&t.Errors[i], &r.errors[i])
	}
	swapAdd(&t.LatencySum, &r.latencySum)
	swapAdd(&t.FailedSum, &r.failedSum)
	swapAdd(&t.BodyBytes, &r.bodyBytes)
	swapAdd(&t.WireBytes, &r.wireBytes)
	swapAdd(&t.SentBytes, &r.sentBytes)
	swapAdd(&t.Queued, &r.queued)
	swapAdd(&t.QueueWait, &r.queueWait)
	swapAdd(&t.Unsent, &r.unsent)
	swapAdd(&t.NotSent, &r.notSent)
	swapAdd(&t.Drained, &r.drained)
	swapAdd(&t.Skipped, &r.skipped)
	swapAdd(&t.Expected, &r.expected)
	swapAdd(&t.Reconnects, &r.reconnects)
	swapAdd(&t.Connects, &r.connects)
	swapAdd(&t.ConnectSum, &r.connectSum)
	swapAdd(&t.DNSSum, &r.dnsSum)
	t.ConnectMin = min(t.ConnectMin, atomic.LoadInt64(&r.connectMin))
	t.ConnectMax = max(t.ConnectMax, atomic.LoadInt64(&r.connectMax))
	t.DNSMin = min(t.DNSMin, atomic.LoadInt64(&r.dnsMin))
	t.DNSMax = max(t.DNSMax, atomic.LoadInt64(&r.dnsMax))
	t.drainStreams(r, streamHists, final)
}
