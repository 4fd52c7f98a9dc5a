//go:build linux

package uringengine

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
)

// A redirect chain that leaves the origin of the worker's connections is
// followed exactly as the net engine follows it (engine.Job.FollowAway:
// blocking connections to the other origins, TLS included), on a helper
// goroutine, so the ring never waits for it. The helper works on its own
// copy of the request's call and chain and its own parser; when it is done
// it queues the result and writes the worker's eventfd, whose read is armed
// on the ring, and the worker ends the request on its own thread.

// awayResult is a finished helper's request.
type awayResult struct {
	idx   int32
	call  engine.Call
	chain engine.Chain
	p     *http1.Parser
	err   error
	end   time.Duration
}

// goAway hands the rest of c's redirect chain to a helper goroutine.
func (w *worker) goAway(c *conn) {
	if w.away.wake < 0 {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			w.endKind(c, engine.Classify(err, false))
			return
		}
		w.away.wake = int32(fd)
		w.away.abort = make(chan struct{})
	}
	w.stampNow(c)
	w.unlist(listRequest, c) // the helper keeps the deadline itself
	c.away = true
	w.away.n++
	w.armWake()
	var deadline time.Time
	if w.j.Timeout > 0 {
		deadline = w.j.Start.Add(c.call.StartTime() + w.j.Timeout)
	}
	r := &awayResult{idx: c.idx, call: c.call, chain: c.chain, p: new(http1.Parser)}
	w.j.InitParser(r.p)
	w.away.helpers.Add(1)
	go func() {
		defer w.away.helpers.Done()
		r.err = w.j.FollowAway(&r.call, &r.chain, r.p, deadline, w.away.abort)
		r.end = w.j.Since() // the request's end, not the moment the worker collects it
		w.away.mu.Lock()
		w.away.results = append(w.away.results, *r)
		w.away.mu.Unlock()
		w.poke()
	}()
}

// collectAway ends the requests whose helpers are done.
func (w *worker) collectAway() {
	if w.away.n == 0 {
		return
	}
	w.away.mu.Lock()
	results := w.away.results
	w.away.results = w.away.spare[:0]
	w.away.mu.Unlock()
	for i := range results {
		r := &results[i]
		c := &w.conns[r.idx]
		c.away, c.call, c.chain = false, r.call, r.chain
		w.away.n--
		if r.err != nil {
			w.endKind(c, w.j.Kind(r.err, r.p.WireBytes > 0))
			continue
		}
		c.call.Respond(min(r.end, w.now), r.p, c.reqs)
		w.finish(c)
	}
	clear(results)
	w.away.spare = results
	if w.away.n > 0 {
		w.armWake()
	}
}

// armWake arms the read of the eventfd that helpers write when done.
func (w *worker) armWake() {
	if w.away.wakeArmed || w.away.wake < 0 {
		return
	}
	sqe := w.sqe()
	sqe.PrepRead(w.away.wake, unsafe.Pointer(&w.away.wakeBuf[0]), 8, ^uint64(0))
	sqe.SetUserData(uint64(opWake))
	w.count.outstanding++
	w.away.wakeArmed = true
}

// poke wakes the worker's ring (a helper is done, or the teardown ends the
// pending read).
func (w *worker) poke() {
	one := [8]byte{1}
	_, _ = unix.Write(int(w.away.wake), one[:])
}

// stopHelpers tells running helpers to give up (the run is aborting).
func (w *worker) stopHelpers() {
	if w.away.abort != nil && !w.away.stopped {
		w.away.stopped = true
		close(w.away.abort)
	}
}

// waitAway waits for every helper to return (a helper that delivered its
// result may still be writing the eventfd) and ends their requests.
func (w *worker) waitAway() {
	if w.away.abort == nil {
		return // no helper ever ran
	}
	w.stopHelpers()
	w.away.helpers.Wait()
	w.now = w.j.Since()
	w.collectAway()
}
