package h2engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"hail/internal/engine"
	"hail/internal/http1"
	"hail/internal/schedule"
	"hail/internal/stats"
	"hail/internal/transport"
)

// Conn is one multiplexed client connection: hail's own HTTP/2 client (its
// requests go through exchange), or another that is also an
// http.RoundTripper returning once the response head arrived, such as the
// HTTP/3 engine's connection over QUIC.
type Conn interface {
	// Usable reports whether new requests may still start on the connection
	// (it is not closed and not draining after a GOAWAY).
	Usable() bool
	// Bytes are the bytes received and sent on the connection so far.
	Bytes() (in, out int64)
	// Close closes the connection at once; in-flight requests fail.
	Close() error
}

// Mux runs a job over multiplexed connections: Job.Connections connections
// with Streams requests in flight on each, c × p in all. It is the core of
// the HTTP/2 engine, and the HTTP/3 engine runs on it too.
//
// Every stream slot is a goroutine that claims requests exactly as a net
// engine worker does (closed model: from the Source; open model: tickets
// released by one pacer at their intended times, queued when every slot is
// busy), and records into the job's recorders in the same way: latency from
// the intended time in the open model, first byte when the response head
// arrives, status, body bytes, and each failure as one named error kind.
type Mux struct {
	// Streams is the number of concurrent requests per connection (-p).
	Streams int
	// Open opens a connection to the job's target, with its setup time.
	Open func(ctx context.Context) (Conn, transport.Timing, error)
	// OpenOrigin opens a connection to another origin met in a redirect.
	OpenOrigin func(ctx context.Context, u *url.URL) (Conn, error)
	// Classify names a failure; midResponse tells whether the response
	// head had arrived.
	Classify func(err error, midResponse bool) stats.ErrorKind
	// Settle is how long an abort waits before it cancels the requests in
	// flight and closes their connections, so that requests already handed
	// to a connection that sends asynchronously (QUIC) leave first and the
	// server's count matches the requests counted as sent.
	Settle time.Duration
}

// FatalError is a connection setup failure that no retry can fix, such as
// a server that does not speak the protocol. When the first connection of a
// run fails with one, Run returns its Err and nothing is sent.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

var errRunOver = errors.New("run over")

// Run implements the engine side of engine.Engine.Run.
func (m *Mux) Run(j *engine.Job) error {
	streams := max(m.Streams, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var retired sync.WaitGroup
	conns := make([]*slot, j.Connections)
	for i := range conns {
		conns[i] = &slot{m: m, ctx: ctx, retired: &retired, rec: j.Recorders[0][i%len(j.Recorders[0])]}
	}
	// Open the first connection now: a server that cannot speak the
	// protocol at all ends the run with one clear error.
	if c, tm, err := m.Open(ctx); err != nil {
		var fe *FatalError
		if errors.As(err, &fe) {
			return fe.Err
		}
	} else {
		if w, ok := c.(interface{ WaitPreface(context.Context) error }); ok {
			pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
			err := w.WaitPreface(pctx)
			pcancel()
			if err != nil {
				c.Close()
				return err
			}
		}
		conns[0].rec.Connected(int64(tm.DNS), int64(tm.Total))
		conns[0].conn = &live{Conn: c}
		conns[0].setup = tm
	}
	n := j.Connections * streams
	var alarm *schedule.Alarm
	if j.Source.Open() {
		alarm = schedule.NewAlarm(j.Start, j.Pacing)
		defer alarm.Close()
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		s := newStream(m, j, ctx, conns[i/streams], i/streams, i, alarm)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run()
		}()
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-j.Abort:
			if m.Settle > 0 {
				time.Sleep(m.Settle)
			}
			cancel()
			for _, c := range conns {
				c.close()
			}
		case <-done:
		}
	}()
	wg.Wait()
	close(done)
	for _, c := range conns {
		c.close()
	}
	cancel()
	retired.Wait()
	return nil
}

// live is an open connection and the bytes already attributed to responses.
type live struct {
	Conn
	seenIn, seenOut atomic.Int64
}

// take returns the bytes received and sent since the last take.
func (l *live) take() (in, out int64) {
	ci, co := l.Bytes()
	return advance(&l.seenIn, ci), advance(&l.seenOut, co)
}

// advance moves *seen up to cur and returns by how much (0 if another
// stream got there first).
func advance(seen *atomic.Int64, cur int64) int64 {
	for {
		prev := seen.Load()
		if cur <= prev {
			return 0
		}
		if seen.CompareAndSwap(prev, cur) {
			return cur - prev
		}
	}
}

// slot is one of the run's c connections, shared by its p streams. It is
// reopened when it dies (or drains after a GOAWAY); only one stream dials
// at a time and the others wait for that dial.
type slot struct {
	m        *Mux
	ctx      context.Context
	retired  *sync.WaitGroup
	rec      *stats.Recorder // connection setups and closes are recorded here
	inflight atomic.Int32

	mu     sync.Mutex
	conn   *live
	setup  transport.Timing // conn's setup time until a request claims it (per-request log)
	dial   *dialing
	closed bool
}

type dialing struct {
	done chan struct{}
	err  error
}

// get returns the slot's usable connection, opening one if needed, and
// the connection's setup time if this is the first request to get it
// (zero otherwise).
func (s *slot) get() (*live, transport.Timing, error) {
	s.mu.Lock()
	for {
		if s.closed {
			s.mu.Unlock()
			return nil, transport.Timing{}, errRunOver
		}
		if c := s.conn; c != nil {
			if c.Usable() {
				tm := s.setup
				s.setup = transport.Timing{}
				s.mu.Unlock()
				return c, tm, nil
			}
			s.retireLocked(c)
		}
		if d := s.dial; d != nil {
			s.mu.Unlock()
			select {
			case <-d.done:
			case <-s.ctx.Done():
				return nil, transport.Timing{}, s.ctx.Err()
			}
			if d.err != nil {
				return nil, transport.Timing{}, d.err
			}
			s.mu.Lock()
			continue
		}
		d := &dialing{done: make(chan struct{})}
		s.dial = d
		s.mu.Unlock()
		c, tm, err := s.m.Open(s.ctx)
		s.mu.Lock()
		s.dial = nil
		d.err = err
		close(d.done)
		if err != nil {
			s.mu.Unlock()
			return nil, transport.Timing{}, err
		}
		s.rec.Connected(int64(tm.DNS), int64(tm.Total))
		s.conn = &live{Conn: c}
		s.setup = tm
		if s.closed {
			s.retireLocked(s.conn)
		}
	}
}

// retire closes c if it is still the slot's connection.
func (s *slot) retire(c *live) {
	s.mu.Lock()
	if s.conn == c {
		s.retireLocked(c)
	}
	s.mu.Unlock()
}

// retireLocked takes c out of the slot and closes it: gracefully when the
// connection can finish its streams (after a GOAWAY), at once otherwise.
func (s *slot) retireLocked(c *live) {
	if s.conn == c {
		s.conn = nil
	}
	s.retired.Add(1)
	go func() {
		defer s.retired.Done()
		if sd, ok := c.Conn.(interface{ Shutdown(context.Context) error }); ok {
			_ = sd.Shutdown(s.ctx)
		}
		_ = c.Close()
		s.rec.Closed()
	}()
}

// idle closes the slot's connection when no request is in flight on it
// (a connection stage ramped it down).
func (s *slot) idle() {
	if s.inflight.Load() != 0 {
		return
	}
	s.mu.Lock()
	if c := s.conn; c != nil && s.inflight.Load() == 0 {
		s.retireLocked(c)
	}
	s.mu.Unlock()
}

// close ends the slot for good: its connection is closed at once.
func (s *slot) close() {
	s.mu.Lock()
	s.closed = true
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		_ = c.Close()
		s.rec.Closed()
	}
}

// stream is one request slot: it sends one request at a time over its
// connection slot.
type stream struct {
	m       *Mux
	j       *engine.Job
	ctx     context.Context
	conn    *slot
	connIdx int // connection number, for connection stages
	shard   int
	reqs    engine.Requests
	take    *engine.Taker
	tmpl    templates
	parser  http1.Parser
	buf     []byte
	call    engine.Call
	chain   engine.Chain
	h2call  call       // the HTTP/2 client's per-request state, reused
	result  httpResult // where the HTTP/2 client writes the response
	grpc    grpcResult // a gRPC call's messages and status, reused
	// gRPC calls sent and their messages, added to Job.Messages at the end
	calls, sent, received int64
}

func newStream(m *Mux, j *engine.Job, ctx context.Context, c *slot, connIdx, i int, alarm *schedule.Alarm) *stream {
	s := &stream{m: m, j: j, ctx: ctx, conn: c, connIdx: connIdx, shard: i % len(j.Recorders[0]), reqs: j.NewRequests(i),
		tmpl: templates{scheme: j.URL.Scheme}, buf: make([]byte, 16<<10)}
	s.take = engine.NewTaker(j, alarm, connIdx, c.idle)
	s.h2call.done = make(chan struct{}, 1)
	s.parser.BodyLimit = j.BodyLimit
	s.parser.WantLocation = j.MaxRedirects > 0
	return s
}

func (s *stream) run() {
	j := s.j
	defer func() {
		if s.calls > 0 {
			j.Messages.Calls.Add(s.calls)
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
		s.call.Start(j.Since())
		s.conn.inflight.Add(1)
		s.do(raw)
		s.conn.inflight.Add(-1)
		s.take.End(j.Since())
	}
}

// do performs one request, following redirects, and ends its call.
func (s *stream) do(raw []byte) {
	j := s.j
	ctx := s.ctx
	if j.Timeout > 0 { // -t bounds the whole request, redirects included
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, j.Start.Add(s.call.StartTime()+j.Timeout))
		defer cancel()
	}
	s.chain.Reset(j, raw)
	var away *live // the connection to another origin, once the chain left the run's
	defer func() {
		if away != nil {
			away.Close()
		}
	}()
	for {
		var tp *template
		var err error
		if away == nil {
			tp, err = s.tmpl.get(s.chain.Req)
		} else {
			tp, err = parseTemplate(s.chain.Req, s.chain.URL.Scheme)
		}
		if err != nil {
			s.call.Fail(j.Since(), stats.ErrOther, s.reqs)
			return
		}
		mid, reused, err := s.exchange(ctx, away, tp)
		if err != nil && tp.grpc && j.Timeout > 0 && !j.Aborting() &&
			(ctx.Err() == context.DeadlineExceeded || j.Since() >= s.call.StartTime()+j.Timeout-time.Millisecond) {
			// A gRPC call past its deadline (-t, sent as grpc-timeout) ends as
			// DeadlineExceeded, as gRPC clients end it, not as a failure —
			// also when the server, keeping the same deadline, reset it first.
			s.parser.Status = stats.GRPCStatus(stats.GRPCDeadlineExceeded)
			s.call.Respond(j.Since(), &s.parser, s.reqs)
			return
		}
		if err != nil {
			var ga *GoAwayError
			if !s.j.Aborting() && !errors.Is(err, errRunOver) &&
				s.call.RetryStale(s.m.Classify(err, mid), reused, mid, s.h2call.wrote, errors.As(err, &ga), tp.req.Method) {
				continue // the connection had gone stale (or refused the stream): again, on a new one
			}
			s.fail(err, mid)
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
			if s.m.OpenOrigin == nil {
				s.fail(errors.New("redirect to another origin"), false)
				return
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
func (s *stream) exchange(ctx context.Context, c *live, tp *template) (mid, reused bool, err error) {
	s.parser.Reset(tp.head)
	s.h2call.wrote = false
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
		mid, err = s.exchangeH2(ctx, c, hc, tp)
	} else {
		mid, err = s.roundTrip(ctx, c, tp)
	}
	if err == nil && own && !s.j.KeepAlive {
		s.conn.retire(c)
	}
	return mid, reused, err
}

// exchangeH2 sends tp on hc, hail's HTTP/2 client on c, which writes the
// response into s.parser's fields. It reports whether the response head
// had arrived when it failed.
func (s *stream) exchangeH2(ctx context.Context, c *live, hc *client, tp *template) (mid bool, err error) {
	r := &s.result
	*r = httpResult{status: &s.parser.Status, body: &s.parser.BodyBytes, capture: &s.parser.Body, limit: s.parser.BodyLimit,
		location: &s.parser.Location, wantLoc: s.parser.WantLocation}
	if tp.grpc {
		s.grpc.reset()
		r.grpc = &s.grpc
	}
	err = hc.exchange(ctx, tp, &s.h2call, r)
	if s.h2call.wrote {
		s.call.MarkSent()
	}
	if r.fb > 0 {
		s.call.FirstByte(r.fb)
	}
	if tp.grpc {
		s.endGRPC(tp)
	}
	s.account(c)
	if err != nil {
		s.parser.Status = 0
		return s.h2call.gotHeaders, causeOf(c, err)
	}
	if tp.grpc {
		s.parser.Status = stats.GRPCStatus(s.grpc.code(s.parser.Status))
	}
	s.parser.ContentLength = s.parser.BodyBytes
	s.parser.KeepAlive = true
	return false, nil
}

// roundTrip sends tp on c, a Conn that is an http.RoundTripper (the HTTP/3
// engine's), and reads the response into s.parser. It reports whether the
// response head had arrived when it failed.
func (s *stream) roundTrip(ctx context.Context, c *live, tp *template) (mid bool, err error) {
	req := tp.req.WithContext(ctx)
	if len(tp.body) > 0 {
		req.Body = &bodyReader{b: tp.body}
	}
	// A request handed to the round tripper is on its way: the QUIC stack
	// sends its frames at once (the engine lets them leave before it closes
	// connections at an abort).
	s.call.MarkSent()
	resp, err := c.Conn.(http.RoundTripper).RoundTrip(req)
	if err != nil {
		s.account(c)
		return false, causeOf(c, err)
	}
	s.call.FirstByte(s.j.Since())
	n, rerr := s.readBody(resp.Body)
	resp.Body.Close()
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

// endGRPC counts a gRPC call's messages and stamps its first byte: the
// first response message.
func (s *stream) endGRPC(tp *template) {
	if s.h2call.wrote {
		s.calls++
		s.sent += tp.msgs
	}
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
	s.call.Wrote(out)
}

// readBody drains a response body, keeping its first BodyLimit bytes.
func (s *stream) readBody(b io.Reader) (int64, error) {
	var n int64
	for {
		k, err := b.Read(s.buf)
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

func (s *stream) fail(err error, mid bool) {
	k := stats.ErrAborted
	if !s.j.Aborting() && !errors.Is(err, errRunOver) {
		k = s.m.Classify(err, mid)
	}
	s.call.Fail(s.j.Since(), k, s.reqs)
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
