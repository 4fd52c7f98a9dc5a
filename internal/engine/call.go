package engine

import (
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/stats"
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
//	Wrote        its first bytes reached the kernel: from now on it was sent
//	FirstByte    the first byte of its response arrived
//	Respond      it ended in a response (redirects already followed), or
//	Fail         it ended in one named error kind; a request aborted before
//	             any byte was written ends as unsent
//
// Respond and Fail end the call exactly once: a second end is ignored.
// Times are durations since the job's start. A Call allocates nothing.
type Call struct {
	rec   *stats.Recorder
	step  int
	at    time.Duration // latency counts from here: intended (open) or actual (closed) start
	start time.Duration
	fb    time.Duration // first response byte; -1 before
	think time.Duration // closed model: the pause Requests.Done asked for after this request
	// Open model: the request waited for a free connection from waitFrom
	// to ready (the target's backpressure); the rest of its lateness is
	// hail's own.
	waitFrom, ready time.Duration

	open, live, started, waited, wrote, tracing, retried bool
	tr                                                   stats.TraceRecord
}

// Begin takes request hit's place in the call: its step's recorder of
// shard, its intended time at (open model; in the closed model the time it
// was claimed) and conn, the connection number for the per-request log,
// which also keeps hit (the number Requests.Next built the request from:
// the log names the request's URL from it). The request counts as in
// flight from here.
func (c *Call) Begin(j *Job, shard, step int, hit uint64, at time.Duration, conn int32) {
	rec := j.Recorders[step][shard]
	*c = Call{rec: rec, step: step, at: at, fb: -1, open: j.Source.Open(), live: true}
	rec.InFlight(1)
	if c.tracing = rec.Tracing(); c.tracing {
		c.tr = stats.TraceRecord{Hit: hit, Intended: int64(at), Conn: conn, Step: uint16(step)}
	}
}

// Live reports whether the call holds a request that has not ended.
func (c *Call) Live() bool { return c.live }

// StartTime is when the request's first operation was submitted.
func (c *Call) StartTime() time.Duration { return c.start }

// Waited marks that the request found every connection busy at from and
// got one at ready (open model; ready before from counts as from): the
// span is the target's backpressure, not hail's lateness. Engines call it
// right after Begin.
func (c *Call) Waited(from, ready time.Duration) {
	c.waited, c.waitFrom, c.ready = true, from, max(ready, from)
}

// Start stamps now as the moment the request's first operation (connect or
// send) is submitted. In the open model it records how late that was
// against the intended time, split into the wait for a free connection and
// hail's own lateness; in the closed model latency counts from here.
func (c *Call) Start(now time.Duration) {
	if c.started {
		return
	}
	c.started, c.start = true, now
	c.tr.Start = int64(now)
	if !c.open {
		c.at = now
		c.tr.Intended = int64(now)
		return
	}
	late := max(now-c.at, 0)
	var wait time.Duration
	if c.waited {
		wait = min(max(c.ready-c.waitFrom, 0), late)
	}
	c.rec.Delay(int64(late-wait), int64(wait))
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
		c.wrote = true
		c.rec.Sent(n)
	}
}

// MarkSent marks the request as sent without counting bytes (engines that
// count a connection's bytes themselves).
func (c *Call) MarkSent() { c.wrote = true }

// FirstByte marks the arrival of the first response byte at now; later
// calls are ignored (the first byte of the first hop counts).
func (c *Call) FirstByte(now time.Duration) {
	if c.fb < 0 {
		c.fb = now
	}
}

// RetryStale reports whether a request that failed as kind may be sent
// once more on a new connection, and counts it as a reconnect if so. This
// is what net/http and browsers do for a keep-alive connection that the
// server had closed before the request reached it: the request was sent on
// a reused connection (one that had carried an earlier request), no byte of
// its response arrived, the connection ended (closed, reset, broken pipe),
// it was not retried already, and resending is safe — its method is
// idempotent (RFC 9110 §9.2.2), or the server provably did not process it
// (none of its bytes was written, or a GOAWAY refused its stream).
func (c *Call) RetryStale(k stats.ErrorKind, reused, gotBytes, wroteAttempt, unprocessed bool, method string) bool {
	if c.retried || !reused || gotBytes {
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
// per-request log keeps its status too).
func (c *Call) Respond(now time.Duration, p *http1.Parser, reqs Requests) {
	if !c.live {
		return
	}
	c.Start(now)
	v := reqs.Done(c.step, p)
	c.setThink(v.Think)
	if c.tracing {
		c.tr.Status, c.tr.Body = int32(p.Status), p.BodyBytes
		if c.fb >= 0 {
			c.tr.FirstByte = int64(c.fb)
		}
	}
	if v.Failed {
		c.rec.Error(v.Kind)
		c.tr.SetError(v.Kind)
		c.end(now)
		return
	}
	fb := now
	if c.fb >= 0 {
		fb = c.fb
	}
	c.rec.Response(p.Status, int64(now-c.at), int64(max(fb-c.start, 0)), p.BodyBytes, p.WireBytes)
	if v.Expected && stats.StatusFailed(p.Status) {
		c.rec.Expected()
	}
	c.end(now)
}

// Received records wire bytes of a response that failed part way, before
// Fail: they count in the run's wire bytes as a complete response's do.
func (c *Call) Received(wire int64) {
	if c.live && wire > 0 {
		c.rec.Received(wire)
	}
}

// Fail ends the request at now as error kind k and hands it to reqs.Done
// without a response. A request aborted (k == stats.ErrAborted) before any
// of its bytes was written was never sent: it is counted as unsent, not as
// a request or an error.
func (c *Call) Fail(now time.Duration, k stats.ErrorKind, reqs Requests) {
	if !c.live {
		return
	}
	c.setThink(reqs.Done(c.step, nil).Think)
	if k == stats.ErrAborted && !c.wrote {
		c.rec.Unsent()
		c.tracing = false
		c.end(now)
		return
	}
	c.Start(now)
	c.rec.Error(k)
	if c.tracing {
		c.tr.SetError(k)
		if c.fb >= 0 {
			c.tr.FirstByte = int64(c.fb)
		}
	}
	c.end(now)
}

func (c *Call) end(now time.Duration) {
	c.live = false
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
