//go:build linux

package uringengine

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
	"github.com/hail-loadgen/hail/internal/uring"
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
	opTeardownClose // closes a socket at the end of the run
	opWake          // the wake-up eventfd was written: a helper goroutine has results
)

const (
	genMask = 1<<24 - 1
	// pollInterval bounds every wait, so that the end of the run and an
	// abort are noticed even when nothing completes.
	pollInterval = 50 * time.Millisecond
	// drainTimeout bounds the wait for cancelled operations at the end.
	drainTimeout = 2 * time.Second
	// defaultBufSize is the payload size of a provided receive buffer.
	defaultBufSize = 4096
	// recvOverhead is what a multishot recvmsg puts ahead of the payload in
	// a buffer: its 16-byte header and room for one SCM_TIMESTAMPNS.
	recvOverhead = 16 + 32
	// maxIdleCarry bounds the bytes a server may send on an idle connection.
	maxIdleCarry = 64 << 10
	// sockaddrSize holds a sockaddr_un (110 bytes) or a sockaddr_in6.
	sockaddrSize = 112
)

type pending struct {
	hit uint64
	at  time.Duration
}

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
	rec    *stats.Recorder // connection closes and skipped request numbers are counted here

	connBase int32 // the run-wide number of this worker's first connection (per-request log)
	stages   stageState

	ring *uring.Ring
	mem  buffers

	conns    []conn
	free     fifo[int32]              // idle connection slots
	thinking schedule.TimeHeap[int32] // closed model: slots pausing before their next request

	sched schedState
	now   time.Duration // since j.Start, read once per batch
	rx    rxTimes
	// stampList holds the requests started in this batch, stamped together
	// just before the submission that sends them.
	stampList []int32
	count     inFlight
	lists     [numLists]dlist
	ep        transport.Endpoint // the last endpoint (for the vsock handshake)
	hsLine    []byte             // hybrid vsock "CONNECT <port>\n", arena memory
	cqes      [512]uring.CQE
	scratch   uring.SQE

	away awayState
}

// stageState is the worker's part in connection stages (closed model).
type stageState struct {
	nworkers   int     // workers in the run: connection stages count connections across them, interleaved
	parked     []int32 // idle slots whose connection is not active now
	unparkedTo int     // the active-connection count the parked slots were last checked against
}

// buffers is the memory the worker shares with the kernel.
type buffers struct {
	br      *uring.BufRing // provided receive buffers (multishot receives)
	arena   *uring.Arena   // sockaddrs, the wake-up counter
	sendMem []*uring.Arena // chunks for copied request bytes
}

// schedState is where the worker stands in the run's schedule.
type schedState struct {
	exhausted bool // no more requests will be claimed
	stopped   bool
	aborted   bool // the abort was seen: in-flight requests are ending
	abortAt   time.Duration
	hasNext   bool // open model: a claimed request not yet started
	next      pending
	paced     time.Duration // when the open model last started requests that were due
	// satSince is when every connection last became busy (-1: one is
	// free). A request that falls due while they all are waits for the
	// target, not for hail: the open model splits its send delay there.
	satSince time.Duration
}

// rxTimes are the receive times of response bytes: every socket asks for
// the kernel's receive time of its bytes (SO_TIMESTAMPNS) and receives them
// with a multishot recvmsg, so a response ends when its last bytes reached
// the machine, not when the loop got to them. evt is the time of the bytes
// being handled; stamped says the last bytes carried one (the kernel turns
// timestamps on in the background, and not every socket has them).
type rxTimes struct {
	msg       *unix.Msghdr // arena memory: the recvmsg the receives are armed with
	wallStart int64        // j.Start, Unix ns (receive times are CLOCK_REALTIME)
	evt       time.Duration
	stamped   bool
}

// inFlight counts what the worker has started and not yet seen end.
type inFlight struct {
	outstanding int // operations whose last completion has not been reaped
	connecting  int // connects in flight
	busy        int // requests in progress
}

// awayState runs the redirect chains that left the origin on helper
// goroutines (away_linux.go); their results come back through results and
// a write to the eventfd wake, whose read is armed on the ring.
type awayState struct {
	wake      int32
	wakeBuf   []byte // arena memory for the eventfd's counter
	wakeArmed bool
	n         int // requests with a helper
	helpers   sync.WaitGroup
	abort     chan struct{} // closed when the run aborts
	stopped   bool
	mu        sync.Mutex
	results   []awayResult // guarded by mu
	spare     []awayResult
}

func newWorker(e *Engine, j *engine.Job, id, n int) *worker {
	return &worker{e: e, j: j, id: id, shard: id % len(j.Recorders[0]), open: j.Source.Open(), conns: make([]conn, n),
		ctx: context.Background(), rec: j.Recorders[0][id%len(j.Recorders[0])], sched: schedState{satSince: -1}, away: awayState{wake: -1}}
}

// main runs on its own goroutine: it locks the thread, sets the ring up,
// reports, waits for the go-ahead and runs the event loop.
func (w *worker) main(ready chan<- error, start <-chan bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if w.open {
		// Waits on this thread end without the default 50 µs slack.
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
	// Each buffer also holds the recvmsg header and the receive time ahead
	// of its payload.
	if w.mem.br, err = r.NewBufRing(0, uint32(pow2(count)), size+recvOverhead); err != nil {
		return err
	}
	if w.mem.arena, err = uring.NewArena(n*sockaddrSize + 256); err != nil {
		return err
	}
	w.away.wakeBuf = w.mem.arena.Alloc(8)
	w.rx.msg = (*unix.Msghdr)(unsafe.Pointer(&w.mem.arena.Alloc(int(unsafe.Sizeof(unix.Msghdr{})))[0]))
	w.rx.msg.Controllen = uint64(unix.CmsgSpace(16))
	w.rx.wallStart = w.j.Start.UnixNano()
	for i := range w.conns {
		c := &w.conns[i]
		c.idx, c.fd, c.readyAt = int32(i), -1, -1
		for l := range c.dl {
			c.dl[l] = link{prev: -1, next: -1}
		}
		c.sa = w.mem.arena.Alloc(sockaddrSize)
		w.j.InitParser(&c.parser)
		w.j.AttachMeter(&c.call, &c.parser)
	}
	for i := range w.lists {
		w.lists[i] = dlist{-1, -1}
	}
	w.free = newFIFO[int32](n)
	for i := range w.conns {
		w.release(&w.conns[i])
	}
	w.stampList = make([]int32, 0, n)
	w.reqs = w.j.NewRequests(w.id)
	_, w.stable = w.reqs.(*engine.Static)
	for i := range w.conns {
		w.conns[i].reqs = w.reqs
		if w.j.PerConnection {
			w.conns[i].reqs = w.j.NewRequests(int(w.connBase) + i)
		}
		w.conns[i].sb = engine.SharedBodies(w.conns[i].reqs)
	}
	return nil
}

func (w *worker) abortSignalled() bool {
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
		w.now = w.j.Since()
		w.reap()
		w.collectAway()
		if w.err != nil && !w.sched.aborted {
			w.abortAll(stats.ErrOther)
		}
		if !w.sched.aborted && w.abortSignalled() {
			w.abortAll(stats.ErrAborted)
		}
		if w.sched.aborted {
			if w.count.busy == 0 {
				return
			}
			if w.now-w.sched.abortAt > drainTimeout {
				w.forceEnd()
				return
			}
		} else {
			if !w.sched.stopped && w.stopSignalled() {
				w.sched.stopped, w.sched.exhausted, w.sched.hasNext = true, true, false
			}
			w.expire()
			w.dispatch()
			if w.sched.exhausted && !w.sched.hasNext && w.count.busy == 0 {
				return
			}
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
	w.mem.br.Advance()
}

// submitWait starts the calls begun in this batch, then submits everything
// queued and waits for a completion, bounded by the earliest deadline, the
// next intended send time and pollInterval: the open model's wake-up is the
// wait's own timeout, in the same system call as the batch's sends.
func (w *worker) submitWait() error {
	t := w.j.Since()
	for _, i := range w.stampList {
		if c := &w.conns[i]; c.stamp {
			w.stampOne(c, t)
		}
	}
	w.stampList = w.stampList[:0]
	d := pollInterval
	if e := w.earliest(); e >= 0 {
		d = min(d, e-t)
	}
	if w.sched.hasNext && !w.sched.aborted && w.free.len() > 0 {
		// Wake for the next intended time, but not sooner than the pacing
		// granularity after the last wake-up that sent: requests due in
		// between leave together (each at most that late, as own lateness),
		// and at high rates a batch costs one wake-up instead of one each.
		d = min(d, max(w.sched.next.at, w.sched.paced+w.j.Pacing)-t)
	}
	_, err := w.ring.SubmitAndWaitTimeout(w.waitFor(), max(d, 0))
	if err != nil && !errors.Is(err, uring.ErrTimeout) {
		return err
	}
	return nil
}

// waitFor is how many completions the next wait asks for. One, so that the
// loop reacts at once — except in the open model while responses carry
// their kernel receive times and nothing waits on them: then a completion
// needs no prompt reaping (its time is the kernel's), and the loop sleeps
// until the next send or deadline (submitWait's timeout), reaping all that
// came meanwhile in one batch. Nothing waits on completions when a
// connection is free for the next request, more requests are to come (at
// the end, in-flight requests are reaped as they finish), no connect is in
// flight, no redirect is followed, no helper is out — and no stream is in
// progress, nor, when every response is expected to be one (--sse, hail
// llm), any request: a stream's events are read as they come, or several
// would arrive in one receive (one receive time, the last's) and hail's
// read lag would show in their times. (The kernel does a multishot
// receive's work only when the ring's waiter runs it: a waiter asking
// for many completions lets the bytes pile up in the socket.)
func (w *worker) waitFor() uint32 {
	if w.open && w.rx.stamped && !w.sched.aborted && !w.sched.exhausted && w.free.len() > 0 && w.count.connecting == 0 &&
		w.j.MaxRedirects == 0 && w.away.n == 0 && !w.streaming() {
		return 1 << 20
	}
	return 1
}

// streaming reports whether a stream may be in progress: one is, or every
// response is expected to be one and a request is in flight.
func (w *worker) streaming() bool {
	s := w.j.Stream
	return s != nil && (s.Live() > 0 || (s.All || s.Tokens) && w.count.busy > 0)
}

// stampNow starts c's call at w.now if it is still waiting for its start
// stamp (the request ends, or leaves the ring, before the batch's stamps).
func (w *worker) stampNow(c *conn) {
	if c.stamp {
		w.stampOne(c, w.now)
	}
}

// stampOne starts c's call at t, the time its first operation is
// submitted, and starts its deadlines.
func (w *worker) stampOne(c *conn, t time.Duration) {
	c.stamp = false
	c.call.Start(t)
	if w.j.Timeout > 0 {
		w.push(listRequest, c, t+w.j.Timeout)
	}
	if c.connecting {
		c.connStart = t
		if w.ep.Timeout > 0 {
			w.push(listConnect, c, t+w.ep.Timeout)
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
		w.mem.br.Advance()
		if _, err := w.ring.Submit(); err != nil || spins > 0 {
			runtime.Gosched()
		}
	}
	if w.err == nil {
		w.err = errors.New("the submission queue stays full")
	}
	w.sched.exhausted = true
	w.scratch = uring.SQE{}
	return &w.scratch
}

func ud(c *conn, op uint8) uint64 {
	return uint64(uint32(c.idx))<<32 | uint64(c.gen&genMask)<<8 | uint64(op)
}
