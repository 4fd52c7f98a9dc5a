package http1

import "bytes"

// The server's side of HTTP/1.1: a request head parsed where it arrived,
// for hail's two built-in servers (internal/serve, internal/llmserve).

// RequestError is a request's protocol error and the status a server
// answers it with (0: it closes the connection without an answer). Every
// instance is a package-level value, so that reporting one does not
// allocate; a server may declare its own for what it reads after the head.
type RequestError struct {
	// Status is the response's status code; Msg the reason, one line.
	Status int
	Msg    string
}

// Error returns Msg.
func (e *RequestError) Error() string { return e.Msg }

// The errors of ParseRequestHead.
var (
	// ErrRequestIncomplete: the buffer does not hold the whole head yet.
	ErrRequestIncomplete = &RequestError{0, "incomplete request head"}
	// ErrRequestHeadTooLarge: the head is longer than the server takes.
	ErrRequestHeadTooLarge = &RequestError{431, "request header fields too large"}
	// ErrRequestLine to ErrRequestExpect: a malformed or unsupported head.
	ErrRequestLine             = &RequestError{400, "malformed request line"}
	ErrRequestMethod           = &RequestError{400, "malformed method"}
	ErrRequestTarget           = &RequestError{400, "malformed request target"}
	ErrRequestVersionSyntax    = &RequestError{400, "malformed HTTP version"}
	ErrRequestVersion          = &RequestError{505, "unsupported HTTP version"}
	ErrRequestHeader           = &RequestError{400, "malformed header field"}
	ErrRequestObsFold          = &RequestError{400, "obsolete header line folding"}
	ErrRequestContentLength    = &RequestError{400, "malformed Content-Length"}
	ErrRequestDupContentLength = &RequestError{400, "conflicting Content-Length headers"}
	ErrRequestCLAndTE          = &RequestError{400, "both Content-Length and Transfer-Encoding"}
	ErrRequestTE               = &RequestError{501, "unsupported Transfer-Encoding"}
	ErrRequestExpect           = &RequestError{417, "unsupported expectation"}
)

// RequestHead is a parsed request head. Its byte slices point into the
// buffer the head was parsed from and are valid only as long as it is.
type RequestHead struct {
	// Method is the request's method; Target its request-target as sent,
	// Path the target without its query (and without the scheme and
	// authority of the absolute form), Query the query without '?' (nil
	// when there is none); Head the request line and header lines without
	// the final empty line.
	Method []byte
	Target []byte
	Path   []byte
	Query  []byte
	Head   []byte

	// Minor is the version's minor number: 0 or 1 (1.2 counts as 1.1).
	Minor int
	// ContentLength is the Content-Length (-1 when absent); Chunked says
	// Transfer-Encoding: chunked.
	ContentLength int64
	Chunked       bool
	// ConnClose and ConnKeepAlive are the Connection header's tokens;
	// KeepAlive says the connection may stay open after the response.
	ConnClose     bool
	ConnKeepAlive bool
	KeepAlive     bool
	// ExpectContinue is Expect: 100-continue on an HTTP/1.1 request.
	ExpectContinue bool
	// ContentType is the Content-Type header's value.
	ContentType []byte
}

var slashPath = []byte("/")

// ParseRequestHead parses the request head at the start of b. It returns the number
// of bytes the head occupies (including leading empty lines and the final
// empty line). When b does not yet hold a complete head it returns
// ErrRequestIncomplete, or ErrRequestHeadTooLarge once b holds maxHeader bytes or more.
// Lines end in CRLF or a bare LF. It never allocates, and it scans each byte
// about once, validating as it goes.
func ParseRequestHead(b []byte, maxHeader int, r *RequestHead) (int, *RequestError) {
	*r = RequestHead{ContentLength: -1}
	pos := 0
	// RFC 9112 2.2: ignore empty lines before the request line.
	for pos < len(b) && (b[pos] == '\n' || b[pos] == '\r') {
		if b[pos] == '\r' {
			if pos+1 == len(b) {
				return 0, ErrRequestIncomplete
			}
			if b[pos+1] != '\n' {
				return 0, ErrRequestLine
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
			return 0, ErrRequestHeadTooLarge
		}
		if pos >= len(b) {
			err = ErrRequestIncomplete
			break
		}
		c := b[pos]
		if c == '\r' || c == '\n' {
			next, err = lineEnd(b, pos, ErrRequestHeader)
			break // the empty line ending the head
		}
		if c == ' ' || c == '\t' {
			return 0, ErrRequestObsFold
		}
		next, err = r.parseHeaderLine(b, pos)
	}
	if err != nil {
		if err == ErrRequestIncomplete {
			return 0, incomplete(len(b), maxHeader)
		}
		return 0, err
	}
	if next > maxHeader {
		return 0, ErrRequestHeadTooLarge
	}
	r.Head = b[start:pos]
	if r.Chunked && r.ContentLength >= 0 {
		return 0, ErrRequestCLAndTE
	}
	if r.Minor == 0 {
		r.KeepAlive = r.ConnKeepAlive && !r.ConnClose
		r.ExpectContinue = false // RFC 9110 10.1.1: ignore for HTTP/1.0
	} else {
		r.KeepAlive = !r.ConnClose
	}
	return next, nil
}

func incomplete(n, maxHeader int) *RequestError {
	if n >= maxHeader {
		return ErrRequestHeadTooLarge
	}
	return ErrRequestIncomplete
}

// lineEnd returns the position after the line terminator at b[i] (LF or
// CRLF), ErrRequestIncomplete when the terminator has not fully arrived, or bad
// when b[i] does not start one.
func lineEnd(b []byte, i int, bad *RequestError) (int, *RequestError) {
	switch b[i] {
	case '\n':
		return i + 1, nil
	case '\r':
		if i+1 == len(b) {
			return 0, ErrRequestIncomplete
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
func (r *RequestHead) parseRequestLine(b []byte, pos int) (int, *RequestError) {
	i := pos
	for i < len(b) && Tchar[b[i]] {
		i++
	}
	if i == len(b) {
		return 0, ErrRequestIncomplete
	}
	if b[i] != ' ' || i == pos {
		if i == pos || b[i] == '\r' || b[i] == '\n' {
			return 0, ErrRequestLine
		}
		return 0, ErrRequestMethod
	}
	r.Method = b[pos:i]
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
		return 0, ErrRequestIncomplete
	}
	if b[j] != ' ' {
		if b[j] == '\r' || b[j] == '\n' {
			return 0, ErrRequestLine
		}
		return 0, ErrRequestTarget
	}
	if j == ts {
		return 0, ErrRequestLine
	}
	target := b[ts:j]
	vs := j + 1
	e := vs
	for e < len(b) && b[e] != '\r' && b[e] != '\n' && e-vs <= 8 {
		e++
	}
	if e == len(b) {
		return 0, ErrRequestIncomplete
	}
	version := b[vs:e]
	if len(version) != 8 || string(version[:5]) != "HTTP/" || version[6] != '.' ||
		!isDigit(version[5]) || !isDigit(version[7]) {
		return 0, ErrRequestVersionSyntax
	}
	next, err := lineEnd(b, e, ErrRequestVersionSyntax)
	if err != nil {
		return 0, err
	}
	if version[5] != '1' {
		return 0, ErrRequestVersion
	}
	r.Minor = 1
	if version[7] == '0' {
		r.Minor = 0
	}
	r.Target = target
	switch {
	case target[0] == '/':
		r.Path = target
	case len(target) == 1 && target[0] == '*':
		r.Path = target
		return next, nil
	case hasPrefixFold(target, "http://") || hasPrefixFold(target, "https://"):
		// absolute-form: drop scheme and authority.
		rest := target[bytes.IndexByte(target, ':')+3:]
		k := bytes.IndexAny(rest, "/?")
		if k < 0 {
			r.Path = slashPath
			return next, nil
		}
		if rest[k] == '?' {
			r.Path = slashPath
			r.Query = rest[k+1:]
			return next, nil
		}
		r.Path = rest[k:]
	default:
		return 0, ErrRequestTarget
	}
	if q >= 0 {
		r.Query = b[q+1 : j]
		r.Path = r.Path[:len(r.Path)-(j-q)]
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
func (r *RequestHead) parseHeaderLine(b []byte, pos int) (int, *RequestError) {
	i := pos
	for i < len(b) && Tchar[b[i]] {
		i++
	}
	if i == len(b) {
		return 0, ErrRequestIncomplete
	}
	if b[i] != ':' || i == pos {
		return 0, ErrRequestHeader
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
		return 0, ErrRequestIncomplete
	}
	next, err := lineEnd(b, j, ErrRequestHeader)
	if err != nil {
		return 0, err
	}
	return next, r.header(b[pos:i], TrimOWS(b[vs:j]))
}

// header records the fields the server acts on.
func (r *RequestHead) header(name, value []byte) *RequestError {
	switch len(name) {
	case len("content-length"):
		if !EqualFoldLower(name, "content-length") {
			return nil
		}
		n, ok := parseContentLength(value)
		if !ok {
			return ErrRequestContentLength
		}
		if r.ContentLength >= 0 && r.ContentLength != n {
			return ErrRequestDupContentLength
		}
		r.ContentLength = n
	case len("transfer-encoding"):
		if !EqualFoldLower(name, "transfer-encoding") {
			return nil
		}
		if !EqualFoldLower(value, "chunked") {
			return ErrRequestTE
		}
		r.Chunked = true
	case len("connection"):
		if !EqualFoldLower(name, "connection") {
			return nil
		}
		for len(value) > 0 {
			var tok []byte
			if i := bytes.IndexByte(value, ','); i >= 0 {
				tok, value = TrimOWS(value[:i]), value[i+1:]
			} else {
				tok, value = TrimOWS(value), nil
			}
			if EqualFoldLower(tok, "close") {
				r.ConnClose = true
			} else if EqualFoldLower(tok, "keep-alive") {
				r.ConnKeepAlive = true
			}
		}
	case len("expect"):
		if !EqualFoldLower(name, "expect") {
			return nil
		}
		if !EqualFoldLower(value, "100-continue") {
			return ErrRequestExpect
		}
		r.ExpectContinue = true
	case len("content-type"):
		if EqualFoldLower(name, "content-type") {
			r.ContentType = value
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

// ParseChunkSize parses a chunk-size line: hex digits, optional whitespace
// and optional chunk extensions (ignored).
func ParseChunkSize(line []byte) (int64, bool) {
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
	rest := TrimOWS(line[i:])
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

func hasPrefixFold(b []byte, s string) bool {
	return len(b) >= len(s) && EqualFoldLower(b[:len(s)], s)
}
