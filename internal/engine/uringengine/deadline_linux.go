//go:build linux

package uringengine

import (
	"errors"
	"os"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Deadline lists: a connection can be in both at once (a redirect hop
// reconnects while its request's deadline runs on).
const (
	listConnect = iota // connection setup (and the hybrid vsock handshake), --connect-timeout
	listRequest        // the whole request, redirects included, -t
	listIdle           // a streaming response's idle timeout, --idle-timeout (checked lazily: see expireIdle)
	numLists
)

var (
	errGarbledRecv    = errors.New("io_uring recvmsg: a completion too short for its header")
	errRequestTimeout = os.ErrDeadlineExceeded
	errConnectTimeout = &transport.ConnectTimeoutError{Err: os.ErrDeadlineExceeded}
)

// link is a connection's place in one deadline list.
type link struct {
	prev, next int32
	deadline   time.Duration
	in         bool
}

type dlist struct{ head, tail int32 }

// push puts c in list l with deadline d. Entries are kept in deadline
// order; every entry of a list has the same duration, so d is almost
// always the latest and the walk from the tail stops at once.
func (w *worker) push(l int, c *conn, d time.Duration) {
	w.unlist(l, c)
	lk := &c.dl[l]
	lk.deadline, lk.in = d, true
	after := w.lists[l].tail
	for after >= 0 && w.conns[after].dl[l].deadline > d {
		after = w.conns[after].dl[l].prev
	}
	lk.prev = after
	if after >= 0 {
		lk.next = w.conns[after].dl[l].next
		w.conns[after].dl[l].next = c.idx
	} else {
		lk.next = w.lists[l].head
		w.lists[l].head = c.idx
	}
	if lk.next >= 0 {
		w.conns[lk.next].dl[l].prev = c.idx
	} else {
		w.lists[l].tail = c.idx
	}
}

// unlist takes c out of list l.
func (w *worker) unlist(l int, c *conn) {
	lk := &c.dl[l]
	if !lk.in {
		return
	}
	if lk.prev >= 0 {
		w.conns[lk.prev].dl[l].next = lk.next
	} else {
		w.lists[l].head = lk.next
	}
	if lk.next >= 0 {
		w.conns[lk.next].dl[l].prev = lk.prev
	} else {
		w.lists[l].tail = lk.prev
	}
	*lk = link{prev: -1, next: -1}
}

// expire fails the connects and requests whose deadline has passed.
func (w *worker) expire() {
	for h := w.lists[listConnect].head; h >= 0 && w.conns[h].dl[listConnect].deadline <= w.now; h = w.lists[listConnect].head {
		c := &w.conns[h]
		w.unlist(listConnect, c)
		if c.active() {
			w.fail(c, errConnectTimeout) // or, after a failed send, that send's error
		} else {
			w.closeConn(c)
		}
	}
	for h := w.lists[listRequest].head; h >= 0 && w.conns[h].dl[listRequest].deadline <= w.now; h = w.lists[listRequest].head {
		w.fail(&w.conns[h], errRequestTimeout)
	}
	w.expireIdle()
	w.wakeThinkers()
}

// expireIdle fails the streams that went too long without an event. An
// entry's deadline is the stream's idle deadline as of when it was listed;
// events since moved the stream's own (Call.IdleAt) later, so an entry that
// comes due is checked against it and listed again when the stream is
// still alive: one list operation per idle period, not one per event.
func (w *worker) expireIdle() {
	for h := w.lists[listIdle].head; h >= 0 && w.conns[h].dl[listIdle].deadline <= w.now; h = w.lists[listIdle].head {
		c := &w.conns[h]
		w.unlist(listIdle, c)
		at := c.call.IdleAt()
		switch {
		case !c.active() || c.away || at == 0:
		case at <= w.now:
			w.fail(c, engine.ErrStreamIdle)
		default:
			w.push(listIdle, c, at)
		}
	}
}

// watchIdle lists c's stream for its idle timeout, once it has one.
func (w *worker) watchIdle(c *conn) {
	if !c.dl[listIdle].in {
		if at := c.call.IdleAt(); at > 0 {
			w.push(listIdle, c, at)
		}
	}
}

// earliest is the first deadline of any list (or end of a think time), or -1.
func (w *worker) earliest() time.Duration {
	d := w.thinkEnd()
	for l := range w.lists {
		if h := w.lists[l].head; h >= 0 {
			if dl := w.conns[h].dl[l].deadline; d < 0 || dl < d {
				d = dl
			}
		}
	}
	return d
}
