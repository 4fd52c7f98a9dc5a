package serve

import (
	"bytes"

	"github.com/hail-loadgen/hail/internal/http1"
)

// httpError is a protocol error with the status the server answers it with.
// All instances are package-level values so that reporting them does not
// allocate.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

var (
	errIncomplete     = &httpError{0, "incomplete request head"}
	errConnDead       = &httpError{0, "connection failed"}
	errHeaderTooLarge = &httpError{431, "request header fields too large"}
	errBadRequestLine = &httpError{400, "malformed request line"}
	errBadMethod      = &httpError{400, "malformed method"}
	errBadTarget      = &httpError{400, "malformed request target"}
	errBadVersion     = &httpError{400, "malformed HTTP version"}
	errVersion        = &httpError{505, "unsupported HTTP version"}
	errBadHeader      = &httpError{400, "malformed header field"}
	errObsFold        = &httpError{400, "obsolete header line folding"}
	errBadCL          = &httpError{400, "malformed Content-Length"}
	errDupCL          = &httpError{400, "conflicting Content-Length headers"}
	errCLAndTE        = &httpError{400, "both Content-Length and Transfer-Encoding"}
	errUnsupportedTE  = &httpError{501, "unsupported Transfer-Encoding"}
	errExpect         = &httpError{417, "unsupported expectation"}
	errBodyTooLarge   = &httpError{413, "request body too large"}
	errBadChunk       = &httpError{400, "malformed chunked body"}
)

// request is a parsed request head. All byte slices point into the buffer
// the head was parsed from and are valid only as long as it is.
type request struct {
	method []byte
	target []byte // raw request-target
	path   []byte // target without query (and without scheme/authority)
	query  []byte // raw query string without '?', nil when absent
	head   []byte // request line and header lines, without the final empty line

	minor          int   // HTTP/1.minor: 0 or 1
	contentLength  int64 // -1 when absent
	chunked        bool
	connClose      bool // Connection: close
	connKeepAlive  bool // Connection: keep-alive
	keepAlive      bool // the connection may stay open after the response
	expectContinue bool // Expect: 100-continue on an HTTP/1.1 request
	contentType    []byte
}

var slashPath = []byte("/")

// parseHead parses the request head at the start of b. It returns the number
// of bytes the head occupies (including leading empty lines and the final
// empty line). When b does not yet hold a complete head it returns
// errIncomplete, or errHeaderTooLarge once b holds maxHeader bytes or more.
// Lines end in CRLF or a bare LF. It never allocates, and it scans each byte
// about once, validating as it goes.
func parseHead(b []byte, maxHeader int, r *request) (int, *httpError) {
	*r = request{contentLength: -1}
	pos := 0
	// RFC 9112 2.2: ignore empty lines before the request line.
	for pos < len(b) && (b[pos] == '\n' || b[pos] == '\r') {
		if b[pos] == '\r' {
			if pos+1 == len(b) {
				return 0, errIncomplete
			}
			if b[pos+1] != '\n' {
				return 0, errBadRequestLine
			}
			pos++
		}
		pos++
	}
	start := pos
	next, err := r.parseRequestLine(b, pos)
	for err == nil {
		pos = next
		if pos > maxHeader {
			return 0, errHeaderTooLarge
		}
		if pos >= len(b) {
			err = errIncomplete
			break
		}
		c := b[pos]
		if c == '\r' || c == '\n' {
			next, err = lineEnd(b, pos, errBadHeader)
			break // the empty line ending the head
		}
		if c == ' ' || c == '\t' {
			return 0, errObsFold
		}
		next, err = r.parseHeaderLine(b, pos)
	}
	if err != nil {
		if err == errIncomplete {
			return 0, incomplete(len(b), maxHeader)
		}
		return 0, err
	}
	if next > maxHeader {
		return 0, errHeaderTooLarge
	}
	r.head = b[start:pos]
	if r.chunked && r.contentLength >= 0 {
		return 0, errCLAndTE
	}
	if r.minor == 0 {
		r.keepAlive = r.connKeepAlive && !r.connClose
		r.expectContinue = false // RFC 9110 10.1.1: ignore for HTTP/1.0
	} else {
		r.keepAlive = !r.connClose
	}
	return next, nil
}

func incomplete(n, maxHeader int) *httpError {
	if n >= maxHeader {
		return errHeaderTooLarge
	}
	return errIncomplete
}

// lineEnd returns the position after the line terminator at b[i] (LF or
// CRLF), errIncomplete when the terminator has not fully arrived, or bad
// when b[i] does not start one.
func lineEnd(b []byte, i int, bad *httpError) (int, *httpError) {
	switch b[i] {
	case '\n':
		return i + 1, nil
	case '\r':
		if i+1 == len(b) {
			return 0, errIncomplete
		}
		if b[i+1] == '\n' {
			return i + 2, nil
		}
	}
	return 0, bad
}

// parseRequestLine parses the request line starting at b[pos] and returns
// the position after it.
//
// It stays whole, past ~80 lines: it is one forward pass over the line
// (method, target, version, then the target's form), each part starting
// where the one before ended and the query split at the first '?' seen
// while scanning the target. Split, those positions would travel between
// functions on the server's per-request path, and the checks would no
// longer read in the order the bytes arrive.
func (r *request) parseRequestLine(b []byte, pos int) (int, *httpError) {
	i := pos
	for i < len(b) && http1.Tchar[b[i]] {
		i++
	}
	if i == len(b) {
		return 0, errIncomplete
	}
	if b[i] != ' ' || i == pos {
		if i == pos || b[i] == '\r' || b[i] == '\n' {
			return 0, errBadRequestLine
		}
		return 0, errBadMethod
	}
	r.method = b[pos:i]
	ts := i + 1
	q := -1 // position of the first '?'
	j := ts
	for ; j < len(b); j++ {
		c := b[j]
		if c <= ' ' || c == 0x7f {
			break
		}
		if c == '?' && q < 0 {
			q = j
		}
	}
	if j == len(b) {
		return 0, errIncomplete
	}
	if b[j] != ' ' {
		if b[j] == '\r' || b[j] == '\n' {
			return 0, errBadRequestLine
		}
		return 0, errBadTarget
	}
	if j == ts {
		return 0, errBadRequestLine
	}
	target := b[ts:j]
	vs := j + 1
	e := vs
	for e < len(b) && b[e] != '\r' && b[e] != '\n' && e-vs <= 8 {
		e++
	}
	if e == len(b) {
		return 0, errIncomplete
	}
	version := b[vs:e]
	if len(version) != 8 || string(version[:5]) != "HTTP/" || version[6] != '.' ||
		!isDigit(version[5]) || !isDigit(version[7]) {
		return 0, errBadVersion
	}
	next, err := lineEnd(b, e, errBadVersion)
	if err != nil {
		return 0, err
	}
	if version[5] != '1' {
		return 0, errVersion
	}
	r.minor = 1
	if version[7] == '0' {
		r.minor = 0
	}
	r.target = target
	switch {
	case target[0] == '/':
		r.path = target
	case len(target) == 1 && target[0] == '*':
		r.path = target
		return next, nil
	case hasPrefixFold(target, "http://") || hasPrefixFold(target, "https://"):
		// absolute-form: drop scheme and authority.
		rest := target[bytes.IndexByte(target, ':')+3:]
		k := bytes.IndexAny(rest, "/?")
		if k < 0 {
			r.path = slashPath
			return next, nil
		}
		if rest[k] == '?' {
			r.path = slashPath
			r.query = rest[k+1:]
			return next, nil
		}
		r.path = rest[k:]
	default:
		return 0, errBadTarget
	}
	if q >= 0 {
		r.query = b[q+1 : j]
		r.path = r.path[:len(r.path)-(j-q)]
	}
	return next, nil
}

// isCtlOrEOL marks bytes that end or invalidate a field value: CTLs other
// than HTAB (so including CR and LF) and DEL.
var isCtlOrEOL = func() (t [256]bool) {
	for c := 0; c < ' '; c++ {
		t[c] = c != '\t'
	}
	t[0x7f] = true
	return t
}()

// parseHeaderLine parses the header field line starting at b[pos] and
// returns the position after it.
func (r *request) parseHeaderLine(b []byte, pos int) (int, *httpError) {
	i := pos
	for i < len(b) && http1.Tchar[b[i]] {
		i++
	}
	if i == len(b) {
		return 0, errIncomplete
	}
	if b[i] != ':' || i == pos {
		return 0, errBadHeader
	}
	j := i + 1
	for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	vs := j
	for j < len(b) && !isCtlOrEOL[b[j]] {
		j++
	}
	if j == len(b) {
		return 0, errIncomplete
	}
	next, err := lineEnd(b, j, errBadHeader)
	if err != nil {
		return 0, err
	}
	return next, r.header(b[pos:i], http1.TrimOWS(b[vs:j]))
}

// header records the fields the server acts on.
func (r *request) header(name, value []byte) *httpError {
	switch len(name) {
	case len("content-length"):
		if !http1.EqualFoldLower(name, "content-length") {
			return nil
		}
		n, ok := parseContentLength(value)
		if !ok {
			return errBadCL
		}
		if r.contentLength >= 0 && r.contentLength != n {
			return errDupCL
		}
		r.contentLength = n
	case len("transfer-encoding"):
		if !http1.EqualFoldLower(name, "transfer-encoding") {
			return nil
		}
		if !http1.EqualFoldLower(value, "chunked") {
			return errUnsupportedTE
		}
		r.chunked = true
	case len("connection"):
		if !http1.EqualFoldLower(name, "connection") {
			return nil
		}
		for len(value) > 0 {
			var tok []byte
			if i := bytes.IndexByte(value, ','); i >= 0 {
				tok, value = http1.TrimOWS(value[:i]), value[i+1:]
			} else {
				tok, value = http1.TrimOWS(value), nil
			}
			if http1.EqualFoldLower(tok, "close") {
				r.connClose = true
			} else if http1.EqualFoldLower(tok, "keep-alive") {
				r.connKeepAlive = true
			}
		}
	case len("expect"):
		if !http1.EqualFoldLower(name, "expect") {
			return nil
		}
		if !http1.EqualFoldLower(value, "100-continue") {
			return errExpect
		}
		r.expectContinue = true
	case len("content-type"):
		if http1.EqualFoldLower(name, "content-type") {
			r.contentType = value
		}
	}
	return nil
}

// parseContentLength accepts 1 to 18 decimal digits.
func parseContentLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseChunkSize parses a chunk-size line: hex digits, optional whitespace
// and optional chunk extensions (ignored).
func parseChunkSize(line []byte) (int64, bool) {
	var n int64
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		var d byte
		switch {
		case isDigit(c):
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			goto done
		}
		if i >= 15 {
			return 0, false
		}
		n = n<<4 | int64(d)
	}
done:
	if i == 0 {
		return 0, false
	}
	rest := http1.TrimOWS(line[i:])
	if len(rest) > 0 && rest[0] != ';' {
		return 0, false
	}
	for _, c := range rest {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return 0, false
		}
	}
	return n, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func hasPrefixFold(b []byte, s string) bool {
	return len(b) >= len(s) && http1.EqualFoldLower(b[:len(s)], s)
}
