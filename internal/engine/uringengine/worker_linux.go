//go:build linux

package uringengine

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"hail/internal/engine"
	"hail/internal/http1"
	"hail/internal/stats"
	"hail/internal/transport"
	"hail/internal/uring"
)

// Operations, in the low byte of a submission's user data. The rest of it is
// the connection index (high 32 bits) and the connection's generation (24
// bits), so completions of a connection that has been closed since are
// recognised as stale.
const (
	opConnect uint8 = iota + 1
	opSend
	opRecv
	opShutdown // wakes everything pending on a connection's socket before its close
	opClose
	opTimer         // the open model's wake-up for the next intended send
	opTimerCancel   // removes the timer at the end of the run
	opTeardownClose // closes a socket at the end of the run
)

const (
	genMask = 1<<24 - 1
	// pollInterval bounds every wait, so that the end of the run and an
	// abort are noticed even when nothing completes.
	pollInterval = 50 * time.Millisecond
	// drainTimeout bounds the wait for cancelled operations at the end.
	drainTimeout = 2 * time.Second
	// defaultBufSize is the size of a provided receive buffer.
	defaultBufSize = 4096
	// maxIdleCarry bounds the bytes a server may send on an idle connection.
	maxIdleCarry = 64 << 10
	// sockaddrSize holds a sockaddr_un (110 bytes) or a sockaddr_in6.
	sockaddrSize = 112
)

// Deadline lists.
const (
	listNone int8 = iota
	listConnect
	listRequest
	numLists
)

var (
	errRequestTimeout = os.ErrDeadlineExceeded
	errConnectTimeout = &transport.ConnectTimeoutError{Err: os.ErrDeadlineExceeded}
)

// conn is one connection slot of a worker: its socket (if any) and the
// request in progress on it.
type conn struct {
	reqs engine.Requests // the worker's builder, or this connection's own (Job.PerConnection)
	idx  int32
	gen  uint32 // bumped at every close; stale completions carry an older one
	fd   int32  // -1 when there is no socket

	connecting  bool // a connect is in flight
	handshaking bool // hybrid vsock: connected, the CONNECT reply not read yet
	connected   bool
	recvArmed   bool // the multishot receive is armed
	sending     bool // a send is in flight; req must not change
	active      bool // a request is in progress
	eof         bool // the peer closed its side
	inFree      bool // in the worker's idle queue
	stamp       bool // start (and lag) are stamped at the next submission
	queued      bool // open model: the request waited for a free connection
	head        bool // the current request is HEAD

	step int
	hit  uint64 // the request's number (TraceRecord.Hit)
	hops int
	rec  *stats.Recorder
	u    *url.URL

	at        time.Duration // latency counts from here: intended (open) or actual (closed) send
	start     time.Duration // actual start of the request
	fb        time.Duration // first response byte, -1 before
	connStart time.Duration
	dns       time.Duration

	req     []byte // the request: stable memory
	out     []byte // the bytes being sent (req, or the vsock CONNECT line)
	sent    int
	sendBuf []byte // arena memory for copied requests
	sa      []byte // arena memory for the connect sockaddr

	parser http1.Parser
	carry  []byte // unconsumed bytes: a split line, or bytes that came early

	list       int8
	prev, next int32
	deadline   time.Duration

	tr stats.TraceRecord // the per-request log's record of the current request (when tracing)
}

type pending struct {
	hit uint64
	at  time.Duration
}

type dlist struct{ head, tail int32 }

// worker runs one ring and its share of the connections.
type worker struct {
	e      *Engine
	j      *engine.Job
	id     int
	shard  int
	open   bool
	reqs   engine.Requests
	stable bool // reqs returns bytes that stay valid for the run (engine.Static)
	ctx    context.Context
	err    error

	connBase int32   // the run-wide number of this worker's first connection (per-request log)
	nworkers int     // workers in the run: connection stages count connections across them, interleaved
	parked   []int32 // closed-model stages: idle slots whose connection is not active now

	ring    *uring.Ring
	br      *uring.BufRing // provided receive buffers (multishot receives)
	arena   *uring.Arena   // sockaddrs and the timer's timespec
	sendMem []*uring.Arena // chunks for copied request bytes

	conns   []conn
	free    fifo[int32]   // idle connection slots
	waiting fifo[pending] // open model: due requests waiting for a connection

	exhausted  bool // no more requests will be claimed
	stopped    bool
	hasNext    bool // open model: a claimed request not yet dispatched
	next       pending
	nextQueued bool

	timerArmed bool
	timerTS    *uring.Timespec
	monoStart  time.Duration // CLOCK_MONOTONIC at j.Start

	now            time.Duration // since j.Start, read once per batch
	stampList      []int32
	outstanding    int // operations whose last completion has not been reaped
	busy           int // requests in progress
	lists          [numLists]dlist
	connectTimeout time.Duration
	ep             transport.Endpoint // the last endpoint (for the vsock handshake)
	hsLine         []byte             // hybrid vsock "CONNECT <port>\n", arena memory
	cqes           [512]uring.CQE
	scratch        uring.SQE
	redir          []byte
}

func newWorker(e *Engine, j *engine.Job, id, n int) *worker {
	return &worker{e: e, j: j, id: id, shard: id % len(j.Recorders[0]), open: j.Source.Open(), conns: make([]conn, n),
		ctx: context.Background()}
}

// main runs on its own goroutine: it locks the thread, sets the ring up,
// reports, waits for the go-ahead and runs the event loop.
func (w *worker) main(ready chan<- error, start <-chan bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if w.open {
		// Timers on this thread fire without the default 50 µs slack.
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		defer unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)
	}
	err := w.setup()
	ready <- err
	if ok := <-start; ok && err == nil {
		w.loop()
	}
	w.teardown()
}

func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

func (w *worker) setup() error {
	n := len(w.conns)
	sq := pow2(min(max(2*n, 64), 4096))
	cq := pow2(min(max(4*n, 2*sq), 65536))
	r, err := uring.New(uint32(sq), &uring.Options{CQEntries: uint32(cq), SQPoll: w.e.SQPoll})
	if err != nil {
		if errors.Is(err, uring.ErrUnavailable) {
			return explainSetup(err, uring.Disabled())
		}
		return err
	}
	w.ring = r
	size, count := w.e.bufSize, w.e.bufCount
	if size <= 0 {
		size = defaultBufSize
	}
	if count <= 0 {
		// Buffers go back to the kernel as soon as their bytes are parsed,
		// so a few per batch suffice: at -c 5000 no receive ran dry with 64.
		// An empty ring only costs a re-armed receive.
		count = min(max(pow2(n/8), 64), 256)
	}
	if w.br, err = r.NewBufRing(0, uint32(pow2(count)), size); err != nil {
		return err
	}
	if w.arena, err = uring.NewArena(n*sockaddrSize + 64); err != nil {
		return err
	}
	w.timerTS = w.arena.Timespec(0)
	for i := range w.conns {
		c := &w.conns[i]
		c.idx, c.fd, c.prev, c.next, c.fb = int32(i), -1, -1, -1, -1
		c.sa = w.arena.Alloc(sockaddrSize)
		c.parser.BodyLimit = w.j.BodyLimit
		c.parser.WantHeaders = w.j.CaptureHeaders
		c.parser.MaxHeaderBytes = w.j.MaxHeaderBytes
		c.parser.WantLocation = w.j.MaxRedirects > 0
	}
	for i := range w.lists {
		w.lists[i] = dlist{-1, -1}
	}
	w.free = newFIFO[int32](n)
	for i := range w.conns {
		w.release(&w.conns[i])
	}
	if w.open {
		w.waiting = newFIFO[pending](n)
	}
	w.stampList = make([]int32, 0, n)
	w.reqs = w.j.NewRequests(w.id)
	_, w.stable = w.reqs.(*engine.Static)
	for i := range w.conns {
		w.conns[i].reqs = w.reqs
		if w.j.PerConnection {
			w.conns[i].reqs = w.j.NewRequests(int(w.connBase) + i)
		}
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return err
	}
	w.monoStart = time.Duration(ts.Nano()) - w.since()
	return nil
}

func (w *worker) since() time.Duration { return time.Since(w.j.Start) }

func (w *worker) aborting() bool {
	if w.j.Aborting() {
		return true
	}
	select {
	case <-w.j.Abort:
		return true
	default:
		return false
	}
}

func (w *worker) stopSignalled() bool {
	select {
	case <-w.j.Stop:
		return true
	default:
		return false
	}
}

// loop is the event loop: reap, react, queue, and one io_uring_enter.
func (w *worker) loop() {
	for {
		w.now = w.since()
		w.reap()
		if w.aborting() {
			w.abortAll(stats.ErrAborted)
			return
		}
		if w.err != nil {
			w.abortAll(stats.ErrOther)
			return
		}
		if !w.stopped && w.stopSignalled() {
			w.stopped, w.exhausted, w.hasNext = true, true, false
		}
		w.expire()
		w.dispatch()
		if w.exhausted && !w.hasNext && w.busy == 0 && w.waiting.len() == 0 {
			return
		}
		if err := w.submitWait(); err != nil {
			w.err = err
			w.abortAll(stats.ErrOther)
			return
		}
	}
}

// reap handles every completion that is ready.
func (w *worker) reap() {
	for {
		n := w.ring.PeekCQEs(w.cqes[:])
		if n == 0 {
			break
		}
		for i := 0; i < n; i++ {
			w.handle(&w.cqes[i])
		}
	}
	w.br.Advance()
}

// submitWait stamps the requests started in this batch, then submits
// everything queued and waits for a completion, bounded by the earliest
// deadline and pollInterval.
func (w *worker) submitWait() error {
	t := w.since()
	for _, i := range w.stampList {
		if c := &w.conns[i]; c.stamp {
			w.stampOne(c, t)
		}
	}
	w.stampList = w.stampList[:0]
	d := pollInterval
	for l := listConnect; l < numLists; l++ {
		if h := w.lists[l].head; h >= 0 {
			d = min(d, w.conns[h].deadline-t)
		}
	}
	_, err := w.ring.SubmitAndWaitTimeout(1, max(d, 0))
	if err != nil && !errors.Is(err, uring.ErrTimeout) {
		return err
	}
	return nil
}

// stampOne fixes the start of c's request at t, the time its first
// operation is submitted, records its schedule lag or queueing (open model)
// and starts its deadline.
func (w *worker) stampOne(c *conn, t time.Duration) {
	c.stamp = false
	c.start = t
	if !w.open {
		c.at = t
	} else if c.queued {
		c.rec.Queued(int64(t - c.at))
	} else {
		c.rec.Lag(int64(t - c.at))
	}
	switch {
	case c.connecting:
		c.connStart = t
		if w.connectTimeout > 0 {
			w.push(listConnect, c, t+w.connectTimeout)
		}
	case c.sending:
		if w.j.Timeout > 0 {
			w.push(listRequest, c, t+w.j.Timeout)
		}
	}
}

// sqe returns a free submission entry, flushing the queue when it is full.
// If the ring refuses submissions for good, it records the error and hands
// out a scratch entry that is never submitted: the run then ends.
func (w *worker) sqe() *uring.SQE {
	for spins := 0; spins < 100_000; spins++ {
		if s := w.ring.GetSQE(); s != nil {
			return s
		}
		w.br.Advance()
		if _, err := w.ring.Submit(); err != nil || spins > 0 {
			runtime.Gosched()
		}
	}
	if w.err == nil {
		w.err = errors.New("the submission queue stays full")
	}
	w.exhausted = true
	w.scratch = uring.SQE{}
	return &w.scratch
}

func ud(c *conn, op uint8) uint64 {
	return uint64(uint32(c.idx))<<32 | uint64(c.gen&genMask)<<8 | uint64(op)
}

// handle reacts to one completion.
func (w *worker) handle(cqe *uring.CQE) {
	u := cqe.UserData
	op := uint8(u)
	if op != opRecv || !cqe.More() {
		w.outstanding--
	}
	switch op {
	case opTimer:
		w.timerArmed = false
		return
	case opShutdown, opClose, opTimerCancel:
		return
	case opTeardownClose:
		if cqe.Res >= 0 {
			w.conns[u>>32].fd = -1
		}
		return
	}
	c := &w.conns[u>>32]
	if uint32(u>>8)&genMask != c.gen&genMask {
		if cqe.HasBuffer() {
			w.br.Add(cqe.BufferID())
		}
		return
	}
	switch op {
	case opConnect:
		w.onConnect(c, cqe.Res)
	case opSend:
		w.onSend(c, cqe.Res)
	case opRecv:
		w.onRecv(c, cqe)
	}
}

func errnoOf(res int32) error { return syscall.Errno(-res) }

func (w *worker) onConnect(c *conn, res int32) {
	c.connecting = false
	if res < 0 {
		w.fail(c, errnoOf(res))
		return
	}
	c.connected = true
	w.armRecv(c)
	if w.ep.Hybrid {
		// The connect deadline (c stays in its list) runs on until the VMM
		// answers.
		c.handshaking = true
		c.sending, c.sent, c.out = true, 0, w.hsLine
		w.queueSend(c)
		return
	}
	w.unlist(c)
	w.connected(c)
	w.send(c)
}

// connected records c's finished connection setup.
func (w *worker) connected(c *conn) {
	c.rec.Connected(int64(c.dns), int64(c.dns+w.now-c.connStart))
	c.tr.Connect, c.tr.DNS = int64(c.dns+w.now-c.connStart), int64(c.dns)
}

// onHandshake reads the VMM's answer to CONNECT: one line, "OK <port>\n".
func (w *worker) onHandshake(c *conn, data []byte) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		c.carry = append(c.carry, data...)
		if len(c.carry) >= transport.MaxVsockReply {
			w.fail(c, &transport.VsockGarbledError{Path: w.ep.Unix, Port: w.ep.VsockPort, Reply: string(c.carry)})
		}
		return
	}
	c.carry = append(c.carry, data[:i+1]...)
	if !transport.VsockReplyOK(c.carry) {
		w.fail(c, &transport.VsockGarbledError{Path: w.ep.Unix, Port: w.ep.VsockPort, Reply: string(c.carry)})
		return
	}
	c.carry = append(c.carry[:0], data[i+1:]...) // anything after the line is the target's
	c.handshaking = false
	w.unlist(c)
	w.connected(c)
	if !c.sending {
		w.send(c)
	}
}

// handshakeFailed names a hybrid-vsock connection that ended before its
// handshake did, as transport.VsockHandshake would.
func (w *worker) handshakeFailed(c *conn, err error) {
	if len(c.carry) > 0 {
		w.fail(c, &transport.VsockGarbledError{Path: w.ep.Unix, Port: w.ep.VsockPort, Reply: string(c.carry)})
		return
	}
	if err == nil || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
		w.fail(c, &transport.VsockRefusedError{Path: w.ep.Unix, Port: w.ep.VsockPort})
		return
	}
	w.fail(c, err)
}

func (w *worker) onSend(c *conn, res int32) {
	if res < 0 && c.handshaking {
		w.handshakeFailed(c, errnoOf(res))
		return
	}
	if res < 0 {
		if c.active {
			w.fail(c, errnoOf(res))
		} else {
			w.closeConn(c)
		}
		return
	}
	c.sent += int(res)
	if c.sent < len(c.out) {
		w.queueSend(c)
		return
	}
	c.sending = false
	if c.handshaking {
		return
	}
	if len(w.hsLine) > 0 && &c.out[0] == &w.hsLine[0] {
		// The VMM answered before the CONNECT send completed.
		w.send(c)
		return
	}
	c.rec.Sent(int64(len(c.req)))
	if !c.active {
		w.release(c)
	}
}

func (w *worker) onRecv(c *conn, cqe *uring.CQE) {
	gen := c.gen
	if !cqe.More() {
		c.recvArmed = false
	}
	switch res := cqe.Res; {
	case res > 0:
		bid := cqe.BufferID()
		w.onData(c, w.br.Buf(bid)[:res])
		w.br.Add(bid)
	case res == 0:
		if cqe.HasBuffer() {
			w.br.Add(cqe.BufferID())
		}
		w.onEOF(c)
		return
	case res == -int32(unix.ENOBUFS):
		// The buffer ring ran dry: re-armed below, once buffers are back.
	default:
		switch {
		case c.handshaking:
			w.handshakeFailed(c, errnoOf(res))
		case c.active:
			w.fail(c, errnoOf(res))
		default:
			w.closeConn(c)
		}
		return
	}
	if !c.recvArmed && c.gen == gen && c.connected {
		w.armRecv(c)
	}
}

// onData feeds received bytes to c's parser.
func (w *worker) onData(c *conn, data []byte) {
	if c.handshaking {
		w.onHandshake(c, data)
		return
	}
	if !c.active {
		// Bytes nobody asked for: keep them for the next response, as the
		// net engine's read buffer would.
		if len(c.carry)+len(data) > maxIdleCarry {
			w.closeConn(c)
			return
		}
		c.carry = append(c.carry, data...)
		return
	}
	if c.fb < 0 {
		c.fb = w.now
	}
	for len(data) > 0 {
		if len(c.carry) > 0 {
			// A line was split: complete it in the carry buffer (up to and
			// including its LF only), then go on from the kernel's buffer.
			take := len(data)
			for i, b := range data {
				if b == '\n' {
					take = i + 1
					break
				}
			}
			c.carry = append(c.carry, data[:take]...)
			data = data[take:]
			n, done, err := c.parser.Feed(c.carry)
			if err != nil {
				w.fail(c, err)
				return
			}
			c.carry = c.carry[:copy(c.carry, c.carry[n:])]
			if done {
				c.carry = append(c.carry, data...)
				w.responseDone(c)
				return
			}
			continue
		}
		n, done, err := c.parser.Feed(data)
		if err != nil {
			w.fail(c, err)
			return
		}
		if rest := data[n:]; len(rest) > 0 {
			c.carry = append(c.carry[:0], rest...)
		}
		if done {
			w.responseDone(c)
		}
		return
	}
}

// feedCarry parses bytes that arrived before the current exchange began.
func (w *worker) feedCarry(c *conn) {
	if c.fb < 0 {
		c.fb = w.now
	}
	n, done, err := c.parser.Feed(c.carry)
	if err != nil {
		w.fail(c, err)
		return
	}
	c.carry = c.carry[:copy(c.carry, c.carry[n:])]
	if done {
		w.responseDone(c)
	}
}

func (w *worker) onEOF(c *conn) {
	c.eof = true
	if c.handshaking {
		w.handshakeFailed(c, nil)
		return
	}
	if !c.active {
		w.closeConn(c)
		return
	}
	done, err := c.parser.EOF()
	if err != nil {
		w.fail(c, err)
		return
	}
	if done {
		w.responseDone(c)
	}
}

func isRedirect(s int) bool { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308 }

// responseDone ends an exchange whose response is complete: it follows a
// redirect, or records the response.
func (w *worker) responseDone(c *conn) {
	j := w.j
	p := &c.parser
	keep := p.KeepAlive && j.KeepAlive && !c.eof
	w.unlist(c)
	if j.MaxRedirects > 0 && isRedirect(p.Status) && len(p.Location) > 0 {
		if !keep {
			w.closeConn(c)
		}
		if c.hops >= j.MaxRedirects {
			w.failKind(c, stats.ErrTooManyRedirects)
			return
		}
		w.redirect(c)
		return
	}
	if !keep {
		w.closeConn(c)
	}
	c.rec.Response(p.Status, int64(w.now-c.at), int64(c.fb-c.start), p.BodyBytes, p.WireBytes)
	c.tr.Status, c.tr.Body = int32(p.Status), p.BodyBytes
	w.finish(c, true)
}

// redirect sends the request that c's redirect response asks for, on the
// same connection when it stays open. Only the same origin is followed.
func (w *worker) redirect(c *conn) {
	j := w.j
	status := c.parser.Status
	next, err := c.u.Parse(string(c.parser.Location))
	if err != nil || next.Scheme != c.u.Scheme || next.Host != c.u.Host {
		// Another origin (or a bad Location): the uring engine does not
		// open connections elsewhere. The connection itself is fine.
		w.failKind(c, stats.ErrRedirect)
		return
	}
	spec := j.Redirect
	spec.Target = next.RequestURI()
	spec.Host = next.Host
	if status == 303 || ((status == 301 || status == 302) && spec.Method == "POST") {
		spec.Method, spec.Body = "GET", nil
	}
	c.head = spec.Method == "HEAD"
	c.u = next
	c.hops++
	if c.sending {
		// The response beat our own send completion: the send buffer is
		// still the kernel's. Start over on a new connection.
		w.closeConn(c)
	}
	w.redir = http1.AppendRequest(w.redir[:0], &spec)
	w.copyReq(c, w.redir)
	w.exchange(c)
}

// dispatch starts requests on idle connections.
func (w *worker) dispatch() {
	if !w.open {
		staged := w.j.Source.Staged()
		if staged {
			w.unpark()
		}
		for !w.exhausted && w.free.len() > 0 {
			c := w.popFree()
			if staged {
				if active, _, _ := w.j.Source.Active(w.stageIndex(c), w.now); !active {
					w.park(c)
					continue
				}
			}
			hit, _, ok := w.j.Source.Claim(w.now)
			if !ok {
				w.exhausted = true
				w.release(c)
				break
			}
			w.start(c, hit, w.now, false)
		}
		return
	}
	for w.free.len() > 0 && w.waiting.len() > 0 {
		p := w.waiting.pop()
		w.start(w.popFree(), p.hit, p.at, true)
	}
	for {
		if !w.hasNext {
			if w.exhausted || w.waiting.full() {
				break
			}
			hit, at, ok := w.j.Source.Claim(w.now)
			if !ok {
				w.exhausted = true
				break
			}
			w.next, w.hasNext, w.nextQueued = pending{hit, at}, true, false
		}
		if w.next.at > w.now {
			break
		}
		switch {
		case w.free.len() > 0:
			w.start(w.popFree(), w.next.hit, w.next.at, w.nextQueued)
		case !w.waiting.full():
			w.waiting.push(w.next)
		default:
			w.nextQueued = true
			return
		}
		w.hasNext = false
	}
	if w.hasNext && !w.timerArmed {
		w.timerTS.SetDuration(w.monoStart + w.next.at)
		sqe := w.sqe()
		sqe.PrepTimeout(w.timerTS, 0, uring.TimeoutAbs)
		sqe.SetUserData(uint64(opTimer))
		w.outstanding++
		w.timerArmed = true
	}
}

// stageIndex numbers c among all the run's connections for connection
// stages, interleaving the workers so that a ramp spreads its active
// connections evenly over the rings.
func (w *worker) stageIndex(c *conn) int { return int(c.idx)*w.nworkers + w.id }

// park sets aside an idle connection that the stages have made inactive,
// closing its socket so the server sees the ramp down too.
func (w *worker) park(c *conn) {
	w.closeConn(c)
	w.parked = append(w.parked, c.idx)
}

// unpark returns the parked connections that the stages made active again
// to the idle queue (the event loop wakes at least every 50 ms to look).
func (w *worker) unpark() {
	kept := w.parked[:0]
	for _, idx := range w.parked {
		c := &w.conns[idx]
		if active, _, _ := w.j.Source.Active(w.stageIndex(c), w.now); active {
			w.release(c)
		} else {
			kept = append(kept, idx)
		}
	}
	w.parked = kept
}

func (w *worker) popFree() *conn {
	c := &w.conns[w.free.pop()]
	c.inFree = false
	return c
}

// release puts an idle connection slot back in the queue.
func (w *worker) release(c *conn) {
	if !c.inFree {
		c.inFree = true
		w.free.push(c.idx)
	}
}

// start begins request hit on c.
func (w *worker) start(c *conn, hit uint64, at time.Duration, queued bool) {
	req, step, head, ok := c.reqs.Next(hit)
	if !ok {
		w.release(c)
		return
	}
	c.rec = w.j.Recorders[step][w.shard]
	c.step, c.head, c.at, c.queued, c.hit = step, head, at, queued, hit
	c.hops, c.u, c.fb = 0, w.j.URL, -1
	c.active = true
	w.busy++
	c.rec.InFlight(1)
	if w.stable {
		c.req = req
	} else {
		w.copyReq(c, req)
	}
	c.stamp = true
	w.exchange(c)
	if c.stamp {
		if len(w.stampList) < cap(w.stampList) {
			w.stampList = append(w.stampList, c.idx)
		} else {
			w.stampOne(c, w.now)
		}
	}
}

// copyReq copies request bytes into c's arena send buffer.
func (w *worker) copyReq(c *conn, req []byte) {
	if cap(c.sendBuf) < len(req) {
		c.sendBuf = w.allocSend(len(req))
	}
	c.req = c.sendBuf[:copy(c.sendBuf[:cap(c.sendBuf)], req)]
}

func (w *worker) allocSend(n int) []byte {
	size := pow2(max(n, 256))
	if k := len(w.sendMem); k > 0 {
		if b := w.sendMem[k-1].Alloc(size); b != nil {
			return b
		}
	}
	a, err := uring.NewArena(max(size, 256<<10))
	if err != nil {
		panic("uring engine: out of memory for request buffers: " + err.Error())
	}
	w.sendMem = append(w.sendMem, a)
	return a.Alloc(size)
}

// exchange sends c's request, connecting first if needed.
func (w *worker) exchange(c *conn) {
	c.parser.Reset(c.head)
	if c.fd < 0 {
		w.connect(c)
		return
	}
	w.send(c)
}

func (w *worker) connect(c *conn) {
	ep, dns, err := w.j.Dialer.Endpoint(w.ctx)
	if err != nil {
		w.fail(c, err)
		return
	}
	w.connectTimeout, w.ep = ep.Timeout, ep
	if ep.Hybrid && w.hsLine == nil {
		line := "CONNECT " + strconv.FormatUint(uint64(ep.VsockPort), 10) + "\n"
		w.hsLine = w.arena.Alloc(len(line))
		copy(w.hsLine, line)
	}
	saLen, family, err := putSockaddr(c.sa, ep)
	if err != nil {
		w.fail(c, err)
		return
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		w.fail(c, err)
		return
	}
	if family != unix.AF_UNIX {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	c.fd = int32(fd)
	c.connecting, c.eof, c.dns = true, false, dns
	sqe := w.sqe()
	sqe.PrepConnect(c.fd, unsafe.Pointer(&c.sa[0]), saLen)
	sqe.SetUserData(ud(c, opConnect))
	w.outstanding++
	if !c.stamp {
		c.connStart = w.now
		if w.connectTimeout > 0 {
			w.push(listConnect, c, w.now+w.connectTimeout)
		}
	}
}

func (w *worker) armRecv(c *conn) {
	sqe := w.sqe()
	sqe.PrepRecvMultishot(c.fd, w.br.Group(), 0)
	sqe.SetUserData(ud(c, opRecv))
	w.outstanding++
	c.recvArmed = true
}

// send queues c's request on its open connection and starts the request
// deadline.
func (w *worker) send(c *conn) {
	c.sending, c.sent, c.out = true, 0, c.req
	w.queueSend(c)
	if !c.stamp && w.j.Timeout > 0 {
		w.push(listRequest, c, w.now+w.j.Timeout)
	}
	if len(c.carry) > 0 {
		w.feedCarry(c)
	}
}

func (w *worker) queueSend(c *conn) {
	sqe := w.sqe()
	sqe.PrepSend(c.fd, unsafe.Pointer(&c.out[c.sent]), uint32(len(c.out)-c.sent), unix.MSG_NOSIGNAL)
	sqe.SetUserData(ud(c, opSend))
	w.outstanding++
}

// queueClose queues the close of c's socket, completing as closeOp, after a shutdown hard-linked
// to it when an operation is pending on the socket (the shutdown wakes it).
func (w *worker) queueClose(c *conn, closeOp uint8) {
	if c.recvArmed || c.sending || c.connecting {
		sqe := w.sqe()
		sqe.PrepShutdown(c.fd, unix.SHUT_RDWR)
		sqe.SetFlags(uring.SQEIOHardlink)
		sqe.SetUserData(ud(c, opShutdown))
		w.outstanding++
	}
	sqe := w.sqe()
	sqe.PrepClose(c.fd)
	sqe.SetUserData(ud(c, closeOp))
	w.outstanding++
}

// closeConn closes c's socket through the ring: a shutdown, which wakes
// whatever is pending on it (the receive ends with EOF, a send with EPIPE, a
// connect with an error), hard-linked to the close. Both cost O(1), where a
// cancel by descriptor would scan every request of the ring. Later
// completions of the old socket are stale.
func (w *worker) closeConn(c *conn) {
	w.unlist(c)
	if c.fd < 0 {
		return
	}
	w.queueClose(c, opClose)
	c.fd = -1
	c.gen++
	c.recvArmed, c.connecting, c.handshaking = false, false, false
	c.carry = c.carry[:0]
	if c.connected {
		c.connected = false
		c.rec.Closed()
	}
	if c.sending {
		// The kernel may still read the old buffer: take a new one.
		c.sending = false
		c.sendBuf = nil
		if !c.active {
			w.release(c)
		}
	}
}

// fail ends c's request with err, closing the connection.
func (w *worker) fail(c *conn, err error) {
	mid := c.parser.WireBytes > 0
	w.closeConn(c)
	if w.j.Aborting() {
		w.failKind(c, stats.ErrAborted)
		return
	}
	w.failKind(c, engine.Classify(err, mid))
}

func (w *worker) failKind(c *conn, k stats.ErrorKind) {
	c.rec.Error(k)
	c.tr.SetError(k)
	w.finish(c, false)
}

// finish ends c's request after its outcome was recorded.
func (w *worker) finish(c *conn, ok bool) {
	w.unlist(c)
	if c.stamp {
		w.stampOne(c, w.now)
		w.unlist(c)
	}
	if c.rec.Tracing() {
		w.trace(c)
	}
	c.tr = stats.TraceRecord{}
	if ok {
		c.reqs.Done(c.step, &c.parser)
	} else {
		c.reqs.Done(c.step, nil)
	}
	c.rec.InFlight(-1)
	c.active = false
	w.busy--
	if !c.sending {
		w.release(c)
	}
}

// expire fails the requests and connects whose deadline has passed.
func (w *worker) expire() {
	for h := w.lists[listConnect].head; h >= 0 && w.conns[h].deadline <= w.now; h = w.lists[listConnect].head {
		w.fail(&w.conns[h], errConnectTimeout)
	}
	for h := w.lists[listRequest].head; h >= 0 && w.conns[h].deadline <= w.now; h = w.lists[listRequest].head {
		w.fail(&w.conns[h], errRequestTimeout)
	}
}

// push appends c to deadline list l; every entry of a list has the same
// duration and later starts, so the list stays in deadline order.
func (w *worker) push(l int8, c *conn, deadline time.Duration) {
	w.unlist(c)
	c.list, c.deadline, c.next = l, deadline, -1
	c.prev = w.lists[l].tail
	if c.prev >= 0 {
		w.conns[c.prev].next = c.idx
	} else {
		w.lists[l].head = c.idx
	}
	w.lists[l].tail = c.idx
}

func (w *worker) unlist(c *conn) {
	if c.list == listNone {
		return
	}
	l := &w.lists[c.list]
	if c.prev >= 0 {
		w.conns[c.prev].next = c.next
	} else {
		l.head = c.next
	}
	if c.next >= 0 {
		w.conns[c.next].prev = c.prev
	} else {
		l.tail = c.prev
	}
	c.list, c.prev, c.next = listNone, -1, -1
}

// abortAll ends every request in progress or waiting as kind (aborted, or
// an i/o error when the ring itself failed).
func (w *worker) abortAll(kind stats.ErrorKind) {
	w.exhausted, w.hasNext = true, false
	for i := range w.conns {
		if c := &w.conns[i]; c.active {
			w.closeConn(c)
			w.failKind(c, kind)
		}
	}
	for w.waiting.len() > 0 {
		p := w.waiting.pop()
		req, step, _, ok := w.reqs.Next(p.hit)
		_ = req
		if !ok {
			continue
		}
		rec := w.j.Recorders[step][w.shard]
		rec.Queued(int64(w.now - p.at))
		rec.Error(kind)
		if rec.Tracing() {
			tr := stats.TraceRecord{Hit: p.hit, Intended: int64(p.at), Start: int64(w.now), End: int64(w.now), Step: uint16(step), Conn: -1}
			tr.SetError(kind)
			rec.Trace(&tr)
		}
		w.reqs.Done(step, nil)
	}
}

// teardown cancels whatever is still pending, waits for it, and frees the
// ring, the sockets and the memory. It runs on every exit path.
func (w *worker) teardown() {
	if w.ring != nil {
		for i := range w.conns {
			w.conns[i].gen++ // every later completion is stale
		}
		// Every socket is shut down, which ends whatever is pending on it,
		// and closed, through the ring: O(1) per socket. (A cancellation of
		// everything would rescan the whole ring for every request it
		// cancels.) Then the worker waits for every completion, so that no
		// operation outlives the memory it uses. A socket whose close did
		// not complete is closed below.
		for i := range w.conns {
			c := &w.conns[i]
			if c.fd < 0 {
				continue
			}
			if c.connected {
				c.connected = false
				c.rec.Closed()
			}
			w.queueClose(c, opTeardownClose)
		}
		if w.timerArmed {
			sqe := w.sqe()
			sqe.PrepCancel(uint64(opTimer), 0)
			sqe.SetUserData(uint64(opTimerCancel))
			w.outstanding++
		}
		deadline := time.Now().Add(drainTimeout)
		for w.outstanding > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			if _, err := w.ring.SubmitAndWaitTimeout(1, min(left, pollInterval)); err != nil && !errors.Is(err, uring.ErrTimeout) {
				break
			}
			w.reap()
		}
		w.ring.Close()
	}
	for i := range w.conns {
		c := &w.conns[i]
		if c.fd >= 0 {
			unix.Close(int(c.fd))
			c.fd = -1
		}
	}
	if w.arena != nil {
		w.arena.Close()
	}
	for _, a := range w.sendMem {
		a.Close()
	}
	w.sendMem = nil
}

// trace hands c's finished request to the per-request log (--db-url,
// per-request CSV). Its outcome fields were filled where it was recorded.
func (w *worker) trace(c *conn) {
	t := &c.tr
	t.Intended, t.Start, t.End = int64(c.at), int64(c.start), int64(w.now)
	if c.fb > 0 {
		t.FirstByte = int64(c.fb)
	}
	t.Step, t.Conn, t.Hit = uint16(c.step), w.connBase+c.idx, c.hit
	c.rec.Trace(t)
}
