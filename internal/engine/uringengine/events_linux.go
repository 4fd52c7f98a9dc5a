//go:build linux

package uringengine

import (
	"bytes"
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/transport"
	"github.com/hail-loadgen/hail/internal/uring"
)

// handle reacts to one completion.
func (w *worker) handle(cqe *uring.CQE) {
	u := cqe.UserData
	op := uint8(u)
	if op != opRecv || !cqe.More() {
		w.count.outstanding--
	}
	switch op {
	case opWake:
		w.away.wakeArmed = false
		return
	case opShutdown, opClose:
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
			w.mem.br.Add(cqe.BufferID())
		}
		return
	}
	if c.draining {
		w.onDrain(c, op, cqe)
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
	w.setConnecting(c, false)
	if res < 0 {
		err := errnoOf(res)
		if res == -int32(unix.ETIMEDOUT) { // the kernel gave up on the handshake
			err = &transport.ConnectTimeoutError{Err: err}
		}
		w.fail(c, err)
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
	w.unlist(listConnect, c)
	w.connected(c)
	w.send(c)
}

// connected records c's finished connection setup.
func (w *worker) connected(c *conn) {
	c.call.Connected(c.dns, c.dns+w.now-c.connStart)
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
	w.unlist(listConnect, c)
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
		switch {
		case !c.active():
			w.closeConn(c)
		case c.recvArmed && !c.eof && c.sendErr == nil && (res == -int32(unix.EPIPE) || res == -int32(unix.ECONNRESET)):
			// The server may have answered before it stopped reading (a 413
			// to a large body): wait, briefly, for what it sent.
			c.sendErr, c.sending = errnoOf(res), false
			w.push(listConnect, c, w.now+engine.EarlyResponseGrace)
		default:
			w.fail(c, errnoOf(res))
		}
		return
	}
	c.sent += int(res)
	if !c.handshaking && !w.isHandshakeLine(c) {
		c.call.Wrote(int64(res))
	}
	if c.sent < len(c.out) {
		w.queueSend(c)
		return
	}
	if len(c.body) > 0 && !c.inBody && !c.handshaking && !w.isHandshakeLine(c) {
		c.out, c.sent, c.inBody = c.body, 0, true // the head is out: now the shared body
		w.queueSend(c)
		return
	}
	c.sending = false
	if c.handshaking {
		return
	}
	if w.isHandshakeLine(c) {
		// The VMM answered before the CONNECT send completed.
		w.send(c)
		return
	}
	if !c.active() {
		w.release(c)
	}
}

// isHandshakeLine reports whether c is sending the hybrid vsock CONNECT line.
func (w *worker) isHandshakeLine(c *conn) bool {
	return len(w.hsLine) > 0 && len(c.out) > 0 && &c.out[0] == &w.hsLine[0]
}

func (w *worker) onRecv(c *conn, cqe *uring.CQE) {
	gen := c.gen
	if !cqe.More() {
		c.recvArmed = false
	}
	switch res := cqe.Res; {
	case res > 0:
		bid := cqe.BufferID()
		control, payload, ok := uring.Recvmsg(w.mem.br.Buf(bid)[:res], w.rx.msg)
		switch {
		case !ok:
			w.mem.br.Add(bid)
			w.fail(c, errGarbledRecv)
			return
		case len(payload) == 0 && !cqe.More(): // the peer's end
			w.mem.br.Add(bid)
			w.rx.evt = w.now
			w.onEOF(c)
			return
		}
		w.receivedAt(uring.RxTime(control))
		w.onData(c, payload)
		w.mem.br.Add(bid)
	case res == 0:
		if cqe.HasBuffer() {
			w.mem.br.Add(cqe.BufferID())
		}
		w.onEOF(c)
		return
	case res == -int32(unix.ENOBUFS):
		// The buffer ring ran dry: re-armed below, once buffers are back.
	default:
		switch {
		case c.handshaking:
			w.handshakeFailed(c, errnoOf(res))
		case c.active() && !c.away:
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

// receivedAt sets the time of the bytes about to be handled: the kernel's
// receive time when they carry one, else now.
func (w *worker) receivedAt(rx int64) {
	if rx == 0 {
		w.rx.evt, w.rx.stamped = w.now, false
		return
	}
	w.rx.evt, w.rx.stamped = min(time.Duration(rx-w.rx.wallStart), w.now), true
}

// at is the time of the bytes being handled, never before c's request
// started (the receive time is the wall clock's, the start the monotonic
// one's).
func (w *worker) at(c *conn) time.Duration { return max(w.rx.evt, c.call.StartTime()) }

// onData feeds received bytes to c's parser.
func (w *worker) onData(c *conn, data []byte) {
	if c.handshaking {
		w.onHandshake(c, data)
		return
	}
	if !c.active() || c.away {
		// Bytes nobody asked for: keep them for the next response, as the
		// net engine's read buffer would.
		if len(c.carry)+len(data) > maxIdleCarry {
			w.closeConn(c)
			return
		}
		c.carry = append(c.carry, data...)
		return
	}
	read := time.Duration(-1) // when hail reads these bytes: the read lag of a stream's events
	if w.rx.stamped {
		read = w.now
		if c.call.Streaming() { // w.now is the batch's: later completions are read later
			read = w.j.Since()
		}
	}
	c.call.Received(w.at(c), read)
	defer w.watchIdle(c)
	for len(data) > 0 {
		if len(c.carry) > 0 {
			// A line was split: complete it in the carry buffer (up to and
			// including its LF only), then go on from the kernel's buffer.
			take := len(data)
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				take = i + 1
			}
			c.carry = append(c.carry, data[:take]...)
			data = data[take:]
			done, ok := w.parseCarry(c)
			if !ok {
				return
			}
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
	w.rx.evt = w.now
	c.call.Received(w.at(c), -1)
	if done, ok := w.parseCarry(c); ok && done {
		w.responseDone(c)
	}
	w.watchIdle(c)
}

// parseCarry feeds the carry buffer to c's parser and keeps what it did not
// consume. It reports whether the response is complete, and false in ok if
// the bytes failed the connection.
func (w *worker) parseCarry(c *conn) (done, ok bool) {
	n, done, err := c.parser.Feed(c.carry)
	if err != nil {
		w.fail(c, err)
		return false, false
	}
	c.carry = c.carry[:copy(c.carry, c.carry[n:])]
	return done, true
}

func (w *worker) onEOF(c *conn) {
	w.rx.evt = w.now
	c.eof = true
	if c.handshaking {
		w.handshakeFailed(c, nil)
		return
	}
	if !c.active() || c.away {
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

// responseDone ends an exchange whose response is complete: it follows a
// redirect (on this connection when it stays on its origin, on a helper
// goroutine when it leaves it), or ends the call with the response.
func (w *worker) responseDone(c *conn) {
	j := w.j
	keep := c.parser.KeepAlive && j.KeepAlive && !c.eof && c.sendErr == nil
	c.served++
	c.sendErr = nil
	if !keep {
		w.closeConn(c)
	}
	w.unlist(listConnect, c) // an early response's grace
	follow, same, err := c.chain.Follow(j, &c.parser)
	switch {
	case err != nil:
		w.endErr(c, err)
	case !follow:
		w.end(c)
	case !same:
		w.goAway(c)
	default:
		w.hop(c)
	}
}

// hop sends the next request of c's redirect chain on c's origin.
func (w *worker) hop(c *conn) {
	c.head = c.chain.Head()
	if c.sending {
		// The response beat our own send's completion: the send buffer is
		// still the kernel's. Go on over a new connection.
		w.closeConn(c)
	}
	if err := w.copyReq(c, c.chain.Req); err != nil {
		w.endErr(c, err)
		return
	}
	c.body = c.chain.Body
	w.exchange(c)
}
