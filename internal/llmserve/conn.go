package llmserve

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
)

const (
	readBufSize   = 16 << 10
	lingerTimeout = 500 * time.Millisecond
	h2Preface     = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
)

var (
	ctJSON     = "application/json"
	continue11 = []byte("HTTP/1.1 100 Continue\r\n\r\n")
)

// conn is an HTTP/1.x connection, served by its own goroutine: it reads
// requests, answers the simple ones, and for a generation request writes
// the head, submits the stream and waits for it to end. Its stream's tokens
// are written by the stream's shard.
type conn struct {
	s   *Server
	nc  net.Conn
	rc  syscall.RawConn // nil if the connection has none
	seq uint64

	buf  []byte // buf[r:w] is unread input
	r, w int
	out  []byte // the owner's pending output
	body []byte // decoded chunked bodies
	h    http1.RequestHead

	keepAlive bool // the current request's connection stays open
	st        *stream

	rxOn bool  // read with recvmsg for the kernel's receive times
	rxAt int64 // receive time of the last read (Unix ns); 0: unknown
	sys  sysConn
	rx   rxState
}

func newConn(s *Server, nc net.Conn, seq uint64) *conn {
	c := &conn{s: s, nc: nc, seq: seq, buf: make([]byte, readBufSize)}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			c.rc = rc
		}
	}
	c.sys.init(c)
	c.rxOn = s.log != nil && c.rc != nil && c.enableRxTime()
	return c
}

// serve runs the connection until it ends. It returns true when the
// connection was handed to the HTTP/2 server.
func (c *conn) serve() (h2 bool) {
	if c.sniffH2() {
		return true
	}
	for c.request() {
	}
	return false
}

// sniffH2 reads until the input is known not to start with the HTTP/2
// preface, or is known to: then the connection goes to the HTTP/2 server
// with what was read put back in front.
func (c *conn) sniffH2() bool {
	for c.w < len(h2Preface) && bytes.HasPrefix([]byte(h2Preface), c.buf[:c.w]) {
		if !c.fill() {
			return false
		}
	}
	if !bytes.HasPrefix(c.buf[:c.w], []byte(h2Preface)) {
		return false
	}
	c.s.handH2(&prefixConn{Conn: c.nc, prefix: bytes.Clone(c.buf[:c.w])})
	return true
}

// fill reads more input, compacting buf (positions relative to r stay
// valid) and growing it when full, up to the largest request allowed.
func (c *conn) fill() bool {
	if c.r > 0 {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	if c.w == len(c.buf) {
		limit := maxHeadBytes + c.s.cfg.MaxBodyBytes + readBufSize
		if len(c.buf) >= limit {
			return false
		}
		nb := make([]byte, min(2*len(c.buf), limit))
		copy(nb, c.buf[:c.w])
		c.buf = nb
	}
	n, err := c.read(c.buf[c.w:])
	c.w += n
	return n > 0 || err == nil
}

// read reads into p, noting the receive time when rxOn.
func (c *conn) read(p []byte) (int, error) {
	if c.rxOn {
		return c.readRx(p)
	}
	return c.nc.Read(p)
}

// request reads and answers one request; false ends the connection.
func (c *conn) request() bool {
	if c.r == c.w {
		c.r, c.w = 0, 0
		if len(c.buf) > 4*readBufSize {
			c.buf = make([]byte, readBufSize)
		}
	}
	var n int
	for {
		var err *http1.RequestError
		n, err = http1.ParseRequestHead(c.buf[c.r:c.w], maxHeadBytes, &c.h)
		if err == nil {
			break
		}
		if err != errIncomplete {
			c.fail(err)
			return false
		}
		if !c.fill() {
			return false
		}
	}
	c.keepAlive = c.h.KeepAlive
	body, end, ok := c.readBody(n)
	if !ok {
		return false
	}
	arrivalUnix, kernel := c.rxAt, c.rxOn && c.rxAt != 0
	keep := c.route(body, arrivalUnix, kernel)
	c.r += end
	if !keep {
		c.closeAfter()
	}
	return keep
}

// readBody reads the body of the request whose head is buf[r:r+n]; end is
// where the request ends, relative to r.
func (c *conn) readBody(n int) (body []byte, end int, ok bool) {
	h := &c.h
	sentContinue := false
	more := func() bool {
		if h.ExpectContinue && !sentContinue {
			sentContinue = true
			if _, err := c.nc.Write(continue11); err != nil {
				return false
			}
		}
		return c.fill()
	}
	switch {
	case h.Chunked:
		for {
			e, err := chunkedEnd(c.buf[c.r+n:c.w], c.s.cfg.MaxBodyBytes)
			if err == nil {
				c.body = decodeChunked(c.body[:0], c.buf[c.r+n:c.r+n+e])
				return c.body, n + e, true
			}
			if err != errIncomplete {
				c.fail(err)
				return nil, 0, false
			}
			if !more() {
				return nil, 0, false
			}
		}
	case h.ContentLength > 0:
		if h.ContentLength > int64(c.s.cfg.MaxBodyBytes) {
			c.fail(errBodyTooLarge)
			return nil, 0, false
		}
		cl := int(h.ContentLength)
		for c.w-c.r-n < cl {
			if !more() {
				return nil, 0, false
			}
		}
		return c.buf[c.r+n : c.r+n+cl], n + cl, true
	}
	return nil, n, true
}

// route answers the request in c.h; false closes the connection.
func (c *conn) route(body []byte, arrivalUnix int64, kernel bool) bool {
	s := c.s
	rt := routeOf(c.h.Path)
	method := string(c.h.Method)
	if allow, ok := rt.allows(method); !ok {
		c.respondError(405, "method "+method+" not allowed on "+string(c.h.Path)+" (allowed: "+allow+")", "invalid_request_error", "Allow: "+allow+"\r\n")
		return c.flush() && c.keepAlive
	}
	switch rt {
	case routeNotFound:
		c.respondError(404, "not found: the mock serves /v1/completions, /v1/chat/completions, /v1/models, /health and /stats", "invalid_request_error", "")
	case routeHealth:
		c.respond(200, "", nil, "")
	case routeModels:
		c.respond(200, ctJSON, s.modelsJSON, "")
	case routeStats:
		c.respond(200, ctJSON, s.statsJSON(), "")
	default:
		return c.generate(rt, body, arrivalUnix, kernel)
	}
	return c.flush() && c.keepAlive
}

// generate answers a completions or chat request.
func (c *conn) generate(rt route, body []byte, arrivalUnix int64, kernel bool) bool {
	s := c.s
	arrival := s.since()
	if !kernel {
		arrivalUnix = s.wallBase + int64(arrival)
	}
	s.c.requests.Add(1)
	req, err := decodeRequest(rt.api(), body, &s.cfg)
	if err != nil {
		s.c.badRequests.Add(1)
		c.respondError(400, err.Error(), "invalid_request_error", "")
		return c.flush() && c.keepAlive
	}
	if c.st == nil {
		c.st = newStream(s, c, s.shards[c.seq%uint64(len(s.shards))])
	}
	st := c.st
	st.start(s.reqSeq.Add(1), req, arrival, arrivalUnix, kernel, req.stream && c.h.Minor == 1)
	if f := st.fault; f != nil && (f.Kind == Fault429 || f.Kind == Fault503) {
		st.status = 429
		if f.Kind == Fault503 {
			st.status = 503
		}
		c.respondError(st.status, "mock fault: "+http.StatusText(st.status), "server_busy", "Retry-After: "+strconv.FormatInt(f.retryAfter(), 10)+"\r\n")
		st.finish(arrival, outRejected)
		return c.flush() && c.keepAlive
	}
	if req.stream {
		c.out = append(c.out, headSSE...)
		switch {
		case c.h.Minor == 0:
			c.keepAlive = false
			c.out = append(c.out, "Connection: close\r\n\r\n"...)
		case !c.keepAlive:
			c.out = append(c.out, "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"...)
		default:
			c.out = append(c.out, "Transfer-Encoding: chunked\r\n\r\n"...)
		}
		if req.api == apiChat {
			c.out, _ = st.appendEvent(c.out, chunkRole, 0, "")
		}
	}
	if !c.flush() {
		return false
	}
	s.submit(st)
	return c.wait(st)
}

// wait writes what the shard hands over (a backlog, HTTP/1 only) until the
// stream has finished; false closes the connection.
func (c *conn) wait(st *stream) bool {
	for {
		select {
		case <-st.kick:
		case <-c.s.done:
			return false
		}
		for {
			st.mu.Lock()
			st.pending, st.writing = st.writing[:0], st.pending
			w := st.writing
			if len(w) == 0 {
				st.backlog = false
			}
			fin, drop := st.finished, st.dropped
			st.mu.Unlock()
			if len(w) == 0 {
				if drop {
					c.nc.Close()
					return false
				}
				if fin {
					return c.keepAlive && !st.dead.Load()
				}
				break
			}
			if _, err := c.nc.Write(w); err != nil {
				st.dead.Store(true)
				return false
			}
		}
	}
}

// respond queues a response with a body.
func (c *conn) respond(status int, ctype string, body []byte, extra string) {
	c.out = appendHead(c.out, status, ctype, len(body), c.keepAlive, extra)
	if string(c.h.Method) != "HEAD" {
		c.out = append(c.out, body...)
	}
}

// respondError queues an OpenAI error object.
func (c *conn) respondError(status int, msg, typ, extra string) {
	b := appendErrorJSON(nil, strings.ToValidUTF8(msg, "?"), typ, status)
	c.respond(status, ctJSON, append(b, '\n'), extra)
}

// fail answers a protocol error, if it has a status, and ends the
// connection.
func (c *conn) fail(err *http1.RequestError) {
	if err.Status == 0 {
		return
	}
	c.keepAlive = false
	c.h.Method = nil
	c.respondError(err.Status, err.Msg, "invalid_request_error", "")
	c.flush()
	c.closeAfter()
}

// flush writes the owner's pending output.
func (c *conn) flush() bool {
	if len(c.out) == 0 {
		return true
	}
	_, err := c.nc.Write(c.out)
	c.out = c.out[:0]
	return err == nil
}

// closeAfter half-closes the connection and drains input briefly, so that a
// client still sending receives the last response rather than a reset.
func (c *conn) closeAfter() {
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		c.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
		for total := 0; total < 1<<20; {
			n, err := c.nc.Read(c.buf[:cap(c.buf)])
			total += n
			if err != nil {
				break
			}
		}
	}
	c.nc.Close()
}

// tryWrite writes p without blocking, from the shard's goroutine: it
// returns how much the socket took; an error means the client is gone.
func (c *conn) tryWrite(p []byte) (int, error) { return c.sys.tryWrite(p) }

// peerGone reports whether the peer has closed its side (or reset).
func (c *conn) peerGone() bool { return c.sys.peerGone() }

// appendHead appends a response head with a Content-Length.
func appendHead(dst []byte, status int, ctype string, n int, keep bool, extra string) []byte {
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, ' ')
	dst = append(dst, http.StatusText(status)...)
	dst = append(dst, "\r\n"...)
	if ctype != "" {
		dst = append(dst, "Content-Type: "...)
		dst = append(dst, ctype...)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, extra...)
	if !keep {
		dst = append(dst, "Connection: close\r\n"...)
	}
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...)
}

// prefixConn is a connection whose first bytes were already read.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}
