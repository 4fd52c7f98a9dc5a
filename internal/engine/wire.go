package engine

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Wire is one blocking HTTP/1 connection and its read buffer: each of the
// net engine's connections, and the connections a redirect chain opens to
// other origins on every HTTP/1 engine. Reads and writes go straight to the
// connection; the response is parsed in place from the buffer, so a
// request costs no allocation once the buffer has grown to its size.
type Wire struct {
	// Conn is the connection; nil when there is none.
	Conn net.Conn
	// Served counts the responses the connection carried: a request on a
	// connection that served others may find it closed by the server
	// (Call.RetryStale).
	Served int
	// Guard is the abort's hold on Conn; a streaming response's idle
	// timeout sets its read deadline through it.
	Guard *Guard
	// Epoch is the job's start, Unix ns: with it, reads of a plain TCP or
	// unix socket (or of a connection the dialer stamped, under TLS say:
	// transport.RxTime) carry the kernel's receive time (Linux). 0:
	// hail's clock stamps every read.
	Epoch int64
	// Last is when the bytes last read arrived, as a time since the job's
	// start: their kernel receive time where known, else the read's.
	Last time.Duration
	// readAt is when hail read them; -1 when Last is hail's clock too (a
	// stream's read lag is then not known).
	readAt  time.Duration
	buf     []byte
	r, w    int           // unconsumed response bytes are buf[r:w]
	idle    time.Duration // the stream idle deadline set on Conn (since the job's start); 0: none
	vec     [2][]byte     // a head and its shared body, for one writev
	bufs    net.Buffers   // over vec (WriteTo consumes it)
	rx      transport.RxReader
	stamped bool // reads go through rx
}

// Wire buffer sizes: small to start with, so that 10,000 mostly idle
// connections cost little; a read that fills the buffer doubles it, up to
// maxWireBuf, so large bodies stream in large reads.
const (
	minWireBuf = 512
	maxWireBuf = 64 << 10
)

// Attach makes c the wire's connection, with no bytes buffered.
func (x *Wire) Attach(c net.Conn) {
	x.Conn, x.r, x.w, x.Served = c, 0, 0, 0
	if x.buf == nil {
		x.buf = make([]byte, minWireBuf)
	}
	x.stamped = x.Epoch != 0 && x.rx.Attach(c)
}

// Detach forgets the connection (without closing it) and returns it.
func (x *Wire) Detach() net.Conn {
	c := x.Conn
	x.Conn, x.r, x.w = nil, 0, 0
	return c
}

// Close closes the connection, if any, and reports whether there was one.
func (x *Wire) Close() bool {
	c := x.Detach()
	if c == nil {
		return false
	}
	c.Close()
	return true
}

// RoundTrip writes req on the wire's connection and reads one response
// into p (reset by the caller for the request's method). The bytes written
// and the first response byte are recorded in call; now is the job's
// clock. keep is false when the connection cannot carry another request
// (the response said so, or ended at the connection's end): the caller
// closes it. wrote is the bytes of req written, and of body: a shared
// body (Chain.Body) that follows req, sent from where it is with one
// writev, never copied; nil for a request that holds its own.
//
// A server may answer before it has read the whole request (a 413 to a
// large body) and close: when the write fails because the server closed
// (a broken pipe, a reset), whatever it already sent is read — within the
// request's deadline and a second — and a complete response is the result,
// as curl reports it. Not when the run is aborting (aborting reports it).
func (x *Wire) RoundTrip(call *Call, req, body []byte, p *http1.Parser, now func() time.Duration, deadline time.Time, aborting func() bool) (keep bool, wrote int, err error) {
	if body == nil {
		wrote, err = x.Conn.Write(req)
	} else {
		x.vec = [2][]byte{req, body}
		x.bufs = x.vec[:]
		var n int64
		n, err = x.bufs.WriteTo(x.Conn)
		wrote = int(n)
	}
	call.Wrote(int64(wrote))
	if err != nil {
		if (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) && !aborting() {
			d := time.Now().Add(EarlyResponseGrace)
			if !deadline.IsZero() && deadline.Before(d) {
				d = deadline
			}
			_ = x.Conn.SetReadDeadline(d)
			if aborting() { // the abort's own past deadline may have come just before ours
				_ = x.Conn.SetReadDeadline(time.Unix(1, 0))
			}
			if _, rerr := x.read(call, p, now, deadline); rerr == nil {
				return false, wrote, nil
			}
		}
		return false, wrote, err
	}
	keep, err = x.read(call, p, now, deadline)
	return keep, wrote, err
}

// EarlyResponseGrace bounds the wait for a response that a server sent
// before it stopped reading the request (a write or send that failed
// because the server closed): every HTTP/1 engine waits this long.
const EarlyResponseGrace = time.Second

// read reads one response into p; deadline is the request's (zero: none).
func (x *Wire) read(call *Call, p *http1.Parser, now func() time.Duration, deadline time.Time) (keep bool, err error) {
	x.idle = 0
	for {
		if x.r < x.w {
			n, done, err := p.Feed(x.buf[x.r:x.w])
			x.r += n
			if err != nil {
				return false, err
			}
			if done {
				x.Served++
				x.endIdle(deadline)
				return p.KeepAlive, nil
			}
		}
		x.compact()
		if x.idle == 0 {
			x.armIdle(call, now, deadline)
		}
		n, err := x.readConn(now)
		if n > 0 {
			call.Received(max(x.Last, call.StartTime()), x.readAt)
			x.w += n
			if x.w == len(x.buf) && len(x.buf) < maxWireBuf {
				x.buf = append(x.buf, make([]byte, len(x.buf))...)
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			done, perr := p.EOF()
			if perr != nil {
				return false, perr
			}
			if done {
				x.Served++
				x.endIdle(deadline)
				return false, nil
			}
		}
		if x.idle > 0 && errors.Is(err, os.ErrDeadlineExceeded) && !x.Guard.Aborted() && (deadline.IsZero() || time.Now().Before(deadline)) {
			if t := now(); t >= call.IdleAt() {
				return false, ErrStreamIdle
			}
			x.idle = 0 // events came since: set the deadline again
			continue
		}
		if err != nil {
			return false, err
		}
	}
}

// armIdle sets the connection's read deadline to the stream's idle
// deadline, when the response is a stream with one that comes before the
// request's own deadline. It is set again only when it passes (read then
// checks whether events came meanwhile), not at every event.
func (x *Wire) armIdle(call *Call, now func() time.Duration, deadline time.Time) {
	at := call.IdleAt()
	if at == 0 || x.Guard == nil {
		return
	}
	d := time.Now().Add(at - now())
	if !deadline.IsZero() && deadline.Before(d) {
		return
	}
	x.idle = at
	x.Guard.SetDeadline(d)
}

// endIdle puts the request's deadline back after a stream's idle deadline
// was set on the connection.
func (x *Wire) endIdle(deadline time.Time) {
	if x.idle > 0 {
		x.idle = 0
		x.Guard.SetDeadline(deadline)
	}
}

// readConn reads what the connection has into the buffer and stamps the
// bytes' arrival in x.Last: the kernel's receive time (never later than
// now) when the read carries one, else now; x.readAt is then now (else -1).
func (x *Wire) readConn(now func() time.Duration) (int, error) {
	var n int
	var err error
	var rx int64
	if x.stamped {
		n, err = x.rx.Read(x.buf[x.w:])
		rx = x.rx.Rx
	} else {
		n, err = x.Conn.Read(x.buf[x.w:])
		if x.Epoch != 0 && n > 0 {
			rx = transport.RxTime(x.Conn)
		}
	}
	if n > 0 {
		t := now()
		x.Last, x.readAt = t, -1
		if rx != 0 {
			x.Last, x.readAt = min(time.Duration(rx-x.Epoch), t), t
		}
	}
	return n, err
}

// compact makes room at the end of the buffer for the next read.
func (x *Wire) compact() {
	switch {
	case x.r == x.w:
		x.r, x.w = 0, 0
	case x.w == len(x.buf) && x.r > 0:
		x.w = copy(x.buf, x.buf[x.r:x.w])
		x.r = 0
	case x.w == len(x.buf):
		x.buf = append(x.buf, make([]byte, len(x.buf))...)
	}
}
