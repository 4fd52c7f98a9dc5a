package llmserve

import (
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// outcome is how a request ended, as the log names it.
type outcome uint8

const (
	outComplete   outcome = iota // every token sent
	outErrorEvent                // the error fault: an error event (or a 500 when not streaming)
	outDropped                   // the drop fault: connection closed or stream reset
	outClientGone                // the client went away first
	outRejected                  // a 429 or 503 fault
	outUnfinished                // the server closed first
)

var outcomeNames = [...]string{"complete", "error_event", "dropped", "client_gone", "rejected", "unfinished"}

// stream is one generation request from its arrival to its last byte. Its
// owner (the connection's goroutine for HTTP/1.1, the handler's for HTTP/2)
// fills it in and submits it; from then on only its shard's goroutine
// advances it, until it sets finished. The fields under mu are shared
// between the two.
type stream struct {
	s  *Server
	sh *shard
	c  *conn // the HTTP/1.x connection; nil for HTTP/2

	kick chan struct{} // wakes the owner (capacity 1)

	mu       sync.Mutex
	pending  []byte // bytes for the owner to write
	writing  []byte // the owner's buffer, swapped with pending
	backlog  bool   // HTTP/1: the socket was full; the owner writes until pending is empty
	finished bool   // the shard is done with the stream
	dropped  bool   // the drop fault struck

	dead      atomic.Bool // a write failed: the client is gone
	cancelled atomic.Bool // HTTP/2: the request's context ended

	// The request, fixed by start.
	id           uint64
	req          genRequest
	usage        bool // a usage chunk ends the stream
	chunked      bool // HTTP/1.1 chunked framing
	created      int64
	n            int // output tokens the "model" generates
	k            int // tokens per chunk after the first
	finishReason string
	fault        *Fault
	faultAt      int // tokens sent before the fault strikes
	pcg          rand.PCG
	rng          *rand.Rand
	status       int // the response status (non-streaming: decided when it ends)

	// The timeline, since the server's start.
	arrival     time.Duration
	arrivalUnix int64 // Unix ns; the kernel's receive time when kernelRx
	kernelRx    bool
	admitted    bool
	admitAt     time.Duration
	firstAt     time.Duration // first token written; -1 before
	endAt       time.Duration
	next        time.Duration // the next event
	sent        int           // tokens sent
	chunks      int           // content chunks sent
	out         outcome

	// Encoded bytes: the templates of the first chunk (one token) and of
	// the others (k tokens), the offsets of their stamps (-1: none), and
	// scratch space.
	first, token, tokenBuf []byte
	firstStamp, tokenStamp int
	event, final           []byte
}

func newStream(s *Server, c *conn, sh *shard) *stream {
	st := &stream{s: s, c: c, sh: sh, kick: make(chan struct{}, 1)}
	st.rng = rand.New(&st.pcg)
	return st
}

// start fixes the request's plan: its draws (fault, output length, fault
// position) come from a generator seeded by the server's seed and id.
func (st *stream) start(id uint64, req genRequest, arrival time.Duration, arrivalUnix int64, kernelRx, chunked bool) {
	cfg := &st.s.cfg
	st.mu.Lock()
	st.pending, st.backlog, st.finished, st.dropped = st.pending[:0], false, false, false
	st.mu.Unlock()
	st.dead.Store(false)
	st.cancelled.Store(false)
	select {
	case <-st.kick:
	default:
	}
	st.id, st.req, st.chunked = id, req, chunked
	st.usage = req.includeUsage && !cfg.NoUsage
	st.created = (st.s.wallBase + int64(arrival)) / 1e9
	st.arrival, st.arrivalUnix, st.kernelRx = arrival, arrivalUnix, kernelRx
	st.admitted, st.admitAt, st.firstAt, st.endAt = false, 0, -1, 0
	st.sent, st.chunks, st.out, st.status = 0, 0, outComplete, 200
	st.k = cfg.TokensPerChunk
	st.pcg.Seed(splitmix(cfg.Seed+id), splitmix(cfg.Seed^(id*0x9E3779B97F4A7C15)))

	st.fault = pickFault(cfg.Faults, 100*st.rng.Float64())
	st.n, st.finishReason = req.maxTokens, "length"
	if cfg.EOSPercent > 0 && !req.ignoreEOS {
		if n := req.minTokens + geometric(st.rng, cfg.EOSPercent/100); n < req.maxTokens {
			st.n, st.finishReason = n, "stop"
		}
	}
	st.faultAt = 0
	if f := st.fault; f != nil && f.Kind >= FaultError {
		if req.stream {
			// In place of (or, stall, before) a chunk drawn uniformly.
			chunks := 1 + (st.n-1+st.k-1)/st.k
			if c := st.rng.IntN(chunks); c > 0 {
				st.faultAt = 1 + (c-1)*st.k
			}
		} else {
			st.faultAt = st.rng.IntN(st.n)
		}
	}
	if req.stream {
		st.first, st.firstStamp = st.appendEvent(st.first[:0], chunkTokens, 1, "")
		st.token, st.tokenStamp = st.first, st.firstStamp
		if st.k > 1 {
			st.tokenBuf, st.tokenStamp = st.appendEvent(st.tokenBuf[:0], chunkTokens, st.k, "")
			st.token = st.tokenBuf
		}
	}
}

// geometric draws how many tokens come until the end-of-sequence token,
// that one included, when each token is the last with probability p.
func geometric(r *rand.Rand, p float64) int {
	if p >= 1 {
		return 1
	}
	u := 1 - r.Float64() // (0, 1]
	n := math.Ceil(math.Log(u) / math.Log1p(-p))
	return int(min(max(n, 1), maxOutputTokens))
}

// admit gives the stream a batch slot at at and schedules its first event:
// the first token after the prefill (and the stagger), or for a
// non-streaming request the whole response.
func (st *stream) admit(at time.Duration) {
	cfg := &st.s.cfg
	st.admitted, st.admitAt = true, at
	if c := st.s.prefix; c != nil {
		st.req.cachedTokens = min(c.match(st.req.blocks), st.req.promptTokens)
		st.s.c.prefixQueried.Add(uint64(st.req.promptTokens))
		st.s.c.prefixHits.Add(uint64(st.req.cachedTokens))
	}
	t := at + time.Duration(st.req.promptTokens-st.req.cachedTokens)*cfg.PrefillPerToken
	if cfg.Stagger {
		t += time.Duration(st.rng.Float64() * float64(cfg.ITL.Mean()))
	}
	if !st.req.stream {
		t = st.plan(t)
	} else if f := st.fault; f != nil && f.Kind == FaultStall && st.faultAt == 0 {
		t += f.Duration
	}
	st.next = t
	st.sh.add(st)
}

// plan walks a non-streaming request's tokens from the first at t and
// returns when its response goes out; it sets sent to the tokens generated
// by then.
func (st *stream) plan(t time.Duration) time.Duration {
	for i := 0; i < st.n; i++ {
		if i > 0 {
			t += st.s.cfg.ITL.sample(st.rng)
		}
		if f := st.fault; f != nil && i == st.faultAt {
			if f.Kind == FaultStall {
				t += f.Duration
			} else {
				st.sent = i
				return t
			}
		}
	}
	st.sent = st.n
	return t
}

// fire sends what is due at st.next and schedules the next event, or,
// when now (the shard's clock) is before st.next, only checks that the
// client is still there (a wake); it returns false when the stream has
// ended.
func (st *stream) fire(now time.Duration) bool {
	s := st.s
	if st.dead.Load() || st.cancelled.Load() {
		st.finish(s.since(), outClientGone)
		return false
	}
	if st.next > now {
		// A check-up (wake) during a long wait: a client that has left
		// frees its slot now, not at its next token.
		if st.gone() {
			st.finish(now, outClientGone)
			return false
		}
		return true
	}
	if !st.req.stream {
		st.fireWhole()
		return false
	}
	if f := st.fault; f != nil && st.sent == st.faultAt {
		switch f.Kind {
		case FaultError:
			st.emitErrorEvent()
			st.finish(st.next, outErrorEvent)
			return false
		case FaultDrop:
			st.drop()
			st.finish(st.next, outDropped)
			return false
		}
	}
	m := st.k
	if st.sent == 0 {
		m = 1
		st.firstAt = s.since()
	}
	m = min(m, st.n-st.sent)
	if st.sent+m == st.n {
		st.emitLast(m)
		st.finish(st.next, outComplete)
		return false
	}
	tmpl, stamp := st.token, st.tokenStamp
	if st.sent == 0 {
		tmpl, stamp = st.first, st.firstStamp
	}
	if stamp >= 0 {
		putStamp(tmpl[stamp:stamp+stampDigits], s.unixNow())
	}
	st.emit(tmpl)
	st.sent += m
	st.chunks++
	s.c.tokens.Add(uint64(m))
	s.c.chunks.Add(1)
	var gap time.Duration
	for range min(st.k, st.n-st.sent) {
		gap += s.cfg.ITL.sample(st.rng)
	}
	if f := st.fault; f != nil && f.Kind == FaultStall && st.sent == st.faultAt {
		gap += f.Duration
	}
	st.next += gap
	return true
}

// emitLast sends the last m tokens and everything that ends the stream:
// the finish_reason, the usage, [DONE] and the last HTTP chunk.
func (st *stream) emitLast(m int) {
	b := st.final[:0]
	chat := st.req.api == apiChat
	reason := st.finishReason
	if chat {
		reason = ""
	}
	if m > 0 {
		st.sent += m
		st.chunks++
		st.s.c.tokens.Add(uint64(m))
		st.s.c.chunks.Add(1)
		b, _ = st.appendEvent(b, chunkTokens, m, reason)
	}
	if chat {
		b, _ = st.appendEvent(b, chunkFinish, 0, st.finishReason)
	}
	if st.usage {
		b, _ = st.appendEvent(b, chunkUsage, 0, "")
	}
	b = st.appendDone(b)
	st.final = b
	st.emit(b)
}

// emitErrorEvent sends the error fault's event, then [DONE].
func (st *stream) emitErrorEvent() {
	e := append(st.event[:0], "data: "...)
	e = appendErrorJSON(e, "mock fault: error event after "+strconv.Itoa(st.sent)+" tokens", "InternalServerError", 500)
	e = append(e, "\n\n"...)
	st.event = e
	b := appendFramed(st.final[:0], st.chunked, e)
	b = st.appendDone(b)
	st.final = b
	st.emit(b)
}

// appendDone appends [DONE] and, when chunked, the last chunk.
func (st *stream) appendDone(b []byte) []byte {
	b = appendFramed(b, st.chunked, []byte(doneEvent))
	if st.chunked {
		b = append(b, lastChunk...)
	}
	return b
}

// fireWhole sends a non-streaming request's response (or its fault).
func (st *stream) fireWhole() {
	if f := st.fault; f != nil && st.sent == st.faultAt && f.Kind != FaultStall {
		if f.Kind == FaultDrop {
			st.drop()
			st.finish(st.next, outDropped)
			return
		}
		st.status = 500
		st.event = appendErrorJSON(st.event[:0], "mock fault: error after "+strconv.Itoa(st.sent)+" tokens", "InternalServerError", 500)
		st.emitWhole(st.event)
		st.finish(st.next, outErrorEvent)
		return
	}
	st.firstAt = st.s.since()
	st.event = st.appendWhole(st.event[:0])
	st.emitWhole(st.event)
	st.s.c.tokens.Add(uint64(st.sent))
	st.finish(st.next, outComplete)
}

// emitWhole sends a non-streaming body: with its head on HTTP/1 (where the
// head is the mock's to write), alone on HTTP/2 (the handler writes the
// head when the stream has finished).
func (st *stream) emitWhole(body []byte) {
	if st.c == nil {
		st.emit(body)
		return
	}
	b := appendHead(st.final[:0], st.status, ctJSON, len(body), st.c.keepAlive, "")
	b = append(b, body...)
	st.final = b
	st.emit(b)
}

// emit sends b: on HTTP/1, straight to the socket from the shard's
// goroutine when it takes it all at once, else through the owner.
func (st *stream) emit(b []byte) {
	st.mu.Lock()
	if st.c != nil && !st.backlog {
		n, err := st.c.tryWrite(b)
		if err != nil {
			st.mu.Unlock()
			st.dead.Store(true)
			return
		}
		if n == len(b) {
			st.mu.Unlock()
			return
		}
		b = b[n:]
		st.backlog = true
	}
	st.pending = append(st.pending, b...)
	st.mu.Unlock()
	notify(st.kick)
}

// drop carries out the drop fault: an HTTP/1 connection is closed at once
// (after its backlog, if it has one); an HTTP/2 stream is reset by its
// handler.
func (st *stream) drop() {
	st.mu.Lock()
	st.dropped = true
	direct := st.c != nil && !st.backlog
	st.mu.Unlock()
	if direct {
		st.c.nc.Close()
	}
	notify(st.kick)
}

// finish ends the stream at at: it logs it, frees its slot (admitting the
// next request) and hands it back to its owner. The shard must not touch
// it afterwards.
func (st *stream) finish(at time.Duration, o outcome) {
	s := st.s
	if o == outComplete && st.dead.Load() {
		o = outClientGone // its last write failed
	}
	if o == outClientGone && s.closing() {
		// Close closed the connection under it: the server went first.
		o = outUnfinished
	}
	st.endAt, st.out = at, o
	s.c.outcomes[o].Add(1)
	if s.log != nil {
		s.log.add(st.record())
	}
	if st.admitted {
		s.release(at)
	}
	st.mu.Lock()
	st.finished = true
	st.mu.Unlock()
	notify(st.kick)
}

// goneCheck is how often a stream whose next event is further away than
// that looks whether its client is still there: a client that leaves
// during a long stall, prefill or gap between tokens frees its batch slot
// within goneCheck (as vLLM aborts the request of a client that
// disconnected), not only at the stream's next event.
const goneCheck = time.Second

// wake is when the shard next looks at st (now is the shard's clock): at
// its next event, or sooner for a check-up when that event is more than
// goneCheck away.
func (st *stream) wake(now time.Duration) time.Duration {
	return min(st.next, now+goneCheck)
}

// gone reports whether the client has gone away while the request waited
// for a slot: its HTTP/2 stream was cancelled, or its connection reached
// end of file.
func (st *stream) gone() bool {
	if st.cancelled.Load() || st.dead.Load() {
		return true
	}
	return st.c != nil && st.c.peerGone()
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// splitmix is the SplitMix64 finalizer, for seeding.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
