package llmserve

import (
	"bytes"

	"github.com/hail-loadgen/hail/internal/http1"
)

// httpError is a protocol error and the status it is answered with (0: the
// connection is simply closed). Instances are package-level values.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

var (
	errIncomplete    = &httpError{0, "incomplete"}
	errHeadTooLarge  = &httpError{431, "request header fields too large"}
	errRequestLine   = &httpError{400, "malformed request line"}
	errVersion       = &httpError{505, "HTTP version not supported: the mock speaks HTTP/1.x and HTTP/2 with prior knowledge"}
	errHeader        = &httpError{400, "malformed header field"}
	errContentLength = &httpError{400, "malformed or conflicting Content-Length"}
	errCLAndTE       = &httpError{400, "both Content-Length and Transfer-Encoding"}
	errTE            = &httpError{501, "unsupported Transfer-Encoding (only chunked)"}
	errExpect        = &httpError{417, "unsupported Expect (only 100-continue)"}
	errBodyTooLarge  = &httpError{413, "request body too large"}
	errChunk         = &httpError{400, "malformed chunked body"}
)

// maxHeadBytes caps a request head.
const maxHeadBytes = 64 << 10

// reqHead is a parsed request head; method and path point into the buffer
// it was parsed from.
type reqHead struct {
	method         []byte
	path           []byte // without the query
	minor          int    // HTTP/1.minor
	contentLength  int64  // -1: absent
	chunked        bool
	keepAlive      bool // the connection stays open after the response
	expectContinue bool
}

// parseHead parses the request head at the start of b and returns its
// length (through the empty line). errIncomplete means b does not hold all
// of it yet. Lines end in CRLF or a bare LF; empty lines before the request
// line are skipped (RFC 9112 2.2). It does not allocate.
func parseHead(b []byte, h *reqHead) (int, *httpError) {
	*h = reqHead{contentLength: -1}
	pos := 0
	for pos < len(b) && (b[pos] == '\r' || b[pos] == '\n') {
		pos++
	}
	line, next, err := headLine(b, pos)
	if err != nil {
		return 0, err
	}
	if err := h.requestLine(line); err != nil {
		return 0, err
	}
	connClose, connKeep := false, false
	for {
		pos = next
		if line, next, err = headLine(b, pos); err != nil {
			return 0, err
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			return 0, errHeader // obsolete line folding
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, errHeader
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		for _, c := range name {
			if !http1.Tchar[c] {
				return 0, errHeader
			}
		}
		for _, c := range value {
			if c < ' ' && c != '\t' || c == 0x7f {
				return 0, errHeader
			}
		}
		switch {
		case http1.EqualFoldLower(name, "content-length"):
			n, ok := parseDecimal(value)
			if !ok || h.contentLength >= 0 && h.contentLength != n {
				return 0, errContentLength
			}
			h.contentLength = n
		case http1.EqualFoldLower(name, "transfer-encoding"):
			if !http1.EqualFoldLower(value, "chunked") {
				return 0, errTE
			}
			h.chunked = true
		case http1.EqualFoldLower(name, "connection"):
			for rest := value; len(rest) > 0; {
				tok := rest
				if i := bytes.IndexByte(rest, ','); i >= 0 {
					tok, rest = rest[:i], rest[i+1:]
				} else {
					rest = nil
				}
				tok = trimOWS(tok)
				connClose = connClose || http1.EqualFoldLower(tok, "close")
				connKeep = connKeep || http1.EqualFoldLower(tok, "keep-alive")
			}
		case http1.EqualFoldLower(name, "expect"):
			if !http1.EqualFoldLower(value, "100-continue") {
				return 0, errExpect
			}
			h.expectContinue = h.minor == 1
		}
	}
	if h.chunked && h.contentLength >= 0 {
		return 0, errCLAndTE
	}
	h.keepAlive = !connClose && (h.minor == 1 || connKeep)
	return next, nil
}

// headLine returns the line starting at b[pos] without its line end, and
// the position after it.
func headLine(b []byte, pos int) (line []byte, next int, err *httpError) {
	i := bytes.IndexByte(b[pos:], '\n')
	if i < 0 {
		if len(b) >= maxHeadBytes {
			return nil, 0, errHeadTooLarge
		}
		return nil, 0, errIncomplete
	}
	if pos+i >= maxHeadBytes {
		return nil, 0, errHeadTooLarge
	}
	line = b[pos : pos+i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, pos + i + 1, nil
}

// requestLine parses METHOD SP TARGET SP HTTP/1.x.
func (h *reqHead) requestLine(line []byte) *httpError {
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return errRequestLine
	}
	h.method = line[:sp]
	for _, c := range h.method {
		if !http1.Tchar[c] {
			return errRequestLine
		}
	}
	rest := line[sp+1:]
	sp = bytes.IndexByte(rest, ' ')
	if sp <= 0 {
		return errRequestLine
	}
	target, version := rest[:sp], rest[sp+1:]
	for _, c := range target {
		if c <= ' ' || c == 0x7f {
			return errRequestLine
		}
	}
	if len(version) != 8 || string(version[:5]) != "HTTP/" || version[6] != '.' || !isDigit(version[5]) || !isDigit(version[7]) {
		return errRequestLine
	}
	if version[5] != '1' {
		return errVersion
	}
	h.minor = min(int(version[7]-'0'), 1)
	if hasPrefixFold(target, "http://") || hasPrefixFold(target, "https://") {
		rest := target[bytes.IndexByte(target, ':')+3:]
		if i := bytes.IndexAny(rest, "/?"); i >= 0 {
			target = rest[i:]
		} else {
			target = []byte("/")
		}
	}
	if q := bytes.IndexByte(target, '?'); q >= 0 {
		target = target[:q]
	}
	if len(target) == 0 {
		target = []byte("/")
	}
	if target[0] != '/' && string(target) != "*" {
		return errRequestLine
	}
	h.path = target
	return nil
}

// chunkedEnd finds the end of the chunked body at the start of b without
// copying it: it returns the body's wire length, or errIncomplete. Chunk
// extensions and trailer fields are skipped; a body that decodes to more
// than maxBody bytes is errBodyTooLarge.
func chunkedEnd(b []byte, maxBody int) (end int, err *httpError) {
	pos, size := 0, 0
	for {
		line, next, err := chunkLine(b, pos)
		if err != nil {
			return 0, err
		}
		n, ok := parseChunkSize(line)
		if !ok || n > int64(maxBody-size) {
			if ok {
				return 0, errBodyTooLarge
			}
			return 0, errChunk
		}
		pos = next
		if n == 0 {
			break
		}
		size += int(n)
		if len(b) < pos+int(n)+2 {
			return 0, errIncomplete
		}
		pos += int(n)
		if b[pos] == '\r' {
			pos++
		}
		if b[pos] != '\n' {
			return 0, errChunk
		}
		pos++
	}
	for trailers := 0; ; trailers++ { // trailer fields, then the empty line
		line, next, err := chunkLine(b, pos)
		if err != nil {
			return 0, err
		}
		pos = next
		if len(line) == 0 {
			return pos, nil
		}
		if trailers > 100 || bytes.IndexByte(line, ':') <= 0 {
			return 0, errChunk
		}
	}
}

// chunkLine is headLine for the lines of a chunked body (at most 4 KiB).
func chunkLine(b []byte, pos int) ([]byte, int, *httpError) {
	i := bytes.IndexByte(b[pos:min(len(b), pos+4096)], '\n')
	if i < 0 {
		if len(b)-pos >= 4096 {
			return nil, 0, errChunk
		}
		return nil, 0, errIncomplete
	}
	line := b[pos : pos+i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, pos + i + 1, nil
}

// decodeChunked appends the data of the complete chunked body b (checked
// by chunkedEnd) to dst.
func decodeChunked(dst, b []byte) []byte {
	pos := 0
	for {
		line, next, _ := chunkLine(b, pos)
		n, _ := parseChunkSize(line)
		if n == 0 {
			return dst
		}
		dst = append(dst, b[next:next+int(n)]...)
		pos = next + int(n)
		if b[pos] == '\r' {
			pos++
		}
		pos++
	}
}

// parseChunkSize parses a chunk-size line: hex digits, then optional
// whitespace and extensions.
func parseChunkSize(line []byte) (int64, bool) {
	var n int64
	i := 0
	for ; i < len(line) && i < 16; i++ {
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
		n = n<<4 | int64(d)
	}
done:
	if i == 0 || i == 16 {
		return 0, false
	}
	rest := trimOWS(line[i:])
	return n, len(rest) == 0 || rest[0] == ';'
}

// parseDecimal accepts 1 to 18 decimal digits.
func parseDecimal(b []byte) (int64, bool) {
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

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func hasPrefixFold(b []byte, lower string) bool {
	return len(b) >= len(lower) && http1.EqualFoldLower(b[:len(lower)], lower)
}
