package netengine

import (
	"net"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/redirect"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
)

// worker drives one connection: it takes a request, sends it, reads the
// response (following redirects) and ends the request's call, reconnecting
// when the connection ends.
type worker struct {
	j     *engine.Job
	index int // connection number, for connection stages
	shard int
	reqs  engine.Requests
	body  engine.SharedBody // reqs' shared bodies; nil: every request holds its own
	take  *engine.Taker
	rec   *stats.Recorder // where the connection's setups and closes are counted

	slots chan struct{} // the run's dial slots (dialSlots)
	guard engine.Guard  // lets the abort end wire's connection and a dial; taken per connection, not per request
	wire  engine.Wire

	call   engine.Call
	chain  engine.Chain
	parser http1.Parser
}

func newWorker(j *engine.Job, i int, alarm *schedule.Alarm, slots chan struct{}) *worker {
	w := &worker{j: j, index: i, shard: i % len(j.Recorders[0]), reqs: j.NewRequests(i), slots: slots}
	w.body = engine.SharedBodies(w.reqs)
	w.take = engine.NewTaker(j, alarm, i, w.closeConn)
	w.rec = j.Recorders[0][w.shard]
	w.wire.Epoch = j.Start.UnixNano() // responses end at the kernel's receive time
	j.InitParser(&w.parser)
	w.wire.Guard = &w.guard
	j.AttachMeter(&w.call, &w.parser)
	return w
}

// abort ends the worker's connection now: a blocked read or write fails at
// once (a deadline in the past) and a dial in progress is cancelled.
func (w *worker) abort() { w.guard.Abort() }

func (w *worker) run() {
	defer w.closeConn()
	j := w.j
	for {
		hit, at, ok := w.take.Next()
		if !ok {
			return
		}
		req, step, head, ok := w.reqs.Next(hit)
		if !ok {
			w.rec.Skipped()
			continue
		}
		w.take.Begin(&w.call, w.shard, step, hit, at, int32(w.index))
		w.call.Reserve(w.reqs)
		w.call.Start(j.Since())
		var body []byte
		if w.body != nil {
			body = w.body.Body(hit, step)
		}
		w.do(req, body, head)
		w.take.End()
	}
}

// do performs one request (req, and its shared body if not nil),
// following redirects, and ends its call.
func (w *worker) do(req, body []byte, head bool) {
	j := w.j
	var deadline time.Time
	if j.Timeout > 0 {
		deadline = j.Start.Add(w.call.StartTime() + j.Timeout)
	}
	w.chain.Reset(j, req, body)
	for {
		if reused, wrote, err := w.exchange(w.chain.Req, w.chain.Body, head, deadline); err != nil {
			mid := w.parser.WireBytes > 0
			k := j.Kind(err, mid) // ErrAborted (never retried) when the run is aborting
			if w.call.RetryStale(k, reused, mid, wrote > 0, false, redirect.Method(w.chain.Req)) {
				w.closeConn() // the server had closed it: again, on a new connection
				continue
			}
			w.end(k)
			return
		}
		follow, same, err := w.chain.Follow(j, &w.parser)
		switch {
		case err != nil: // a redirect that cannot be followed: the connection itself is fine
			w.call.CutShort(w.parser.WireBytes)
			w.call.Fail(j.Since(), engine.Classify(err, false), w.reqs)
			return
		case !follow:
			w.call.Respond(w.wire.Last, &w.parser, w.reqs) // when its last bytes arrived
			return
		case !same:
			if err := j.FollowAway(&w.call, &w.chain, &w.parser, deadline, j.Abort); err != nil {
				w.fail(err)
				return
			}
			w.call.Respond(j.Since(), &w.parser, w.reqs)
			return
		}
		head = w.chain.Head()
	}
}

// exchange sends req (and its shared body) on the worker's connection
// (dialing one if needed) and reads one response into w.parser. reused is
// true when the connection had carried earlier requests; wrote is the
// bytes written.
func (w *worker) exchange(req, body []byte, head bool, deadline time.Time) (reused bool, wrote int, err error) {
	w.parser.Reset(head)
	if w.wire.Conn == nil {
		c, tm, err := w.dial()
		if err != nil {
			return false, 0, err
		}
		w.call.Connected(tm.DNS, tm.Total)
		w.setConn(c)
	}
	reused = w.wire.Served > 0
	if !deadline.IsZero() {
		w.guard.SetDeadline(deadline)
	}
	keep, wrote, err := w.wire.RoundTrip(&w.call, req, body, &w.parser, w.j.Since, deadline, w.j.Aborting)
	if err == nil && (!keep || !w.j.KeepAlive) {
		w.closeConn()
	}
	return reused, wrote, err
}

func (w *worker) setConn(c net.Conn) {
	w.wire.Attach(c)
	w.guard.Set(c)
}

func (w *worker) closeConn() {
	w.guard.Set(nil)
	if c := w.wire.Detach(); c != nil {
		c.Close()
		w.rec.Closed()
	}
}

// fail ends the request with err, closing the connection.
func (w *worker) fail(err error) { w.end(w.j.Kind(err, w.parser.WireBytes > 0)) }

// end ends the request as error kind k, closing the connection.
func (w *worker) end(k stats.ErrorKind) {
	w.closeConn()
	w.call.CutShort(w.parser.WireBytes) // what arrived of a response cut short
	w.call.Fail(w.j.Since(), k, w.reqs)
}

// dialSlots bounds the connections a run sets up at once, so a large -c
// neither overflows the server's accept backlog (SYN retries cost a second
// each) nor piles up thousands of half-built connections in memory. Each
// run has its own slots: runs side by side in one process (a library's
// callers) never wait for each other's dials.
const dialSlots = 256

type dialResult struct {
	c   net.Conn
	tm  transport.Timing
	err error
}

// dial connects on a short-lived goroutine: name resolution and connection
// setup need deep stacks, and a goroutine's stack does not shrink back while
// it sits in Read, so dialing on the worker's own stack would cost every
// connection 8 KiB of stack instead of 4 for the rest of the run.
func (w *worker) dial() (net.Conn, transport.Timing, error) {
	ctx := w.guard.Ctx()
	select {
	case w.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, transport.Timing{}, ctx.Err()
	}
	defer func() { <-w.slots }()
	ch := make(chan dialResult, 1)
	go func() {
		c, tm, err := w.j.Dialer.Dial(ctx)
		ch <- dialResult{c, tm, err}
	}()
	r := <-ch
	return r.c, r.tm, r.err
}
