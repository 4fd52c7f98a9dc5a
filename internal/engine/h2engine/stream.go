package h2engine

// A stream slot's loop: claim a request, send it (following redirects) on
// the connection slot's HTTP/2 client or round tripper, and record how it
// ended.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
	sm "github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/transport"
)

// stream is one request slot: it sends one request at a time over its
// connection slot.
type stream struct {
	m       *Mux
	j       *engine.Job
	ctx     context.Context // the stream's own child of the Mux's: -t deadlines hang under it, not under one context all streams share
	cancel  context.CancelFunc
	conn    *slot
	connIdx int // connection number, for connection stages
	shard   int
	reqs    engine.Requests
	sb      engine.SharedBody // reqs' shared bodies; nil: every request holds its own
	take    *engine.Taker
	tmpl    templates
	parser  http1.Parser
	buf     []byte
	call    engine.Call
	chain   engine.Chain
	meter   *sm.Meter  // the call's stream meter (nil: streams are not measured)
	h2call  call       // the HTTP/2 client's per-request state, reused
	result  httpResult // where the HTTP/2 client writes the response
	grpc    grpcResult // a gRPC call's messages and status, reused
	// gRPC calls sent, their retries and messages, added to Job.Messages at the end
	calls, retries, sent, received int64
	callSent                       bool // the call in progress was counted as sent
	retrying                       bool // the attempt in progress sends the call again after RetryStale
	// handedAt is when (Job.Since, at least 1) the request in flight was
	// handed to its connection, which sends asynchronously (hail's HTTP/2
	// client through its writer goroutine, quic-go from its own), until
	// the exchange returns; 0 otherwise. An abort waits for it
	// (Mux.settle).
	handedAt atomic.Int64
}

func newStream(m *Mux, j *engine.Job, ctx context.Context, c *slot, connIdx, i int, alarm *schedule.Alarm, shared []*template) *stream {
	s := &stream{m: m, j: j, conn: c, connIdx: connIdx, shard: i % len(j.Recorders[0]), reqs: j.NewRequests(i),
		tmpl: templates{scheme: j.URL.Scheme, shared: shared}, buf: make([]byte, 16<<10)}
	s.sb = engine.SharedBodies(s.reqs)
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.take = engine.NewTaker(j, alarm, connIdx, c.idle)
	s.h2call.done = make(chan struct{}, 1)
	j.AttachMeter(&s.call, nil)
	s.meter = s.call.Meter()
	s.parser.BodyLimit = j.BodyLimit
	s.parser.WantLocation = j.MaxRedirects > 0
	return s
}

func (s *stream) run() {
	j := s.j
	defer s.cancel()
	defer func() {
		if s.calls > 0 {
			j.Messages.Calls.Add(s.calls)
			j.Messages.Retries.Add(s.retries)
			j.Messages.Sent.Add(s.sent)
			j.Messages.Received.Add(s.received)
		}
	}()
	for {
		hit, at, ok := s.take.Next()
		if !ok {
			return
		}
		raw, step, _, ok := s.reqs.Next(hit)
		if !ok {
			s.conn.rec.Skipped()
			continue
		}
		s.take.Begin(&s.call, s.shard, step, hit, at, int32(s.connIdx))
		s.call.Reserve(s.reqs)
		s.call.Start(j.Since())
		var body []byte
		if s.sb != nil {
			body = s.sb.Body(hit, step)
		}
		s.conn.inflight.Add(1)
		s.do(raw, body, hit)
		s.conn.inflight.Add(-1)
		s.take.End()
	}
}

// do performs one request (raw, and its shared body if not nil, for hit),
// following redirects, and ends its call.
func (s *stream) do(raw, body []byte, hit uint64) {
	j := s.j
	ctx := s.ctx
	if j.Timeout > 0 { // -t bounds the whole request, redirects included
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, j.Start.Add(s.call.StartTime()+j.Timeout))
		defer cancel()
	}
	s.chain.Reset(j, raw, body)
	s.callSent, s.retrying = false, false
	var away *live // the connection to another origin, once the chain left the run's
	defer func() {
		if away != nil {
			away.Close()
		}
	}()
	for {
		var tp *template
		var body []byte // the request's: its own (part of its bytes), or the shared one
		var err error
		shared := s.chain.Body != nil
		if away == nil {
			tp, body, err = s.tmpl.get(s.chain.Req, hit, shared)
		} else if tp, err = parseTemplate(s.chain.Req, s.chain.URL.Scheme); err == nil {
			body = tp.body
		}
		if shared {
			body = s.chain.Body
		}
		if err != nil {
			s.call.Fail(j.Since(), stats.ErrOther, s.reqs)
			return
		}
		mid, reused, err := s.exchange(ctx, away, tp, body)
		if err != nil && tp.grpc && j.Timeout > 0 && !j.Aborting() &&
			(ctx.Err() == context.DeadlineExceeded || j.Since() >= s.call.StartTime()+j.Timeout-time.Millisecond) {
			// A gRPC call past its deadline (-t, sent as grpc-timeout) ends as
			// DeadlineExceeded, as gRPC clients end it, not as a failure —
			// also when the server, keeping the same deadline, reset it first.
			s.parser.Status = status.GRPC(status.GRPCDeadlineExceeded)
			s.call.Respond(j.Since(), &s.parser, s.reqs)
			return
		}
		if err != nil {
			var ga *GoAwayError
			k := s.kind(err, mid) // ErrAborted (never retried) when the run is aborting or over
			if s.call.RetryStale(k, reused, mid, s.h2call.wrote, errors.As(err, &ga), tp.method) {
				s.retrying = true
				continue // the connection had gone stale (or refused the stream): again, on a new one
			}
			s.call.CutShort(s.parser.WireBytes) // what arrived of a response cut short
			s.call.Fail(j.Since(), k, s.reqs)
			return
		}
		follow, same, err := s.chain.Follow(j, &s.parser)
		if err != nil {
			s.fail(err, false)
			return
		}
		if !follow {
			s.call.Respond(j.Since(), &s.parser, s.reqs)
			return
		}
		if !same {
			if away != nil {
				away.Close()
				away = nil
			}
			c, err := s.m.OpenOrigin(ctx, s.chain.URL)
			if err != nil {
				s.fail(err, false)
				return
			}
			away = &live{Conn: c}
		}
	}
}

// exchange sends tp on c (nil: the stream's connection slot) and reads the
// response into s.parser. It reports whether the response head had arrived
// when it failed, and whether the connection had carried earlier requests.
func (s *stream) exchange(ctx context.Context, c *live, tp *template, body []byte) (mid, reused bool, err error) {
	s.parser.Reset(tp.head)
	// Nothing of this attempt was written or read yet: a connection that
	// turns it away before it takes it (draining after a GOAWAY) leaves
	// the previous request's marks, which would make it look answered in
	// part and keep it from going out again on a new connection.
	s.h2call.wrote, s.h2call.gotHeaders = false, false
	own := c == nil
	if own {
		var tm transport.Timing
		if c, tm, err = s.conn.get(); err != nil {
			return false, false, err
		}
		if tm.Total > 0 {
			s.call.TraceConnect(tm.DNS, tm.Total)
		}
		reused = tm.Total == 0
	}
	if hc, ok := c.Conn.(*client); ok {
		mid, err = s.exchangeH2(ctx, c, hc, tp, body)
	} else {
		mid, err = s.roundTrip(ctx, c, tp, body)
	}
	if err == nil && own && !s.j.KeepAlive {
		s.conn.retire(c)
	}
	return mid, reused, err
}

// exchangeH2 sends tp on hc, hail's HTTP/2 client on c, which writes the
// response into s.parser's fields. It reports whether the response head
// had arrived when it failed.
func (s *stream) exchangeH2(ctx context.Context, c *live, hc *client, tp *template, body []byte) (mid bool, err error) {
	r := &s.result
	*r = httpResult{status: &s.parser.Status, body: &s.parser.BodyBytes, capture: &s.parser.Body, limit: s.parser.BodyLimit,
		location: &s.parser.Location, wantLoc: s.parser.WantLocation, meter: s.meter, head: tp.head}
	if tp.grpc {
		s.grpc.reset()
		r.grpc = &s.grpc
	}
	// The connection's writer goroutine sends the frames: an abort lets
	// them leave before it closes the connections (Mux.settle).
	s.handedAt.Store(max(int64(s.j.Since()), 1))
	err = hc.exchange(ctx, tp, body, &s.h2call, r)
	s.handedAt.Store(0)
	if s.h2call.wrote {
		s.call.MarkSent()
	}
	if r.fb > 0 {
		s.call.FirstByte(r.fb)
	}
	if tp.grpc {
		s.endGRPC(body)
	}
	s.account(c)
	if err != nil {
		s.parser.Status = 0
		return s.h2call.gotHeaders, causeOf(c, err)
	}
	if tp.grpc {
		s.parser.Status = status.GRPC(s.grpc.code(s.parser.Status))
	}
	s.parser.ContentLength = s.parser.BodyBytes
	s.parser.KeepAlive = true
	return false, nil
}

// roundTrip sends tp on c, a Conn that is an http.RoundTripper (the HTTP/3
// engine's), and reads the response into s.parser. It reports whether the
// response head had arrived when it failed.
func (s *stream) roundTrip(ctx context.Context, c *live, tp *template, body []byte) (mid bool, err error) {
	r, err := tp.request()
	if err != nil {
		return false, err
	}
	req := r.WithContext(ctx)
	req.ContentLength = int64(len(body))
	if len(body) > 0 {
		req.Body = &bodyReader{b: body}
	}
	// A request handed to the round tripper is on its way: the QUIC stack
	// sends its frames from its own goroutine, and an abort lets them leave
	// before it closes the connections (Mux.settle).
	s.handedAt.Store(max(int64(s.j.Since()), 1))
	s.call.MarkSent()
	resp, err := c.Conn.(http.RoundTripper).RoundTrip(req)
	s.handedAt.Store(0)
	if err != nil {
		s.account(c)
		return false, causeOf(c, err)
	}
	s.call.FirstByte(s.j.Since())
	var idle *idleCloser
	if m := s.meter; m != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.StatusCode != 204 && !tp.head &&
		(http1.IsEventStream([]byte(resp.Header.Get("Content-Type"))) || m.All()) {
		m.Time(s.j.Since(), -1)
		m.StreamHead()
		idle = watchIdle(m, resp.Body, s.j.Since)
	}
	n, rerr := s.readBody(resp.Body)
	resp.Body.Close()
	if idle.stop() && rerr != nil {
		rerr = engine.ErrStreamIdle
	}
	s.parser.BodyBytes = n
	if rerr != nil {
		s.account(c)
		return true, causeOf(c, rerr)
	}
	s.parser.Status = resp.StatusCode
	s.parser.ContentLength = resp.ContentLength
	s.parser.KeepAlive = true
	if s.parser.WantLocation {
		if loc := resp.Header.Get("Location"); loc != "" {
			s.parser.Location = append(s.parser.Location[:0], loc...)
		}
	}
	s.account(c)
	return false, nil
}

// endGRPC counts a gRPC call (body holds the messages it sent) and stamps
// its first byte: the first response message. A call is counted once,
// when its first attempt is sent; an attempt that sends it again after a
// stale connection or a GOAWAY (RetryStale) is a retry, counted apart.
func (s *stream) endGRPC(body []byte) {
	if s.h2call.wrote {
		switch {
		case !s.callSent:
			s.calls++
			s.sent += countFrames(body)
			s.callSent = true
		case s.retrying:
			s.retries++
		}
	}
	s.retrying = false
	s.received += s.grpc.msgs
	if s.grpc.fb > 0 {
		s.call.FirstByte(s.grpc.fb)
	}
}

// causeOf returns the reason c died when the connection knows a better
// one than err (a rejected client certificate), else err.
func causeOf(c *live, err error) error {
	if cc, ok := c.Conn.(interface{ Cause() error }); ok {
		if cause := cc.Cause(); cause != nil {
			return cause
		}
	}
	return err
}

// account records the bytes the connection moved since the last response
// on it: received bytes as this response's wire bytes, sent ones as sent.
func (s *stream) account(c *live) {
	in, out := c.take()
	s.parser.WireBytes = in
	s.call.WroteBytes(out) // sent is marked by the exchange (MarkSent)
}

// readBody drains a response body, keeping its first BodyLimit bytes.
func (s *stream) readBody(b io.Reader) (int64, error) {
	var n int64
	for {
		k, err := b.Read(s.buf)
		if k > 0 && s.meter != nil && s.meter.On() {
			s.meter.Time(s.j.Since(), -1)
			s.meter.StreamBody(s.buf[:k])
		}
		if k > 0 {
			if room := s.parser.BodyLimit - len(s.parser.Body); room > 0 {
				s.parser.Body = append(s.parser.Body, s.buf[:min(k, room)]...)
			}
			n += int64(k)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// fail ends the request with err.
func (s *stream) fail(err error, mid bool) { s.call.Fail(s.j.Since(), s.kind(err, mid), s.reqs) }

// kind is the error kind a request that failed with err ends as: aborted
// while the run is aborting or over (the Mux ended it), else the Mux's
// classification.
func (s *stream) kind(err error, mid bool) stats.ErrorKind {
	if s.j.Aborting() || errors.Is(err, errRunOver) {
		return stats.ErrAborted
	}
	return s.m.Classify(err, mid)
}

// bodyReader is a request body over shared bytes.
type bodyReader struct {
	b []byte
	i int
}

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

func (r *bodyReader) Close() error { return nil }

// idleCloser ends a stream read through an io.Reader (HTTP/3's response
// body) that goes longer than the idle timeout without an event, by
// closing the body under the blocked read. Its timer fires once per idle
// period and is set again from the stream's latest event.
type idleCloser struct {
	t     *time.Timer
	fired atomic.Bool
}

// watchIdle starts an idleCloser for m's stream, read from body; nil when
// no idle timeout applies.
func watchIdle(m *sm.Meter, body io.Closer, since func() time.Duration) *idleCloser {
	if m.Idle() <= 0 {
		return nil
	}
	ic := &idleCloser{}
	ic.t = time.AfterFunc(time.Hour, func() {
		at := m.IdleAt()
		if now := since(); at > now {
			ic.t.Reset(at - now)
			return
		}
		if at > 0 {
			ic.fired.Store(true)
			body.Close()
		}
	})
	ic.t.Reset(m.Idle()) // armed once ic.t is set: the function resets it
	return ic
}

// stop stops the timer and reports whether it closed the body.
func (ic *idleCloser) stop() bool {
	if ic == nil {
		return false
	}
	ic.t.Stop()
	return ic.fired.Load()
}
