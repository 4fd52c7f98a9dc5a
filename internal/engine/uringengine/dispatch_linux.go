//go:build linux

package uringengine

import (
	"fmt"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/uring"
)

// dispatch starts requests on idle connections: in the closed model one
// per idle connection; in the open model every request that is due, in
// order, while a connection is idle. A due request that finds every
// connection busy waits (hasNext) and is not claimed further ahead; its
// wait from the moment they all became busy is the target's backpressure.
func (w *worker) dispatch() {
	if !w.open {
		w.dispatchClosed()
		return
	}
	for w.free.len() > 0 {
		if !w.sched.hasNext {
			if w.sched.exhausted {
				break
			}
			hit, at, ok := w.j.Source.Claim(w.now)
			if !ok {
				w.sched.exhausted = true
				break
			}
			w.sched.next, w.sched.hasNext = pending{hit, at}, true
		}
		if w.sched.next.at > w.now {
			break
		}
		w.sched.hasNext, w.sched.paced = false, w.now
		waitFrom := time.Duration(-1)
		if w.sched.satSince >= 0 && w.sched.next.at < w.now {
			waitFrom = max(w.sched.next.at, w.sched.satSince)
		}
		w.start(w.popFree(), w.sched.next.hit, w.sched.next.at, waitFrom)
	}
	if w.free.len() == 0 {
		if w.sched.satSince < 0 {
			w.sched.satSince = w.now
		}
	} else {
		w.sched.satSince = -1
	}
}

// dispatchClosed gives every idle connection that its stage lets send the
// next request. With connection stages, how many connections are active
// is read once per batch: a connection is active while its number is below
// it, so parking and unparking cost nothing per request.
func (w *worker) dispatchClosed() {
	active := w.j.Source.ActiveConns(w.now)
	if active > w.stages.unparkedTo && len(w.stages.parked) > 0 {
		w.unpark(active)
	}
	w.stages.unparkedTo = active
	if len(w.stages.parked) > 0 && !w.sched.exhausted && w.j.Source.Over(w.now) {
		// Nothing is left to claim: a parked slot would wait for a stage
		// that can no longer give it a request (an origin's part of the
		// connections that leaves every slot of this worker inactive).
		w.sched.exhausted = true
	}
	for !w.sched.exhausted && w.free.len() > 0 {
		c := w.popFree()
		if active >= 0 && w.stageIndex(c) >= active {
			w.park(c)
			continue
		}
		hit, _, ok := w.j.Source.Claim(w.now)
		if !ok {
			w.sched.exhausted = true
			w.release(c)
			break
		}
		w.start(c, hit, w.now, -1)
	}
}

// stageIndex numbers c among all the run's connections for connection
// stages, interleaving the workers so that a ramp spreads its active
// connections evenly over the rings.
func (w *worker) stageIndex(c *conn) int { return int(c.idx)*w.stages.nworkers + w.id }

// park sets aside an idle connection that the stages have made inactive,
// closing its socket so the server sees the ramp down too.
func (w *worker) park(c *conn) {
	w.closeConn(c)
	c.readyAt = -1 // when it is active again, it waited for its stage, not for hail
	w.stages.parked = append(w.stages.parked, c.idx)
}

// unpark returns the parked connections that the stages made active again
// (numbers below active) to the idle queue (the event loop wakes at least
// every 50 ms to look).
func (w *worker) unpark(active int) {
	kept := w.stages.parked[:0]
	for _, idx := range w.stages.parked {
		if c := &w.conns[idx]; w.stageIndex(c) < active {
			w.release(c)
		} else {
			kept = append(kept, idx)
		}
	}
	w.stages.parked = kept
}

func (w *worker) popFree() *conn {
	c := &w.conns[w.free.pop()]
	c.inFree = false
	return c
}

// release puts an idle connection slot back in the queue (after its think
// time, if its last request asked for one).
func (w *worker) release(c *conn) {
	if c.thinkUntil != 0 && w.thinks(c) {
		return
	}
	if !c.inFree {
		c.inFree = true
		w.free.push(c.idx)
	}
}

// start begins request hit, intended at at, on c. waitFrom >= 0 is when it
// began to wait for a free connection (open model).
func (w *worker) start(c *conn, hit uint64, at, waitFrom time.Duration) {
	req, step, head, ok := c.reqs.Next(hit)
	if !ok {
		w.rec.Skipped()
		w.release(c)
		return
	}
	c.call.Begin(w.j, w.shard, step, hit, at, w.connBase+c.idx)
	c.call.Reserve(c.reqs)
	if waitFrom >= 0 {
		// It waited until a connection was free: the moment its slot's
		// last response arrived (the kernel's receive time), not the
		// moment the loop got to it — that part is hail's own lateness.
		ready := w.now
		if c.readyAt >= 0 {
			ready = min(max(c.readyAt, waitFrom), w.now)
		}
		c.call.Waited(waitFrom, ready)
	}
	if c.readyAt >= 0 {
		c.call.Ready(c.readyAt) // closed model: hail's lateness counts from there
	}
	c.head = head
	w.count.busy++
	if w.stable {
		c.req = req
	} else if err := w.copyReq(c, req); err != nil {
		c.stamp = true
		c.parser.Reset(head) // no response of this request's to count (CutShort)
		w.endErr(c, err)     // nothing was sent; the connection is fine
		return
	}
	c.body = nil
	if c.sb != nil {
		c.body = c.sb.Body(hit, step) // stable: sent from where it is, never copied
	}
	c.chain.Reset(w.j, c.req, c.body)
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

// copyReq copies request bytes into c's arena send buffer. It fails only
// when no memory could be mapped for the buffer (ENOMEM: the request ends
// as "out of memory").
func (w *worker) copyReq(c *conn, req []byte) error {
	if cap(c.sendBuf) < len(req) {
		b, err := w.allocSend(len(req))
		if err != nil {
			return err
		}
		c.sendBuf = b
	}
	c.req = c.sendBuf[:copy(c.sendBuf[:cap(c.sendBuf)], req)]
	return nil
}

// newArena maps send-buffer memory (a variable so that a test can make it
// fail).
var newArena = uring.NewArena

func (w *worker) allocSend(n int) ([]byte, error) {
	size := pow2(max(n, 256))
	if k := len(w.mem.sendMem); k > 0 {
		if b := w.mem.sendMem[k-1].Alloc(size); b != nil {
			return b, nil
		}
	}
	a, err := newArena(max(size, 256<<10))
	if err != nil {
		return nil, fmt.Errorf("uring engine: no memory for a request buffer of %d bytes: %w", size, err)
	}
	w.mem.sendMem = append(w.mem.sendMem, a)
	return a.Alloc(size), nil
}

// exchange sends c's current request, connecting first if needed.
func (w *worker) exchange(c *conn) {
	c.parser.Reset(c.head)
	c.sendErr = nil
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
	w.ep = ep
	if ep.Hybrid && w.hsLine == nil {
		line := "CONNECT " + strconv.FormatUint(uint64(ep.VsockPort), 10) + "\n"
		w.hsLine = w.mem.arena.Alloc(len(line))
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
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) // receive times (worker.evt)
	c.fd = int32(fd)
	w.setConnecting(c, true)
	c.eof, c.dns, c.served = false, dns, 0
	sqe := w.sqe()
	sqe.PrepConnect(c.fd, unsafe.Pointer(&c.sa[0]), saLen)
	sqe.SetUserData(ud(c, opConnect))
	w.count.outstanding++
	if !c.stamp {
		c.connStart = w.now
		if ep.Timeout > 0 {
			w.push(listConnect, c, w.now+ep.Timeout)
		}
	}
}

// setConnecting marks c's connect as in flight (or not), keeping count.
func (w *worker) setConnecting(c *conn, v bool) {
	if c.connecting != v {
		c.connecting = v
		if v {
			w.count.connecting++
		} else {
			w.count.connecting--
		}
	}
}

func (w *worker) armRecv(c *conn) {
	sqe := w.sqe()
	sqe.PrepRecvmsgMultishot(c.fd, w.rx.msg, w.mem.br.Group())
	sqe.SetUserData(ud(c, opRecv))
	w.count.outstanding++
	c.recvArmed = true
}

// send queues c's request on its open connection.
func (w *worker) send(c *conn) {
	c.sending, c.sent, c.out, c.inBody = true, 0, c.req, false
	w.queueSend(c)
	if len(c.carry) > 0 {
		w.feedCarry(c)
	}
}

func (w *worker) queueSend(c *conn) {
	sqe := w.sqe()
	sqe.PrepSend(c.fd, unsafe.Pointer(&c.out[c.sent]), uint32(len(c.out)-c.sent), unix.MSG_NOSIGNAL)
	sqe.SetUserData(ud(c, opSend))
	w.count.outstanding++
}
