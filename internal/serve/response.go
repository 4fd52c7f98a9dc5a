package serve

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

var (
	ctText    = []byte("text/plain")
	ctJSON    = []byte("application/json")
	helloBody = []byte("hello world\n")
	okBody    = []byte("ok\n")

	// helloResponse is the complete keep-alive answer to a plain GET,
	// encoded once.
	helloResponse = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nhello world\n")

	notFoundJSON = []byte(`{"error":"not found"}`)
	methodJSON   = []byte(`{"error":"method not allowed"}`)
	badJSON      = []byte(`{"error":"body is not valid JSON"}`)
	bigItemJSON  = []byte(`{"error":"item body exceeds 65536 bytes"}`)

	// pattern is the source of size= bodies: printable lines of 64 bytes.
	pattern = func() []byte {
		b := make([]byte, 64<<10)
		for i := range b {
			if i%64 == 63 {
				b[i] = '\n'
			} else {
				b[i] = 'a' + byte(i%64%26)
			}
		}
		return b
	}()
)

// dispatch answers the request in c.req whose body has been read. It returns
// whether the connection stays open.
func (c *conn) dispatch(rt route, body []byte) bool {
	req := &c.req
	keep := req.KeepAlive
	m := req.Method
	c.isHead = string(m) == "HEAD"
	get := c.isHead || string(m) == "GET"

	switch rt {
	case routeHealthz:
		if !get {
			c.respond(405, ctText, "Allow: GET, HEAD\r\n", []byte("method not allowed\n"), false, keep)
			return keep
		}
		c.respond(200, ctText, "", okBody, false, keep)
		return keep
	case routeStats:
		if !get {
			c.respond(405, ctJSON, "Allow: GET, HEAD\r\n", methodJSON, false, keep)
			return keep
		}
		b, _ := json.Marshal(c.s.Stats())
		c.respond(200, ctJSON, "", append(b, '\n'), false, keep)
		return keep
	case routeStatsReset:
		if string(m) != "POST" {
			c.respond(405, ctJSON, "Allow: POST\r\n", methodJSON, false, keep)
			return keep
		}
		c.s.resetStats()
		c.respond(204, nil, "", nil, false, keep)
		return keep
	}

	if len(req.Query) == 0 {
		if rt == routeDefault && keep && req.Minor == 1 && string(m) == "GET" {
			c.out = append(c.out, helloResponse...)
			c.count(200)
			if len(c.out) >= flushAt {
				c.flush()
			}
			return true
		}
		return c.endpoint(rt, body, nil, keep)
	}

	f := c.faultsFor(req.Query)
	if f.err != "" {
		c.scratch = append(c.scratch[:0], f.err...)
		c.respond(400, ctText, "", c.scratch, false, keep)
		return keep
	}
	var arrival time.Duration
	if f.stall != nil {
		arrival = c.s.since()
	}
	status, injected := 0, false
	if len(f.statuses) > 0 {
		status, injected = pick(f.statuses, pct(&c.rng))
	}
	if len(f.delays) > 0 {
		if d, _ := pick(f.delays, pct(&c.rng)); !c.sleep(d) {
			return false
		}
	}
	if f.stall != nil {
		if !c.sleep(f.stall.hold(arrival, c.s.since())) {
			return false
		}
	}
	if f.closePct > 0 && pct(&c.rng) < f.closePct {
		keep = false
	}
	if injected {
		c.respondDefault(status, f, keep)
		return keep
	}
	return c.endpoint(rt, body, f, keep)
}

// faultsFor returns the parsed faults for a raw query, from the
// per-connection cache when the same query was seen recently.
func (c *conn) faultsFor(q []byte) *faults {
	for i := range c.cache {
		if e := &c.cache[i]; e.f != nil && e.key == string(q) {
			return e.f
		}
	}
	key := string(q)
	f := c.s.parseFaults(key)
	c.cache[c.cacheNext] = cacheEntry{key, f}
	c.cacheNext = (c.cacheNext + 1) % faultCacheSize
	return f
}

// endpoint runs the handler of a non-control route.
func (c *conn) endpoint(rt route, body []byte, f *faults, keep bool) bool {
	chunked := f != nil && f.chunked && c.req.Minor == 1
	switch rt {
	case routeEcho:
		if f != nil && f.headers {
			c.respond(200, ctText, "", c.req.Head, chunked, keep)
		} else {
			c.respond(200, c.req.ContentType, "", body, chunked, keep)
		}
	case routeItems:
		c.itemsCollection(body, chunked, keep)
	case routeItem:
		c.item(chunked, keep)
	default:
		c.respondDefault(200, f, keep)
	}
	return keep
}

// respondDefault sends the default body ("hello world\n" or the size=
// pattern) with status.
func (c *conn) respondDefault(status int, f *faults, keep bool) {
	chunked := f != nil && f.chunked && c.req.Minor == 1
	if f != nil && f.size >= 0 {
		c.respondPattern(status, f.size, chunked, keep)
		return
	}
	c.respond(status, ctText, "", helloBody, chunked, keep)
}

// itemsCollection handles /items.
func (c *conn) itemsCollection(body []byte, chunked, keep bool) {
	s := c.s
	switch string(c.req.Method) {
	case "GET", "HEAD":
		b := append(c.scratch[:0], `{"count":`...)
		b = strconv.AppendInt(b, s.c.live.Load(), 10)
		c.scratch = append(b, '}')
		c.respond(200, ctJSON, "", c.scratch, chunked, keep)
	case "POST":
		if len(body) > maxItemBody {
			c.respond(413, ctJSON, "", bigItemJSON, chunked, keep)
			return
		}
		var data []byte
		if len(bytes.TrimSpace(body)) > 0 {
			if !json.Valid(body) {
				c.respond(400, ctJSON, "", badJSON, chunked, keep)
				return
			}
			data = bytes.Clone(body)
		}
		n := s.items.create(data)
		s.c.created.Add(1)
		s.c.live.Add(1)
		b := append(c.scratch[:0], `{"id":"`...)
		b = s.items.appendID(b, n)
		c.scratch = append(b, `"}`...)
		loc := "Location: /items/" + string(b[len(`{"id":"`):]) + "\r\n"
		c.respond(201, ctJSON, loc, c.scratch, chunked, keep)
	default:
		c.respond(405, ctJSON, "Allow: GET, HEAD, POST\r\n", methodJSON, chunked, keep)
	}
}

// item handles /items/{id}.
func (c *conn) item(chunked, keep bool) {
	s := c.s
	id := c.req.Path[len("/items/"):]
	n, issued := s.items.lookupID(id)
	switch string(c.req.Method) {
	case "GET", "HEAD":
		var data []byte
		found := false
		if issued {
			data, found = s.items.get(n)
		}
		if !found {
			s.c.getMisses.Add(1)
			if !issued {
				s.c.unknownIDs.Add(1)
			}
			c.respond(404, ctJSON, "", notFoundJSON, chunked, keep)
			return
		}
		s.c.getHits.Add(1)
		b := append(c.scratch[:0], `{"id":"`...)
		b = append(b, id...)
		b = append(b, `","data":`...)
		if data == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, data...)
		}
		c.scratch = append(b, '}')
		c.respond(200, ctJSON, "", c.scratch, chunked, keep)
	case "DELETE":
		if issued && s.items.remove(n) {
			s.c.deleted.Add(1)
			s.c.live.Add(-1)
			c.respond(204, nil, "", nil, false, keep)
			return
		}
		s.c.deleteMisses.Add(1)
		if !issued {
			s.c.unknownIDs.Add(1)
		}
		c.respond(404, ctJSON, "", notFoundJSON, chunked, keep)
	default:
		c.respond(405, ctJSON, "Allow: GET, HEAD, DELETE\r\n", methodJSON, chunked, keep)
	}
}

// count records a response in the statistics.
func (c *conn) count(status int) {
	if !c.counted {
		return
	}
	c.s.c.requests.Add(1)
	if status >= 0 && status < len(c.s.c.status) {
		c.s.c.status[status].Add(1)
	}
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != 204 && status != 304
}

// header appends a response head. extra holds complete header lines.
func (c *conn) header(status int, ctype []byte, extra string, length int64, chunked, keep bool) {
	o := append(c.out, "HTTP/1.1 "...)
	o = strconv.AppendInt(o, int64(status), 10)
	o = append(o, ' ')
	o = append(o, statusText(status)...)
	o = append(o, "\r\n"...)
	hasBody := bodyAllowed(status)
	if hasBody && len(ctype) > 0 {
		o = append(o, "Content-Type: "...)
		o = append(o, ctype...)
		o = append(o, "\r\n"...)
	}
	o = append(o, extra...)
	if hasBody {
		if chunked {
			o = append(o, "Transfer-Encoding: chunked\r\n"...)
		} else {
			o = append(o, "Content-Length: "...)
			o = strconv.AppendInt(o, length, 10)
			o = append(o, "\r\n"...)
		}
	}
	if !keep {
		o = append(o, "Connection: close\r\n"...)
	} else if c.req.Minor == 0 {
		o = append(o, "Connection: keep-alive\r\n"...)
	}
	c.out = append(o, "\r\n"...)
	c.count(status)
}

// respond sends a complete response with body (omitted for HEAD and
// bodiless statuses).
func (c *conn) respond(status int, ctype []byte, extra string, body []byte, chunked, keep bool) {
	chunked = chunked && bodyAllowed(status)
	c.header(status, ctype, extra, int64(len(body)), chunked, keep)
	if c.isHead || !bodyAllowed(status) {
		return
	}
	c.writeBody(body, chunked)
	c.endBody(chunked)
}

// respondPattern sends a response whose body is size bytes of pattern.
func (c *conn) respondPattern(status int, size int64, chunked, keep bool) {
	chunked = chunked && bodyAllowed(status)
	c.header(status, ctText, "", size, chunked, keep)
	if c.isHead || !bodyAllowed(status) {
		return
	}
	for rem := size; rem > 0 && !c.dead; {
		k := min(rem, int64(len(pattern)))
		c.writeBody(pattern[:k], chunked)
		rem -= k
	}
	c.endBody(chunked)
}

func (c *conn) endBody(chunked bool) {
	if chunked {
		c.out = append(c.out, "0\r\n\r\n"...)
	}
	if len(c.out) >= flushAt {
		c.flush()
	}
}

// writeBody appends body bytes (as chunks when chunked), writing large
// bodies straight to the connection.
func (c *conn) writeBody(p []byte, chunked bool) {
	if !chunked {
		if len(p) >= flushAt {
			if c.flush() {
				c.write(p)
			}
			return
		}
		c.out = append(c.out, p...)
		return
	}
	for len(p) > 0 && !c.dead {
		k := min(len(p), outChunk)
		c.out = strconv.AppendUint(c.out, uint64(k), 16)
		c.out = append(c.out, "\r\n"...)
		c.out = append(c.out, p[:k]...)
		c.out = append(c.out, "\r\n"...)
		p = p[k:]
		if len(c.out) >= flushAt {
			c.flush()
		}
	}
}

// statusText is the reason phrase of a status line for code ("Status" for a
// code it does not list). It is a lookup table written as one switch, which
// the compiler turns into a search with no map and no allocation per
// response; it is longer than ~80 lines only by its rows, so it stays whole.
func statusText(code int) string {
	switch code {
	case 100:
		return "Continue"
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 202:
		return "Accepted"
	case 203:
		return "Non-Authoritative Information"
	case 204:
		return "No Content"
	case 205:
		return "Reset Content"
	case 206:
		return "Partial Content"
	case 300:
		return "Multiple Choices"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Found"
	case 303:
		return "See Other"
	case 304:
		return "Not Modified"
	case 307:
		return "Temporary Redirect"
	case 308:
		return "Permanent Redirect"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 406:
		return "Not Acceptable"
	case 408:
		return "Request Timeout"
	case 409:
		return "Conflict"
	case 410:
		return "Gone"
	case 411:
		return "Length Required"
	case 412:
		return "Precondition Failed"
	case 413:
		return "Content Too Large"
	case 414:
		return "URI Too Long"
	case 415:
		return "Unsupported Media Type"
	case 417:
		return "Expectation Failed"
	case 418:
		return "I'm a teapot"
	case 422:
		return "Unprocessable Content"
	case 425:
		return "Too Early"
	case 429:
		return "Too Many Requests"
	case 431:
		return "Request Header Fields Too Large"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Status"
}
