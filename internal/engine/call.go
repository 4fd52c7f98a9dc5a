package engine

import (
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/internal/stream"
)

// Call is one request's life, from the moment a worker takes it to its one
// end. Every engine keeps a Call by value in each request slot (a
// connection, a stream) and drives it through the same steps, so what a
// request records — and when — is decided here once:
//
//	Begin        the request is taken: its step, its recorder, its intended time
//	Waited       open model: it found every connection busy, and later got one
//	Start        its first operation is submitted: the send delay is stamped
//	Connected    it opened a connection (setup time, per-request log)
//	Wrote        its first bytes reached the kernel on an established
//	             connection: from now on it was sent (its send delay is
//	             recorded then)
//	Received     response bytes arrived (the first is its first byte); a
//	             streaming response's bytes go on to the slot's stream
//	             meter (UseMeter), stamped with this time
//	Respond      it ended in a response (redirects already followed) — or,
//	             for a stream that ended badly, in the stream's error kind
//	Fail         it ended in one named error kind; a request none of whose
//	             bytes was written was not sent: aborted, it ends as
//	             unsent, else as an error counted as not sent; a stream
//	             cut by the end of the run ends as truncated; CutShort,
//	             just before Fail, counts what arrived of a response cut
//	             short in the wire bytes
//
// Respond and Fail end the call exactly once: a second end is ignored.
// Times are durations since the job's start. A Call allocates nothing.
type Call struct {
	rec   *stats.Recorder
	step  int
	at    time.Duration // latency counts from here: intended (open) or actual (closed) start
	start time.Duration
	fb    time.Duration // first response byte; -1 before
	endAt time.Duration // when it ended
	think time.Duration // closed model: the pause Requests.Done asked for after this request
	// Open model: the request waited for a free connection from waitFrom
	// to ready (the target's backpressure); the rest of its lateness is
	// hail's own. Closed model: ready is when the connection could have
	// sent it (-1: unknown), the previous response's arrival.
	waitFrom, ready time.Duration
	// own and wait are the request's send delay, stamped by Start and
	// recorded when it is sent (only sent requests have one).
	own, wait time.Duration

	open, live, started, waited, delayed, wrote, tracing, retried bool
	tr                                                            stats.TraceRecord
	// token is what the request's builder reserved for it (Reserver); 0:
	// nothing.
	token uint32

	meter *stream.Meter // the slot's stream meter; nil: streams are not measured
}

// UseMeter gives the call its slot's stream meter, kept from request to
// request: engines call it once per slot, and point the slot's parser's
// Sink at m.
func (c *Call) UseMeter(m *stream.Meter) { c.meter = m }

// Meter is the call's stream meter (nil: none).
func (c *Call) Meter() *stream.Meter { return c.meter }

// Begin takes request hit's place in the call: its step's recorder of
// shard (of the stage its intended time falls in: Job.Group), its intended
// time at (open model; in the closed model the time it
// was claimed) and conn, the connection number for the per-request log,
// which also keeps hit (the number Requests.Next built the request from:
// the log names the request's URL from it). The request counts as in
// flight from here.
func (c *Call) Begin(j *Job, shard, step int, hit uint64, at time.Duration, conn int32) {
	rec := j.Recorders[j.Group(step, at)][shard]
	*c = Call{rec: rec, step: step, at: at, fb: -1, ready: -1, open: j.Source.Open(), live: true, meter: c.meter}
	if c.meter != nil {
		c.meter.BeginStep(rec, hit, step)
	}
	rec.InFlight(1)
	if c.tracing = rec.Tracing(); c.tracing {
		c.tr = stats.TraceRecord{Hit: hit, Intended: int64(at), Conn: conn, Step: uint16(step)}
	}
}

// Reserve notes what reqs, the builder that just built the call's request
// (Next), reserved for it, so that it goes back to the builder if the
// request is never sent. Engines call it right after Begin.
func (c *Call) Reserve(reqs Requests) {
	if r, ok := reqs.(Reserver); ok {
		c.token = r.Reserved()
	}
}

// release ends the call's reservation, giving back what it took when the
// request was never sent.
func (c *Call) release(reqs Requests, unsent bool) {
	if c.token == 0 {
		return
	}
	if r, ok := reqs.(Reserver); ok {
		r.Release(c.token, unsent)
	}
	c.token = 0
}

// Live reports whether the call holds a request that has not ended.
func (c *Call) Live() bool { return c.live }

// EndTime is when the request ended (its response's arrival, or its
// failure); valid once it has.
func (c *Call) EndTime() time.Duration { return c.endAt }

// StartTime is when the request's first operation was submitted.
func (c *Call) StartTime() time.Duration { return c.start }

// Waited marks that the request found every connection busy at from and
// got one at ready (open model; ready before from counts as from): the
// span is the target's backpressure, not hail's lateness. Engines call it
// right after Begin.
func (c *Call) Waited(from, ready time.Duration) {
	c.waited, c.waitFrom, c.ready = true, from, max(ready, from)
}

// Ready tells a closed-model call when its connection was ready to send
// it: the arrival of the previous response on the connection (its kernel
// receive time where known), plus the think time that response asked for.
// The span from there to Start is hail's own lateness. Engines call it
// right after Begin, for a request that follows another on its
// connection slot.
func (c *Call) Ready(at time.Duration) {
	if !c.open {
		c.ready = at
	}
}

// Start stamps now as the moment the request's first operation (connect or
// send) is submitted. In the open model its send delay against the
// intended time is split into the wait for a free connection and hail's
// own lateness; in the closed model latency counts from here, and hail's
// own lateness is the time since the connection was Ready. Either is
// recorded once the request is sent.
func (c *Call) Start(now time.Duration) {
	if c.started {
		return
	}
	c.started, c.start = true, now
	c.tr.Start = int64(now)
	if !c.open {
		c.at = now
		c.tr.Intended = int64(now)
		if c.ready >= 0 {
			c.own, c.delayed = max(now-c.ready, 0), true
		}
		return
	}
	late := max(now-c.at, 0)
	var wait time.Duration
	if c.waited {
		wait = min(max(c.ready-c.waitFrom, 0), late)
	}
	c.own, c.wait, c.delayed = late-wait, wait, true
}

// sent marks the request as sent (its first byte was written on an
// established connection) and records its send delay.
func (c *Call) sent() {
	if c.wrote {
		return
	}
	c.wrote = true
	if !c.delayed {
		return
	}
	if c.open {
		c.rec.Delay(int64(c.own), int64(c.wait))
	} else {
		c.rec.Late(int64(c.own))
	}
}

// Connected records the connection setup the request made: dns is the
// name lookup time, total the lookup + dial + handshake time.
func (c *Call) Connected(dns, total time.Duration) {
	c.rec.Connected(int64(dns), int64(total))
	c.TraceConnect(dns, total)
}

// TraceConnect puts a connection setup in the request's per-request log
// record only (engines whose connections are shared record the setup
// itself elsewhere).
func (c *Call) TraceConnect(dns, total time.Duration) {
	c.tr.Connect, c.tr.DNS = int64(total), int64(dns)
}

// Wrote records n request bytes handed to the kernel (or to a
// connection's writer): from the first byte on, the request was sent.
func (c *Call) Wrote(n int64) {
	if n > 0 {
		c.sent()
		c.rec.Sent(n)
	}
}

// MarkSent marks the request as sent without counting bytes (engines that
// count a connection's bytes themselves).
func (c *Call) MarkSent() { c.sent() }

// WroteBytes counts n bytes a connection wrote for the request (with its
// framing, or a connection's own frames) without marking it sent: engines
// that mark that themselves (MarkSent) count bytes this way.
func (c *Call) WroteBytes(n int64) {
	if n > 0 {
		c.rec.Sent(n)
	}
}

// FirstByte marks the arrival of the first response byte at now; later
// calls are ignored (the first byte of the first hop counts).
func (c *Call) FirstByte(now time.Duration) {
	if c.fb < 0 {
		c.fb = now
	}
}

// Received marks the arrival at at of response bytes that hail reads at
// now, before they are parsed: the first is the response's first byte, and
// a stream's events are stamped with at. now < 0 says the engine cannot
// tell arrival from reading (no kernel receive time): the stream's read
// lag is then not recorded.
func (c *Call) Received(at, now time.Duration) {
	if c.fb < 0 {
		c.fb = at
	}
	if c.meter != nil {
		c.meter.Time(at, now)
	}
}

// Streaming reports whether the request's response is a stream being
// measured (its head has arrived).
func (c *Call) Streaming() bool { return c.meter != nil && c.meter.On() }

// IdleAt is when the request's stream fails for want of an event (since
// the job's start); 0 when it is not streaming or no idle timeout applies.
// Any goroutine may ask.
func (c *Call) IdleAt() time.Duration {
	if c.meter == nil {
		return 0
	}
	return c.meter.IdleAt()
}

// RetryStale reports whether a request that failed as kind may be sent
// once more on a new connection, and counts it as a reconnect if so. This
// is what net/http and browsers do for a keep-alive connection that the
// server had closed before the request reached it: the request was sent on
// a reused connection (one that had carried an earlier request), no byte of
// its response arrived, the connection ended (closed, reset, broken pipe),
// it was not retried already, and resending is safe — its method is
// idempotent (RFC 9110 §9.2.2), or the server provably did not process it
// (none of its bytes was written, or a GOAWAY refused its stream). A
// request a GOAWAY refused (unprocessed) goes again also from a new
// connection, as HTTP/2 clients send a refused stream again (RFC 9113
// §8.7): a server's idle timeout sends one with last stream 0 when a
// connection's first request comes late, which a loaded machine did.
func (c *Call) RetryStale(k stats.ErrorKind, reused, gotBytes, wroteAttempt, unprocessed bool, method string) bool {
	if c.retried || !reused && !unprocessed || gotBytes {
		return false
	}
	switch k {
	case stats.ErrClosedBeforeResponse, stats.ErrReset, stats.ErrBrokenPipe, stats.ErrHTTP2Conn, stats.ErrHTTP2GoAway:
	default:
		return false
	}
	if !idempotent(method) && wroteAttempt && !unprocessed {
		return false
	}
	c.retried = true
	c.rec.Reconnect()
	// The server closed the connection (or refused the stream) before it
	// took the request. An attempt none of whose bytes was written leaves
	// the request unsent until the new attempt writes; one that was
	// written sent it, whatever the new attempt does (also when a GOAWAY
	// turns that one away before it leaves). Its send delay is recorded
	// once, when it is first sent.
	if !wroteAttempt && c.wrote {
		c.wrote, c.delayed = false, false
	}
	return true
}

func idempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

// Respond ends the request at now in the response p holds (status, body
// and wire bytes), hands it to reqs.Done and records it as Done's verdict
// says: as a response, or as the error kind of a check it failed (the
// per-request log keeps its status too). A response means the request was
// sent; now is never taken to be before the request started.
func (c *Call) Respond(now time.Duration, p *http1.Parser, reqs Requests) {
	if !c.live {
		return
	}
	c.Start(now)
	now = max(now, c.start)
	c.sent()
	c.release(reqs, false)
	// A stream ends first, so that the builder's Done may read its tokens
	// (TokenReader).
	var streamKind stats.ErrorKind
	streamFailed := false
	if m := c.meter; m != nil && m.On() {
		streamKind, streamFailed = m.Finish(now, c.at, c.start)
		in, out, last := m.Tokens()
		if !streamFailed && c.tracing {
			c.tr.InTokens, c.tr.OutTokens, c.tr.LastToken = int32(min(in, 1<<31-1)), int32(min(out, 1<<31-1)), int64(last)
		}
		c.tr.FirstToken = int64(m.FirstToken())
		if tr, ok := reqs.(TokenReader); ok && !streamFailed {
			tr.StreamTokens(in, out)
		}
	}
	v := reqs.Done(c.step, p)
	c.setThink(v.Think)
	if c.tracing {
		c.tr.Status, c.tr.Body = int32(p.Status), p.BodyBytes
		if c.fb >= 0 {
			c.tr.FirstByte = int64(c.fb)
		}
	}
	if streamFailed {
		v.Failed, v.Kind = true, streamKind
	}
	c.rec.Ended()
	if v.Failed {
		c.rec.Failed(v.Kind, int64(now-c.at))
		c.tr.SetError(v.Kind)
		c.end(now)
		return
	}
	fb := now
	if c.fb >= 0 {
		fb = c.fb
	}
	c.rec.Response(p.Status, int64(now-c.at), int64(max(fb-c.start, 0)), p.BodyBytes, p.WireBytes)
	if v.Expected && status.Failed(p.Status) {
		c.rec.Expected()
	}
	c.end(now)
}

// CutShort records the wire bytes that arrived of a response cut short
// (the connection failed or closed mid-response, a redirect that cannot be
// followed): call it just before Fail, so that they count in the run's
// wire bytes as a complete response's do (Respond records those). It only
// counts bytes; it marks no time (FirstByte does).
func (c *Call) CutShort(wire int64) {
	if c.live && wire > 0 {
		c.rec.CutShort(wire)
	}
}

// Fail ends the request at now as error kind k and hands it to reqs.Done
// without a response. A request none of whose bytes was written was never
// sent: aborted (k == stats.ErrAborted) it is counted as unsent, not as a
// request or an error; failed otherwise (a connection that could not be
// set up) it is an error of kind k, counted as not sent. A sent request
// that failed is recorded at its elapsed time, unless the run's end cut it
// off (ErrAborted): then it is an error of that kind, or — a stream whose
// response had begun — a truncated stream, cut off but not an error (its
// time to first event and token still count).
func (c *Call) Fail(now time.Duration, k stats.ErrorKind, reqs Requests) {
	if !c.live {
		return
	}
	c.setThink(reqs.Done(c.step, nil).Think)
	c.release(reqs, !c.wrote) // never sent: what it reserved goes back
	if !c.wrote {
		if k == stats.ErrAborted {
			c.rec.Unsent()
			c.tracing = false
			c.end(now)
			return
		}
		c.Start(now)
		c.rec.NotSent(k)
	} else {
		c.Start(now)
		m := c.meter
		streaming := m != nil && m.On()
		switch {
		case streaming && k == stats.ErrAborted:
			// hail cut the stream: truncated, cut off but not an error
			// (the log marks it aborted); its first token counts
			m.Truncate(now, c.at, c.start)
			c.tr.FirstToken = int64(m.FirstToken())
		case streaming:
			m.Abandon()
			fallthrough
		default:
			if k != stats.ErrAborted {
				c.rec.Ended()
			}
			c.rec.Failed(k, int64(max(now, c.start)-c.at))
		}
	}
	if c.tracing {
		c.tr.SetError(k)
		if c.fb >= 0 {
			c.tr.FirstByte = int64(c.fb)
		}
	}
	c.end(now)
}

func (c *Call) end(now time.Duration) {
	c.live, c.endAt = false, now
	if c.tracing {
		c.tr.End = int64(now)
		c.rec.Trace(&c.tr)
	}
	c.rec.InFlight(-1)
}

// setThink keeps the pause Requests.Done asked for; the open model
// schedules requests itself and has none.
func (c *Call) setThink(d time.Duration) {
	if !c.open {
		c.think = d
	}
}

// Think is the pause the virtual user takes after this call ended before
// its next request (closed model; 0 when none or while the call is live).
func (c *Call) Think() time.Duration {
	if c.live {
		return 0
	}
	return c.think
}
