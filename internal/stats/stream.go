package stats

import (
	"sync/atomic"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// What streaming responses (server-sent events) record, beside a request's
// own latency. A Recorder holds none of it until its first stream begins
// (streamRec is allocated then, once), so runs without streams pay nothing.
// Token histograms exist only in runs that read tokens (hail llm).

// TokenSource says where a stream's output token count came from.
type TokenSource uint8

const (
	// FromUsage: the server's usage gave each content chunk's tokens
	// (usage in every chunk, completion_tokens cumulative).
	FromUsage TokenSource = iota
	// FromSpread: the server's usage arrived at the end only; its
	// completion_tokens are spread evenly over the content chunks.
	FromSpread
	// FromDeltas: no usage; one token per content chunk.
	FromDeltas
	numSources
)

// StreamSample is one stream's measurements at its end, ns (-1: none).
type StreamSample struct {
	// Truncated: hail cut the stream (the run ended while it streamed);
	// only FirstEvent and TTFT are recorded from it.
	Truncated bool
	// FirstEvent is the time from the request's intended send time (latency's
	// origin) to its first event.
	FirstEvent int64
	// Stall is the longest time the stream went without an event, from its
	// response head to its last event.
	Stall int64

	// Tokens: the rest is recorded only in runs that read tokens.
	Tokens bool
	// TTFT is the time to the first content token from the intended send
	// time, TTFTSent from the actual send.
	TTFT, TTFTSent int64
	// TPOT is (last token − first token) ÷ (output tokens − 1); -1 for
	// fewer than two tokens.
	TPOT int64
	// E2E is the request's latency from its intended send time, E2ESent
	// from its actual send; both end at the response's end.
	E2E, E2ESent int64
	// Out and In are the request's output and input tokens.
	Out, In int64
	// Counted is the output tokens already added to the per-second count
	// while the stream ran (StreamChunk's k).
	Counted int64
	// Source says where Out came from.
	Source TokenSource
	// OtherLength: Out differs from the output length the request asked for.
	OtherLength bool
	// Good: the request met every --slo objective.
	Good bool
}

// streamRec is a Recorder's stream part.
type streamRec struct {
	firstEvent, gap, stall, readLag atomicHist
	streams, completed, truncated   int64
	events, failed                  int64
	tokens                          *tokenRec // nil unless tokens are read
}

// tokenRec is the token part of streamRec.
type tokenRec struct {
	ttft, ttftSent, tpot, itl, chunkGap, e2e, e2eSent atomicHist
	out, in, perReqRate                               atomicHist
	outSum, inSum, good, goodTokens, otherLength      int64
	series                                            int64 // output tokens by arrival, for the per-second series
	sources                                           [numSources]int64
}

// hists lists s's histograms in the order of Streams.Hists (the token
// part's after its own).
func (s *streamRec) hists() []*atomicHist {
	h := []*atomicHist{&s.firstEvent, &s.gap, &s.stall, &s.readLag}
	if k := s.tokens; k != nil {
		h = append(h, &k.ttft, &k.ttftSent, &k.tpot, &k.itl, &k.chunkGap, &k.e2e, &k.e2eSent, &k.out, &k.in, &k.perReqRate)
	}
	return h
}

// stream returns r's stream part, making it on first use (with a token
// part when tokens is set). Concurrent first uses agree on one.
func (r *Recorder) stream(tokens bool) *streamRec {
	if s := r.streams.Load(); s != nil {
		return s
	}
	s := &streamRec{firstEvent: newAtomicHist(), gap: newAtomicHist(), stall: newAtomicHist(), readLag: newAtomicHist()}
	if tokens {
		s.tokens = &tokenRec{ttft: newAtomicHist(), ttftSent: newAtomicHist(), tpot: newAtomicHist(), itl: newAtomicHist(),
			chunkGap: newAtomicHist(), e2e: newAtomicHist(), e2eSent: newAtomicHist(), out: newAtomicHist(), in: newAtomicHist(),
			perReqRate: newAtomicHist()}
	}
	if r.streams.CompareAndSwap(nil, s) {
		return s
	}
	return r.streams.Load()
}

// StreamBegin records that a response turned out to be a stream; tokens
// says whether the run reads tokens from it.
func (r *Recorder) StreamBegin(tokens bool) { atomic.AddInt64(&r.stream(tokens).streams, 1) }

// StreamEvent counts one event of a stream that StreamBegin announced.
func (r *Recorder) StreamEvent() { atomic.AddInt64(&r.streams.Load().events, 1) }

// StreamChunk counts the k tokens a token stream's content chunk carries
// as far as known now, into the per-second series.
func (r *Recorder) StreamChunk(k int64) { atomic.AddInt64(&r.streams.Load().tokens.series, k) }

// StreamGaps records a stream's per-event values, batched (a meter keeps
// them while its stream runs: values of one stream fall in few buckets,
// so recording them together touches few cache lines): each event's gap
// since the previous one and its read lag, side by side in events, and
// (token streams) gaps between content chunks, ns; negative values are
// skipped.
func (r *Recorder) StreamGaps(events, chunkGaps []int64) {
	s := r.streams.Load()
	for i := 0; i+1 < len(events); i += 2 {
		if v := events[i]; v >= 0 {
			s.gap.record(v)
		}
	}
	for i := 1; i < len(events); i += 2 {
		if v := events[i]; v >= 0 {
			s.readLag.record(v)
		}
	}
	if t := s.tokens; t != nil {
		for _, v := range chunkGaps {
			t.chunkGap.record(v)
		}
	}
}

// StreamITL records k inter-token latencies of gap ns each: a chunk of k
// tokens that came gap·k after the previous one.
func (r *Recorder) StreamITL(gap, k int64) {
	if k <= 0 {
		return
	}
	r.streams.Load().tokens.itl.recordN(gap, k)
}

// StreamEnd records a stream's end: completed (its request then also ends
// as a response), or truncated.
func (r *Recorder) StreamEnd(x *StreamSample) {
	s := r.streams.Load()
	if x.FirstEvent >= 0 {
		s.firstEvent.record(x.FirstEvent)
	}
	t := s.tokens
	if t != nil && x.Tokens && x.TTFT >= 0 {
		t.ttft.record(x.TTFT)
		t.ttftSent.record(x.TTFTSent)
	}
	if x.Truncated {
		atomic.AddInt64(&s.truncated, 1)
		if t != nil {
			atomic.AddInt64(&t.series, -x.Counted)
		}
		return
	}
	atomic.AddInt64(&s.completed, 1)
	if x.Stall >= 0 {
		s.stall.record(x.Stall)
	}
	if t == nil || !x.Tokens {
		return
	}
	if x.TPOT >= 0 {
		t.tpot.record(x.TPOT)
	}
	t.e2e.record(x.E2E)
	t.e2eSent.record(x.E2ESent)
	t.out.record(x.Out)
	t.in.record(x.In)
	if x.E2ESent > 0 {
		t.perReqRate.record(x.Out * 1e12 / x.E2ESent) // milli-tokens per second
	}
	atomic.AddInt64(&t.outSum, x.Out)
	atomic.AddInt64(&t.inSum, x.In)
	atomic.AddInt64(&t.series, x.Out-x.Counted)
	atomic.AddInt64(&t.sources[x.Source], 1)
	if x.OtherLength {
		atomic.AddInt64(&t.otherLength, 1)
	}
	if x.Good {
		atomic.AddInt64(&t.good, 1)
		atomic.AddInt64(&t.goodTokens, x.Out)
	}
}

// StreamFailed records that a stream StreamBegin announced ended in a
// failure after counted of its tokens were added to the per-second series.
func (r *Recorder) StreamFailed(counted int64) {
	s := r.streams.Load()
	atomic.AddInt64(&s.failed, 1)
	if t := s.tokens; t != nil {
		atomic.AddInt64(&t.series, -counted)
	}
}

// recordN adds n values v, clamped as record clamps.
func (h *atomicHist) recordN(v, n int64) {
	v = min(max(v, HistLowest), HistHighest)
	h.add(countsIndex(v), n)
}

// Streams is what a span of the run's streams measured (Totals.Stream).
// The Collector drains its counts every second and its histograms at the
// run's end (Collector.Finish); once something watches the run live
// (Collector.LiveStreams), TTFT, TPOT, ITL and E2E every second too.
type Streams struct {
	// FirstEvent: time from intended send to the first event, per stream
	// (completed and truncated); Gap: every inter-event gap; Stall: each
	// completed stream's longest time without an event; ReadLag: per event,
	// from its bytes' arrival (the kernel's receive time where the engine
	// reads it) to hail reading it. ns.
	FirstEvent, Gap, Stall, ReadLag *hdr.Histogram
	// Streams began (response heads of streams); Completed ended well;
	// Truncated were cut by the end of the run; Failed ended otherwise;
	// Events were dispatched.
	Streams, Completed, Truncated, Failed, Events int64
	// Tokens is the token part; nil when the run read no tokens.
	Tokens *Tokens
}

// Tokens is what a span of the run's token streams measured: each
// histogram per completed request unless said otherwise, ns or tokens.
type Tokens struct {
	// TTFT from the intended send and from the actual send (completed and
	// truncated streams), TPOT, ITL (per token), ChunkGap (between content
	// chunks), E2E and E2ESent (latency from intended and actual send),
	// Out and In (tokens per request), PerRequestRate (output tokens per
	// second of each request, in thousandths).
	TTFT, TTFTSent, TPOT, ITL, ChunkGap, E2E, E2ESent, Out, In, PerRequestRate *hdr.Histogram
	// OutSum and InSum are the completed requests' output and input
	// tokens; Good and GoodTokens those that met every objective (and their
	// output tokens); OtherLength those whose output length differed from
	// the one asked for.
	OutSum, InSum, Good, GoodTokens, OtherLength int64
	// Series is the output tokens of this span by their arrival (corrected
	// at each stream's end): the per-second series' token counts.
	Series int64
	// Sources counts completed requests by where their token count came
	// from, indexed by TokenSource.
	Sources [numSources]int64
}

// NewStreams returns empty stream totals, with a token part if tokens.
func NewStreams(tokens bool) *Streams {
	s := &Streams{FirstEvent: NewHist(), Gap: NewHist(), Stall: NewHist(), ReadLag: NewHist()}
	if tokens {
		s.Tokens = &Tokens{TTFT: NewHist(), TTFTSent: NewHist(), TPOT: NewHist(), ITL: NewHist(), ChunkGap: NewHist(),
			E2E: NewHist(), E2ESent: NewHist(), Out: NewHist(), In: NewHist(), PerRequestRate: NewHist()}
	}
	return s
}

// Hists lists s's histograms (the token part's after its own).
func (s *Streams) Hists() []*hdr.Histogram {
	h := []*hdr.Histogram{s.FirstEvent, s.Gap, s.Stall, s.ReadLag}
	if t := s.Tokens; t != nil {
		h = append(h, t.TTFT, t.TTFTSent, t.TPOT, t.ITL, t.ChunkGap, t.E2E, t.E2ESent, t.Out, t.In, t.PerRequestRate)
	}
	return h
}

// The stream histograms in the order of Streams.Hists; in a drainLog,
// after a Totals' own (firstStreamHist+i).
const (
	histFirstEvent = iota
	histGap
	histStall
	histReadLag
	histTTFT
	histTTFTSent
	histTPOT
	histITL
	histChunkGap
	histE2E
	histE2ESent
	histOut
	histIn
	histPerRequestRate
	numStreamHists
	firstStreamHist = numHists
)

// add merges o into s (which must have a token part if o has one).
func (s *Streams) add(o *Streams) {
	mine := s.Hists()
	for i, h := range o.Hists() {
		mine[i].Merge(h)
	}
	s.addCounts(o)
}

// addCounts adds o's counts, not its histograms, to s's.
func (s *Streams) addCounts(o *Streams) {
	s.Streams += o.Streams
	s.Completed += o.Completed
	s.Truncated += o.Truncated
	s.Failed += o.Failed
	s.Events += o.Events
	if t, u := s.Tokens, o.Tokens; u != nil {
		t.OutSum += u.OutSum
		t.InSum += u.InSum
		t.Good += u.Good
		t.GoodTokens += u.GoodTokens
		t.OtherLength += u.OtherLength
		t.Series += u.Series
		for i := range t.Sources {
			t.Sources[i] += u.Sources[i]
		}
	}
}

// reset empties s, keeping its histograms' memory.
func (s *Streams) reset() {
	for _, h := range s.Hists() {
		resetHist(h)
	}
	s.Streams, s.Completed, s.Truncated, s.Failed, s.Events = 0, 0, 0, 0, 0
	if t := s.Tokens; t != nil {
		t.OutSum, t.InSum, t.Good, t.GoodTokens, t.OtherLength, t.Series, t.Sources = 0, 0, 0, 0, 0, 0, [numSources]int64{}
	}
}

// InFlight is the streams begun and not ended (as of the counts drained).
func (s *Streams) InFlight() int64 {
	return max(s.Streams-s.Completed-s.Truncated-s.Failed, 0)
}

// drainStreams moves r's stream counts into t, and its histograms at the
// run's end (final). When hists is set, it also drains the six that live
// views show (TTFT from the intended and actual send, TPOT, ITL, E2E from
// the intended and actual send) if any of r's stream counts moved since
// the last drain: a recorder whose streams are idle (a past stage's) is
// not scanned. A value recorded just after a scan waits for the next
// drain that scans.
func (t *Totals) drainStreams(r *Recorder, hists, final bool) {
	s := r.streams.Load()
	if s == nil {
		return
	}
	t.ensureStreams(s.tokens != nil)
	d := t.Stream
	moved := int64(0)
	for _, c := range []struct{ dst, src *int64 }{{&d.Streams, &s.streams}, {&d.Completed, &s.completed},
		{&d.Truncated, &s.truncated}, {&d.Failed, &s.failed}, {&d.Events, &s.events}} {
		n := atomic.SwapInt64(c.src, 0)
		*c.dst += n
		moved |= n
	}
	src, dst := s.hists(), d.Hists()
	drain := func(hists ...int) {
		for _, i := range hists {
			src[i].drainInto(dst[i], t.logOf(firstStreamHist+i))
		}
	}
	if final { // nothing live shows them: the run's end only
		drain(histFirstEvent, histGap, histStall, histReadLag)
	}
	k := s.tokens
	if k == nil {
		return
	}
	dt := d.Tokens
	dt.OutSum += atomic.SwapInt64(&k.outSum, 0)
	dt.InSum += atomic.SwapInt64(&k.inSum, 0)
	dt.Good += atomic.SwapInt64(&k.good, 0)
	dt.GoodTokens += atomic.SwapInt64(&k.goodTokens, 0)
	dt.OtherLength += atomic.SwapInt64(&k.otherLength, 0)
	dt.Series += atomic.SwapInt64(&k.series, 0)
	for i := range k.sources {
		dt.Sources[i] += atomic.SwapInt64(&k.sources[i], 0)
	}
	if hists && moved != 0 || final {
		drain(histTTFT, histTTFTSent, histTPOT, histITL, histE2E, histE2ESent)
	}
	if final { // nothing live shows them
		drain(histChunkGap, histOut, histIn, histPerRequestRate)
	}
}

// ensureStreams gives t a stream part (with a token part if tokens).
func (t *Totals) ensureStreams(tokens bool) {
	switch {
	case t.Stream == nil:
		t.Stream = NewStreams(tokens)
	case tokens && t.Stream.Tokens == nil:
		full := NewStreams(true)
		full.add(t.Stream)
		t.Stream = full
	}
}
