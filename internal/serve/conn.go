package serve

import (
	"bytes"
	"math/rand/v2"
	"net"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
)

const (
	flushAt       = 64 << 10 // write the output buffer once it holds this much
	outChunk      = 4 << 10  // chunk size of chunked response bodies
	maxChunkLine  = 4 << 10  // longest accepted chunk-size line
	discardChunk  = 32 << 10 // buffer size for discarding unwanted bodies
	keepBodyBuf   = 64 << 10 // body buffers larger than this are not kept
	lingerTimeout = 500 * time.Millisecond
	lingerMax     = 256 << 10
)

// route identifies the endpoint a path maps to.
type route uint8

const (
	routeDefault route = iota
	routeEcho
	routeItems
	routeItem
	routeHealthz
	routeStats
	routeStatsReset
)

func routeOf(path []byte) route {
	switch string(path) {
	case "/echo":
		return routeEcho
	case "/items":
		return routeItems
	case "/healthz":
		return routeHealthz
	case "/stats":
		return routeStats
	case "/stats/reset":
		return routeStatsReset
	}
	if len(path) > len("/items/") && string(path[:len("/items/")]) == "/items/" {
		return routeItem
	}
	return routeDefault
}

// conn is the state of one connection, owned by its goroutine.
type conn struct {
	s  *Server
	nc net.Conn

	buf  []byte // read buffer; buf[r:w] is unconsumed input
	r, w int
	out  []byte // pending output

	body    []byte // body buffer for bodies not kept in buf, and discard space
	head    []byte // pinned copy of the request head while a chunked body is read
	scratch []byte // JSON building

	req          http1.RequestHead
	isHead       bool // request method is HEAD
	counted      bool // the response counts in Stats.Requests
	sentContinue bool

	rng       rand.PCG
	cache     [faultCacheSize]cacheEntry
	cacheNext int
	wake      chan struct{} // receives from the server's clock when a delay is over

	dead    bool // reading or writing failed; stop at once
	closing bool // we decided to close after the current response
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		s:   s,
		nc:  nc,
		buf: make([]byte, s.bufSize),
		out: make([]byte, 0, s.bufSize),
	}
	seq := s.connSeq.Add(1)
	c.rng.Seed(splitmix(s.seed+seq), splitmix(s.seed^(seq*0xD1B54A32D192ED03)))
	return c
}

// serve runs the request loop until the connection ends.
func (c *conn) serve() {
	for c.handle() {
	}
	if c.dead {
		c.nc.Close()
		return
	}
	c.flush()
	if c.closing && !c.dead {
		c.lingerClose()
		return
	}
	c.nc.Close()
}

// lingerClose half-closes the connection and drains input for a short while
// before closing, so that a client still sending (pipelined requests, an
// unread body) receives the final response rather than a reset.
func (c *conn) lingerClose() {
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		c.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
		b := c.buf[:cap(c.buf)]
		for total := 0; total < lingerMax; {
			n, err := c.nc.Read(b)
			total += n
			if err != nil {
				break
			}
		}
	}
	c.nc.Close()
}

// handle reads and answers one request. It returns false when the
// connection should be closed.
func (c *conn) handle() bool {
	for {
		if c.r == c.w {
			c.r, c.w = 0, 0
		}
		n, err := http1.ParseRequestHead(c.buf[c.r:c.w], c.s.maxHeader, &c.req)
		if err == nil {
			return c.process(n)
		}
		if err != http1.ErrRequestIncomplete {
			c.fail(err)
			return false
		}
		if !c.fill() {
			return false
		}
	}
}

// fill flushes pending output and reads more input into buf, compacting and
// growing it (up to maxHeader) as needed. Compaction invalidates slices into
// buf, so callers must not hold any (the request head is pinned first when a
// chunked body is read).
func (c *conn) fill() bool {
	if c.dead || !c.flush() {
		return false
	}
	if c.r > 0 {
		copy(c.buf, c.buf[c.r:c.w])
		c.w -= c.r
		c.r = 0
	}
	if c.w == 0 && len(c.buf) > c.s.bufSize {
		c.buf = make([]byte, c.s.bufSize) // give back a buffer grown for a large head
	}
	if c.w == len(c.buf) {
		// The cap leaves room past maxHeader so that parseHead and readLine
		// report their limits before the buffer runs out.
		size := min(2*len(c.buf), c.s.maxHeader+c.s.bufSize)
		if size <= len(c.buf) { // unreachable with the limits above
			c.fail(http1.ErrRequestHeadTooLarge)
			c.flush()
			c.dead = true
			return false
		}
		nb := make([]byte, size)
		copy(nb, c.buf[:c.w])
		c.buf = nb
	}
	for {
		if c.s.idle > 0 {
			c.nc.SetReadDeadline(time.Now().Add(c.s.idle))
		}
		n, err := c.nc.Read(c.buf[c.w:])
		if n > 0 {
			c.w += n
			c.s.c.bytesIn.Add(uint64(n))
			return true
		}
		if err != nil {
			c.dead = true
			return false
		}
	}
}

// needMore is fill for body reading: it first sends 100 Continue if the
// client asked for it.
func (c *conn) needMore() bool {
	c.sendContinue()
	return c.fill()
}

func (c *conn) sendContinue() {
	if c.req.ExpectContinue && !c.sentContinue {
		c.sentContinue = true
		c.out = append(c.out, "HTTP/1.1 100 Continue\r\n\r\n"...)
	}
}

// readFull reads exactly len(p) bytes from the connection (bypassing buf).
func (c *conn) readFull(p []byte) bool {
	c.sendContinue()
	if c.dead || !c.flush() {
		return false
	}
	for len(p) > 0 {
		if c.s.idle > 0 {
			c.nc.SetReadDeadline(time.Now().Add(c.s.idle))
		}
		n, err := c.nc.Read(p)
		c.s.c.bytesIn.Add(uint64(n))
		p = p[n:]
		if err != nil && len(p) > 0 {
			c.dead = true
			return false
		}
	}
	return true
}

// process handles a request whose head occupies buf[r:r+n].
func (c *conn) process(n int) bool {
	req := &c.req
	c.sentContinue = false
	c.isHead = false
	rt := routeOf(req.Path)
	c.counted = rt != routeHealthz && rt != routeStats && rt != routeStatsReset
	need := rt == routeEcho || rt == routeItems

	headEnd := c.r + n
	next := headEnd
	var body []byte
	switch {
	case req.Chunked:
		c.pinHead(n)
		var err *http1.RequestError
		if body, err = c.readChunked(need); err != nil {
			c.fail(err)
			return false
		}
		next = c.r
	case req.ContentLength > 0:
		cl := req.ContentLength
		if cl > c.s.maxBody {
			c.fail(errBodyTooLarge)
			return false
		}
		if int64(c.w-headEnd) >= cl {
			next = headEnd + int(cl)
			body = c.buf[headEnd:next]
			break
		}
		var ok bool
		if body, ok = c.readLargeBody(headEnd, cl, need); !ok {
			return false
		}
		next = c.w
	}

	keep := c.dispatch(rt, body)
	c.r = next
	if cap(c.body) > keepBodyBuf {
		c.body = nil
	}
	if cap(c.head) > keepBodyBuf {
		c.head = nil
	}
	if !keep {
		c.closing = true
	}
	return keep && !c.dead
}

// pinHead copies the request head out of buf and re-parses it, so that buf
// can be compacted while a chunked body is read through it.
func (c *conn) pinHead(n int) {
	c.head = append(c.head[:0], c.buf[c.r:c.r+n]...)
	http1.ParseRequestHead(c.head, len(c.head)+1, &c.req)
	c.r += n
}

// readLargeBody reads a Content-Length body that does not fit in buf; the
// part already in buf[headEnd:w] is its prefix. If need is false the body is
// discarded.
func (c *conn) readLargeBody(headEnd int, cl int64, need bool) ([]byte, bool) {
	have := c.w - headEnd
	if need {
		if int64(cap(c.body)) < cl {
			c.body = make([]byte, cl)
		}
		b := c.body[:cl]
		copy(b, c.buf[headEnd:c.w])
		return b, c.readFull(b[have:])
	}
	if cap(c.body) < discardChunk {
		c.body = make([]byte, discardChunk)
	}
	for rem := cl - int64(have); rem > 0; {
		k := min(rem, discardChunk)
		if !c.readFull(c.body[:k]) {
			return nil, false
		}
		rem -= k
	}
	return nil, true
}

// readChunked decodes a chunked body from buf (the head is pinned). With
// need false the data is discarded.
func (c *conn) readChunked(need bool) ([]byte, *http1.RequestError) {
	body := c.body[:0]
	var total int64
	for {
		line, err := c.readLine(maxChunkLine, errBadChunk)
		if err != nil {
			return nil, err
		}
		size, ok := http1.ParseChunkSize(line)
		if !ok {
			return nil, errBadChunk
		}
		if size == 0 {
			break
		}
		if size > c.s.maxBody-total {
			return nil, errBodyTooLarge
		}
		total += size
		for size > 0 {
			if c.r == c.w && !c.needMore() {
				return nil, errConnDead
			}
			k := int(min(size, int64(c.w-c.r)))
			if need {
				body = append(body, c.buf[c.r:c.r+k]...)
			}
			c.r += k
			size -= int64(k)
		}
		line, err = c.readLine(2, errBadChunk)
		if err != nil {
			return nil, err
		}
		if len(line) != 0 {
			return nil, errBadChunk
		}
	}
	// Trailer section: skipped, but bounded and checked for form.
	for trailer := 0; ; {
		line, err := c.readLine(c.s.maxHeader, http1.ErrRequestHeadTooLarge)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		if trailer += len(line) + 2; trailer > c.s.maxHeader {
			return nil, http1.ErrRequestHeadTooLarge
		}
		if i := bytes.IndexByte(line, ':'); i <= 0 || line[0] == ' ' || line[0] == '\t' {
			return nil, errBadChunk
		}
	}
	if need {
		c.body = body
	}
	return body, nil
}

// readLine returns the next line from buf (without its LF or CRLF), reading
// more as needed; a line longer than limit yields tooLong.
func (c *conn) readLine(limit int, tooLong *http1.RequestError) ([]byte, *http1.RequestError) {
	for {
		if i := bytes.IndexByte(c.buf[c.r:c.w], '\n'); i >= 0 {
			if i > limit {
				return nil, tooLong
			}
			line := c.buf[c.r : c.r+i]
			c.r += i + 1
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			return line, nil
		}
		if c.w-c.r > limit {
			return nil, tooLong
		}
		if !c.needMore() {
			return nil, errConnDead
		}
	}
}

// fail answers a protocol error and marks the connection for closing.
func (c *conn) fail(err *http1.RequestError) {
	if err.Status == 0 || c.dead {
		c.dead = true
		return
	}
	c.closing = true
	c.isHead = false
	c.counted = true
	c.req.Minor = 1
	c.scratch = append(append(c.scratch[:0], err.Msg...), '\n')
	c.respond(err.Status, ctText, "", c.scratch, false, false)
}

// flush writes pending output.
func (c *conn) flush() bool {
	if c.dead {
		return false
	}
	if len(c.out) == 0 {
		return true
	}
	ok := c.write(c.out)
	c.out = c.out[:0]
	return ok
}

func (c *conn) write(p []byte) bool {
	n, err := c.nc.Write(p)
	c.s.c.bytesOut.Add(uint64(n))
	if err != nil {
		c.dead = true
		return false
	}
	return true
}

// sleep waits for d, or returns false when the server is closing.
func (c *conn) sleep(d time.Duration) bool {
	if d <= 0 || c.s.noSleep {
		return true
	}
	if !c.flush() {
		return false
	}
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
	}
	from := time.Since(c.s.start)
	if !c.s.clock.Wait(from+d, c.wake, c.s.done) {
		c.dead = true
		return false
	}
	st := &c.s.c
	st.holds.Add(1)
	st.holdAsked.Add(int64(d))
	st.holdTaken.Add(int64(time.Since(c.s.start) - from))
	return true
}
