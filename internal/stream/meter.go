// Package stream measures streaming responses: server-sent events
// (text/event-stream) and, for hail llm, the tokens of OpenAI-compatible
// streams. Every engine keeps one Meter per request slot and feeds it the
// decoded body bytes of a response as they arrive, each batch with the time
// it arrived (the kernel's receive time where the engine has it) and the
// time hail read it; the engine's request lifecycle (engine.Call) asks the
// Meter at the response's end whether the stream ended well and records it.
//
// Per event the Meter scans bytes (package sse), and for token streams picks
// a few fields (package llmchunk); it allocates nothing and takes no lock.
package stream

import (
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/llmchunk"
	"github.com/hail-loadgen/hail/internal/sse"
	"github.com/hail-loadgen/hail/internal/stats"
)

// Config says how a run treats streaming responses. Engines share one.
type Config struct {
	// All treats the body of every 2xx response as a stream (--sse); else
	// only responses whose Content-Type is text/event-stream are.
	All bool
	// Tokens reads OpenAI-compatible chunks (hail llm): content tokens,
	// usage, error objects, and the [DONE] terminator, which a stream must
	// end with.
	Tokens bool
	// Idle fails a stream that goes this long without an event, counted
	// from its response head (0: never).
	Idle time.Duration
	// MaxEvent bounds an event's data (sse.DefaultMaxData when 0): a larger
	// event fails its stream.
	MaxEvent int
	// SLO are the objectives a token stream must meet to count as good
	// (0: none): TTFT from the intended send, TPOT, and E2E latency from
	// the intended send.
	SLO SLO
	// Expect returns the input and output tokens request hit asked for
	// (nil: unknown): input tokens are reported from it when the server
	// sends no usage, and responses of another output length are counted.
	Expect func(hit uint64) (in, out int)
	// Steps, if set, say per step of a scenario whether its streams are
	// token streams and their objectives (a scenario's llm steps): a step
	// beyond it, or every step when it is nil, takes Tokens and SLO.
	Steps []StepStreams
	// Drain is how long streams still running when the run's duration
	// (-z) ends may go on before they are cut, as truncated (0: cut at
	// once, as any request in flight is).
	Drain time.Duration

	live atomic.Int64 // streams in progress
}

// Live is the number of streams in progress in the run.
func (c *Config) Live() int64 { return c.live.Load() }

// StepStreams is how one step's streams are read (Config.Steps).
type StepStreams struct {
	// Tokens reads the step's streams as OpenAI-compatible token streams.
	Tokens bool
	// SLO are the objectives its token streams must meet to count as good.
	SLO SLO
}

// forStep is how step's streams are read.
func (c *Config) forStep(step int) StepStreams {
	if step >= 0 && step < len(c.Steps) {
		return c.Steps[step]
	}
	return StepStreams{Tokens: c.Tokens, SLO: c.SLO}
}

// SLO are service level objectives for a token stream; 0 means none.
type SLO struct {
	TTFT, TPOT, E2E time.Duration
}

// Any reports whether any objective is set.
func (s SLO) Any() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2E > 0 }

// String writes the objectives set as --slo takes them
// ("ttft=500ms,tpot=50ms"; "" for none).
func (s SLO) String() string {
	var parts []string
	for _, o := range []struct {
		name string
		d    time.Duration
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"e2e", s.E2E}} {
		if o.d > 0 {
			parts = append(parts, o.name+"="+o.d.String())
		}
	}
	return strings.Join(parts, ",")
}

// Meter measures one request slot's streams, one at a time. Its methods
// are called by the goroutine that reads the slot's responses, except
// IdleAt, which any goroutine may call.
type Meter struct {
	cfg *Config
	rec *stats.Recorder
	hit uint64
	tok bool // the current request's streams are token streams (Config.forStep)
	slo SLO  // and its objectives
	sc  sse.Scanner

	on      bool          // the current response is a stream
	at, now time.Duration // when the bytes being fed arrived, and when hail read them
	head    time.Duration // the stream's response head
	last    time.Duration // its last event (head before the first)
	idle    atomic.Int64  // IdleAt's answer; 0 while not a stream
	first   time.Duration // its first event; -1 before
	stall   time.Duration
	events  int64
	failed  bool
	kind    stats.ErrorKind // the first failure
	done    bool            // [DONE] came

	// token streams
	chunks            int64 // content chunks
	firstTok, lastTok time.Duration
	lastOut, lastIn   int64 // the tokens of the last stream Finish measured
	usageOut, usageIn int64 // the last usage seen; -1 none
	prevCum           int64 // completion_tokens as of the previous content chunk
	cumAll            bool  // every content chunk so far carried usage
	counted           int64 // tokens added to the per-second series
	gaps              []int64
	ks                []int64 // tokens per content chunk, while cumAll

	// per-event values not yet recorded (flushed in batches: flush):
	// each event's gap and read lag, side by side (one cache line of the
	// batch per event, not two)
	ev        []int64
	chunkGaps int // m.gaps[:chunkGaps] are recorded
}

// flushAt is how many events' values a meter keeps before recording
// them.
const flushAt = 256

// NewMeter returns a Meter for a slot of a run with cfg.
func NewMeter(cfg *Config) *Meter {
	m := &Meter{cfg: cfg}
	m.sc.MaxData = cfg.MaxEvent
	return m
}

// Begin starts a new request, hit, recorded into rec.
func (m *Meter) Begin(rec *stats.Recorder, hit uint64) { m.BeginStep(rec, hit, -1) }

// BeginStep starts a new request, hit, of step (Config.Steps), recorded
// into rec.
func (m *Meter) BeginStep(rec *stats.Recorder, hit uint64, step int) {
	if m.on { // not ended by Finish, Truncate or Abandon: forget it
		m.Abandon()
	}
	m.rec, m.hit = rec, hit
	s := m.cfg.forStep(step)
	m.tok, m.slo = s.Tokens, s.SLO
}

// flush records the per-event values kept so far.
func (m *Meter) flush() {
	m.rec.StreamGaps(m.ev, m.gaps[m.chunkGaps:])
	m.ev, m.chunkGaps = m.ev[:0], len(m.gaps)
}

// stop ends the current stream's life, recording what it kept.
func (m *Meter) stop() {
	m.flush()
	m.on = false
	m.idle.Store(0)
	m.cfg.live.Add(-1)
}

// All reports whether every 2xx response is a stream (Config.All).
func (m *Meter) All() bool { return m.cfg.All }

// Idle is the run's idle timeout between a stream's events (0: none).
func (m *Meter) Idle() time.Duration { return m.cfg.Idle }

// On reports whether the current response is a stream.
func (m *Meter) On() bool { return m.on }

// Time sets when the bytes about to be fed arrived (at) and when hail read
// them (now); now < 0 means hail cannot tell when they arrived (no kernel
// receive time): the read lag is not recorded.
func (m *Meter) Time(at, now time.Duration) { m.at, m.now = at, now }

// StreamHead starts a stream: the current response's head has arrived (at
// the time Time set) and its body is a stream.
func (m *Meter) StreamHead() {
	m.on, m.head, m.last, m.first, m.stall, m.events = true, m.at, m.at, -1, 0, 0
	m.failed, m.done = false, false
	m.chunks, m.usageOut, m.usageIn, m.prevCum, m.cumAll, m.counted = 0, -1, -1, 0, true, 0
	m.gaps, m.ks = m.gaps[:0], m.ks[:0]
	if m.ev == nil { // the slot's first stream: room for a batch, once
		m.ev = make([]int64, 0, 2*flushAt)
	}
	m.ev, m.chunkGaps = m.ev[:0], 0
	m.sc.Reset()
	if m.cfg.Idle > 0 {
		m.idle.Store(int64(m.at + m.cfg.Idle))
	}
	m.cfg.live.Add(1)
	m.rec.StreamBegin(m.tok)
}

// FirstToken is when the current (or last) stream's first content token
// arrived, since the job's start; 0 when none did (or tokens are not
// read).
func (m *Meter) FirstToken() time.Duration {
	if !m.tok || m.chunks == 0 {
		return 0
	}
	return m.firstTok
}

// Tokens are the last completed token stream's input and output tokens
// and its last content token's time since the job's start, as Finish
// measured them (zeros when it read no tokens).
func (m *Meter) Tokens() (in, out int64, last time.Duration) {
	if !m.tok || m.chunks == 0 {
		return 0, 0, 0
	}
	return m.lastIn, m.lastOut, m.lastTok
}

// IdleAt is when the current stream fails for want of an event, as a time
// since the job's start; 0 when no idle timeout applies (not a stream, or
// none configured).
func (m *Meter) IdleAt() time.Duration { return time.Duration(m.idle.Load()) }

// StreamBody takes decoded body bytes of the stream.
func (m *Meter) StreamBody(b []byte) {
	for len(b) > 0 {
		n, ok := m.sc.Next(b)
		b = b[n:]
		if ok {
			m.event(m.sc.Event())
		}
	}
}

// fail notes the stream's first failure.
func (m *Meter) fail(k stats.ErrorKind) {
	if !m.failed {
		m.failed, m.kind = true, k
	}
}

// event takes one dispatched event.
func (m *Meter) event(e *sse.Event) {
	t := m.at
	gap, lag := int64(-1), int64(-1)
	if m.events > 0 {
		// Never negative: an event whose bytes carry the kernel's receive
		// time may follow one stamped by hail's clock when it was read
		// (receive times are turned on machine-wide a moment after the
		// first socket asks), and a gap of the two clocks mixed can come
		// out below 0 — a gap all the same, and the nearest is 0.
		gap = int64(max(t-m.last, 0))
	}
	if m.now >= 0 {
		lag = int64(max(m.now-t, 0))
	}
	m.rec.StreamEvent()
	m.ev = append(m.ev, gap, lag)
	if len(m.ev) >= 2*flushAt {
		m.flush()
	}
	m.stall = max(m.stall, t-m.last)
	m.events++
	m.last = t
	if m.first < 0 {
		m.first = t
	}
	if m.cfg.Idle > 0 {
		m.idle.Store(int64(t + m.cfg.Idle))
	}
	switch {
	case e.Oversized:
		m.fail(stats.ErrStreamTooLarge)
		return
	case m.done:
		m.fail(stats.ErrStreamAfterDone)
		return
	case e.IsType("error"):
		m.fail(stats.ErrStreamError)
		return
	case !m.tok:
		m.done = string(e.Data) == "[DONE]"
		return
	}
	f := llmchunk.Pick(e.Data)
	switch {
	case f.Done:
		m.done = true
	case f.Error:
		m.fail(stats.ErrStreamError)
	}
	if f.Prompt >= 0 {
		m.usageIn = f.Prompt
	}
	if f.Content {
		m.chunk(t, f.Completion)
	}
	if f.Completion >= 0 {
		m.usageOut = f.Completion
	}
}

// chunk takes a content chunk that arrived at t; cum is its usage's
// completion_tokens (-1: none).
func (m *Meter) chunk(t time.Duration, cum int64) {
	gap := int64(-1)
	if m.chunks == 0 {
		m.firstTok = t
	} else {
		gap = int64(max(t-m.lastTok, 0)) // never negative, as event's gaps
		m.gaps = appendDoubling(m.gaps, gap)
	}
	k := int64(1)
	if cum >= 0 && m.cumAll {
		k = max(cum-m.prevCum, 0)
		m.prevCum = cum
		m.ks = appendDoubling(m.ks, k)
	} else {
		m.cumAll = false
	}
	m.rec.StreamChunk(k)
	m.counted += k
	m.lastTok = t
	m.chunks++
}

// appendDoubling appends v to s, doubling its room when it is full (append
// grows a long slice by a quarter): a stream's per-chunk values are kept to
// its end, and a long stream then costs a few allocations, not one every
// few hundred chunks.
func appendDoubling(s []int64, v int64) []int64 {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 64))
	}
	return append(s, v)
}

// Finish ends the stream at now, when its response ended (at and start are
// the request's intended and actual send times). It records the stream and
// returns its failure kind, if it failed; the caller then records the
// request as that error, else as its response.
func (m *Meter) Finish(now, at, start time.Duration) (stats.ErrorKind, bool) {
	m.stop()
	switch {
	case m.failed:
	case m.sc.Pending():
		m.fail(stats.ErrStreamMidEvent)
	case m.tok && !m.done:
		m.fail(stats.ErrStreamNoDone)
	case m.events == 0:
		m.fail(stats.ErrStreamNoEvents)
	}
	if m.failed {
		m.rec.StreamFailed(m.counted)
		return m.kind, true
	}
	x := stats.StreamSample{FirstEvent: int64(m.first - at), Stall: int64(m.stall)}
	if m.tok {
		m.tokens(&x, now, at, start)
	}
	m.rec.StreamEnd(&x)
	return 0, false
}

// Truncate ends a stream that hail cut at now (the run ended while it
// streamed); at and start are the request's intended and actual send times.
func (m *Meter) Truncate(now, at, start time.Duration) {
	m.stop()
	x := stats.StreamSample{Truncated: true, FirstEvent: -1, TTFT: -1, Tokens: m.tok, Counted: m.counted}
	if m.first >= 0 {
		x.FirstEvent = int64(m.first - at)
	}
	if m.tok && m.chunks > 0 {
		x.TTFT, x.TTFTSent = int64(m.firstTok-at), int64(m.firstTok-start)
	}
	m.rec.StreamEnd(&x)
}

// Abandon ends a stream whose request failed otherwise (the connection
// broke, a timeout): nothing of it is recorded but what it already was.
func (m *Meter) Abandon() {
	m.stop()
	m.rec.StreamFailed(m.counted)
}

// tokens fills x's token measurements and records the per-token gaps.
func (m *Meter) tokens(x *stats.StreamSample, now, at, start time.Duration) {
	x.Tokens, x.Counted = true, m.counted
	x.TTFT, x.TTFTSent, x.TPOT = -1, -1, -1
	x.E2E, x.E2ESent = int64(now-at), int64(now-start)
	c := m.chunks
	var out int64
	switch {
	case c > 0 && m.cumAll && m.usageOut >= 0:
		x.Source, out = stats.FromUsage, m.usageOut
		for i, g := range m.gaps { // gap i precedes chunk i+1
			if k := m.ks[i+1]; k > 0 {
				m.rec.StreamITL(g/k, k)
			}
		}
	case m.usageOut >= 0:
		x.Source, out = stats.FromSpread, m.usageOut
		for i, g := range m.gaps {
			n := int64(i + 1) // chunk n (from 0) gets the tokens up to its share of out
			if k := (n+1)*out/c - n*out/c; k > 0 {
				m.rec.StreamITL(g/k, k)
			}
		}
	default:
		x.Source, out = stats.FromDeltas, c
		for _, g := range m.gaps {
			m.rec.StreamITL(g, 1)
		}
	}
	x.Out = out
	m.lastOut = out
	if c > 0 {
		x.TTFT, x.TTFTSent = int64(m.firstTok-at), int64(m.firstTok-start)
		if out >= 2 {
			x.TPOT = int64(m.lastTok-m.firstTok) / (out - 1)
		}
	}
	wantIn, wantOut := -1, -1
	if m.cfg.Expect != nil {
		wantIn, wantOut = m.cfg.Expect(m.hit)
	}
	x.In = m.usageIn
	if x.In < 0 {
		x.In = int64(max(wantIn, 0))
	}
	m.lastIn = x.In
	x.OtherLength = wantOut >= 0 && out != int64(wantOut)
	x.Good = m.good(x)
}

// good reports whether x met every objective: TTFT and E2E from the
// intended send time (as hail's latencies count), TPOT 0 for fewer than two
// tokens (as vLLM counts it).
func (m *Meter) good(x *stats.StreamSample) bool {
	s := m.slo
	if !s.Any() {
		return false
	}
	tpot := max(x.TPOT, 0)
	return (s.TTFT == 0 || x.TTFT >= 0 && x.TTFT <= int64(s.TTFT)) &&
		(s.TPOT == 0 || tpot <= int64(s.TPOT)) &&
		(s.E2E == 0 || x.E2E <= int64(s.E2E))
}
