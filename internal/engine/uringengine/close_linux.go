//go:build linux

package uringengine

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/redirect"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/uring"
)

// queueClose queues the close of c's socket, completing as closeOp, after a
// shutdown hard-linked to it when an operation is pending on the socket
// (the shutdown wakes it).
func (w *worker) queueClose(c *conn, closeOp uint8) {
	if c.recvArmed || c.sending || c.connecting {
		sqe := w.sqe()
		sqe.PrepShutdown(c.fd, unix.SHUT_RDWR)
		sqe.SetFlags(uring.SQEIOHardlink)
		sqe.SetUserData(ud(c, opShutdown))
		w.count.outstanding++
	}
	sqe := w.sqe()
	sqe.PrepClose(c.fd)
	sqe.SetUserData(ud(c, closeOp))
	w.count.outstanding++
}

// closeConn closes c's socket through the ring: a shutdown, which wakes
// whatever is pending on it (the receive ends with EOF, a send with EPIPE, a
// connect with an error), hard-linked to the close. Both cost O(1), where a
// cancel by descriptor would scan every request of the ring. Later
// completions of the old socket are stale.
func (w *worker) closeConn(c *conn) {
	w.unlist(listConnect, c)
	if c.fd < 0 {
		return
	}
	w.queueClose(c, opClose)
	c.fd = -1
	c.gen++
	w.setConnecting(c, false)
	c.recvArmed, c.handshaking = false, false
	c.carry = c.carry[:0]
	if c.connected {
		c.connected = false
		w.rec.Closed()
	}
	if c.sending {
		// The kernel may still read the old buffer: take a new one.
		c.sending = false
		c.sendBuf = nil
		if !c.active() {
			w.release(c)
		}
	}
}

// fail ends c's request with err, closing the connection: as aborted when
// the run is aborting, else as err's kind — unless the connection was a
// stale keep-alive connection and the request may go again on a new one
// (engine.Call.RetryStale).
func (w *worker) fail(c *conn, err error) {
	if c.sendErr != nil { // no response came after a failed send: the send's error
		err, c.sendErr = c.sendErr, nil
	}
	mid := c.parser.WireBytes > 0
	reused, wrote := c.served > 0, (c.sent > 0 || c.inBody) && !w.isHandshakeLine(c)
	w.closeConn(c)
	if !c.active() {
		return
	}
	k := w.j.Kind(err, mid) // ErrAborted (never retried) when the run is aborting
	if c.call.RetryStale(k, reused, mid, wrote, false, redirect.Method(c.req)) {
		w.exchange(c) // on a new connection
		return
	}
	w.endKind(c, k)
}

// endErr ends c's request with err (a redirect that cannot be followed);
// the connection itself is fine.
func (w *worker) endErr(c *conn, err error) { w.endKind(c, engine.Classify(err, false)) }

func (w *worker) endKind(c *conn, k stats.ErrorKind) {
	w.stampNow(c)
	c.call.CutShort(c.parser.WireBytes) // what arrived of a response cut short
	c.call.Fail(w.now, k, c.reqs)
	w.finish(c)
}

// end ends c's request with the response in its parser, at the time its
// last bytes arrived.
func (w *worker) end(c *conn) {
	w.stampNow(c)
	c.call.Respond(w.at(c), &c.parser, c.reqs)
	w.finish(c)
}

// finish frees c's slot after its call ended (after the think time the
// call asked for).
func (w *worker) finish(c *conn) {
	c.readyAt = c.call.EndTime()
	if d := c.call.Think(); d > 0 {
		c.thinkUntil = w.now + d
		c.readyAt += d
	}
	c.stamp = false
	w.unlist(listRequest, c)
	w.unlist(listIdle, c)
	w.count.busy--
	if !c.sending {
		w.release(c)
	}
}

// abortAll ends every request in progress as kind (aborted, or an i/o
// error when the ring itself failed). A request whose send is still in
// flight waits for that send's completion, which tells whether any of its
// bytes left (then it was sent and is counted as aborted; else unsent): its
// socket is shut down, which ends a send still waiting for room.
func (w *worker) abortAll(kind stats.ErrorKind) {
	w.sched.aborted, w.sched.abortAt = true, w.now
	w.sched.exhausted, w.sched.hasNext = true, false
	w.stopHelpers()
	for i := range w.conns {
		c := &w.conns[i]
		switch {
		case !c.active() || c.away:
			// Helpers see the abort themselves and report back.
		case c.sending && kind == stats.ErrAborted:
			c.draining = true
			w.unlist(listConnect, c)
			w.unlist(listRequest, c)
			sqe := w.sqe()
			sqe.PrepShutdown(c.fd, unix.SHUT_RDWR)
			sqe.SetUserData(uint64(opShutdown))
			w.count.outstanding++
		default:
			w.closeConn(c)
			w.endKind(c, kind)
		}
	}
}

// onDrain handles a completion of a connection whose request waits, at an
// abort, for its send's completion.
func (w *worker) onDrain(c *conn, op uint8, cqe *uring.CQE) {
	if cqe.HasBuffer() {
		w.mem.br.Add(cqe.BufferID())
	}
	if op == opRecv && !cqe.More() {
		c.recvArmed = false
	}
	if op != opSend {
		return
	}
	if cqe.Res > 0 {
		c.call.Wrote(int64(cqe.Res))
	}
	c.draining, c.sending = false, false
	w.closeConn(c)
	w.endKind(c, stats.ErrAborted)
}

// forceEnd ends whatever is still in progress when the drain after an
// abort takes too long.
func (w *worker) forceEnd() {
	for i := range w.conns {
		c := &w.conns[i]
		if c.active() && !c.away {
			c.draining = false
			w.closeConn(c)
			w.endKind(c, stats.ErrAborted)
		}
	}
}

// teardown cancels whatever is still pending, waits for it, and frees the
// ring, the sockets and the memory. It runs on every exit path.
func (w *worker) teardown() {
	w.waitAway()
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
				w.rec.Closed()
			}
			w.queueClose(c, opTeardownClose)
		}
		if w.away.wakeArmed {
			// The eventfd's read is pending: a write ends it.
			w.poke()
		}
		deadline := time.Now().Add(drainTimeout)
		for w.count.outstanding > 0 {
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
	if w.away.wake >= 0 {
		unix.Close(int(w.away.wake))
		w.away.wake = -1
	}
	if w.mem.arena != nil {
		w.mem.arena.Close()
	}
	for _, a := range w.mem.sendMem {
		a.Close()
	}
	w.mem.sendMem = nil
}
