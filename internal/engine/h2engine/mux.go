package h2engine

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
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
	// OpenOrigin opens a connection to another origin met in a redirect
	// (required). An origin it cannot go to (no dialer for it, a scheme the
	// engine cannot speak) is an error wrapping engine.ErrOtherOrigin, so
	// the request ends as a bad redirect, as on every engine.
	OpenOrigin func(ctx context.Context, u *url.URL) (Conn, error)
	// Classify names a failure; midResponse tells whether the response
	// head had arrived.
	Classify func(err error, midResponse bool) stats.ErrorKind
	// Settle is how long after a request was handed to a connection that
	// sends asynchronously (hail's HTTP/2 client writes from a goroutine of
	// its own, quic-go from its own; closing the connection discards what
	// is still queued, and a reset can discard what the server has not
	// read) an abort still waits for it before it cancels the requests
	// in flight and closes their connections: the wait ends as soon as no
	// request handed over less than Settle ago is still waiting for its
	// response head, so that the server's count matches the requests
	// counted as sent. A fixed pause after the abort (5 ms for HTTP/2, 20 ms
	// for HTTP/3) lost requests that a loaded machine had not sent in time.
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
			// The connection fails by itself after --connect-timeout; the
			// wait also ends when the run stops (-z, a signal).
			pctx, pcancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-j.Stop:
					pcancel()
				case <-pctx.Done():
				}
			}()
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
	shared := staticTemplates(j)
	var occ *engine.Occupancy
	if alarm != nil {
		occ = engine.NewOccupancy(n)
	}
	var wg sync.WaitGroup
	all := make([]*stream, n)
	for i := 0; i < n; i++ {
		s := newStream(m, j, ctx, conns[i/streams], i/streams, i, alarm, shared)
		if occ != nil {
			s.take.Share(occ)
		}
		all[i] = s
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
			m.settle(j, all)
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

// settle waits until no request handed to an asynchronous connection less
// than m.Settle ago is still waiting for its response head (Settle).
func (m *Mux) settle(j *engine.Job, streams []*stream) {
	if m.Settle <= 0 {
		return
	}
	for {
		wait, now := time.Duration(0), j.Since()
		for _, s := range streams {
			if at := s.handedAt.Load(); at != 0 {
				wait = max(wait, time.Duration(at)+m.Settle-now)
			}
		}
		if wait <= 0 {
			return
		}
		time.Sleep(min(wait, time.Millisecond))
	}
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
