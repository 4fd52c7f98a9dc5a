package http1

import (
	"bytes"
)

const (
	// DefaultMaxHeaderBytes is the header size limit used when
	// Parser.MaxHeaderBytes is 0.
	DefaultMaxHeaderBytes = 64 << 10

	// maxChunkLineBytes bounds a chunk-size line (size plus extensions).
	maxChunkLineBytes = 4096

	// maxBodyPrealloc bounds the Body buffer that Reset allocates up front.
	maxBodyPrealloc = 64 << 10
)

// parseState is where the parser is in the response.
type parseState uint8

const (
	stStatus       parseState = iota // expecting a status line (zero value)
	stHeader                         // expecting a header line or the empty line
	stBodyLength                     // reading a Content-Length body
	stBodyClose                      // reading a body delimited by connection close
	stChunkSize                      // expecting a chunk-size line
	stChunkData                      // reading chunk data
	stChunkDataEnd                   // expecting the CRLF after chunk data
	stTrailer                        // expecting a trailer line or the final empty line
	stDone                           // response complete
)

// Parser is an incremental HTTP/1.x response parser that works on byte
// slices owned by the caller and allocates nothing per response once Location
// and Body have grown to their working size.
//
// Use one Parser per connection: call Reset before each response, then Feed
// it the bytes read from the connection until it reports done, and EOF if
// the peer closes the connection first. A zero Parser is ready for a
// response to a request other than HEAD.
type Parser struct {
	// MaxHeaderBytes limits the status line and headers of a response,
	// 1xx responses included, and separately its trailers. 0 means
	// DefaultMaxHeaderBytes (64 KiB). Exceeding it is ErrHeaderTooLarge.
	MaxHeaderBytes int

	// BodyLimit, if positive, is how many decoded body bytes are copied
	// into Body (for captures). 0 keeps none.
	BodyLimit int

	// WantLocation asks for the Location header value to be copied into
	// Location.
	WantLocation bool
	// WantHeaders names (in lower case) headers whose values are copied into
	// HeaderValues, index for index, for captures. Empty costs nothing.
	WantHeaders []string

	// Status is the status code, valid once the status line is parsed. It
	// holds an interim 1xx code until the final status line arrives.
	Status int

	// Proto10 reports that the server answered with HTTP/1.0.
	Proto10 bool

	// KeepAlive reports that the connection may be reused for the next
	// request. It is false on "Connection: close", on an HTTP/1.0 response
	// without "Connection: keep-alive" and on a body delimited by
	// connection close. It says nothing about what the request asked for.
	KeepAlive bool

	// HeaderBytes counts the bytes of the status line and headers,
	// including the terminating empty line and any 1xx responses before the
	// final one.
	HeaderBytes int

	// BodyBytes counts the decoded body bytes: for a chunked body, chunk
	// data only.
	BodyBytes int64

	// WireBytes counts all bytes consumed for this response: 1xx
	// responses, headers, body with its chunk framing and trailers.
	WireBytes int64

	// Location is the value of the Location header when WantLocation is
	// set, otherwise empty. Its array is reused across responses.
	Location []byte
	// HeaderValues holds the final response's value of each WantHeaders
	// name (empty when absent; the last one when repeated). The arrays are
	// reused from response to response.
	HeaderValues [][]byte

	// Body holds the first BodyLimit decoded body bytes. Its array is
	// reused across responses.
	Body []byte

	// Chunked reports that the final transfer coding is chunked.
	Chunked bool

	// ContentLength is the Content-Length header value, or -1 if absent or
	// overridden by Transfer-Encoding. For HEAD, 204 and 304 responses it is
	// the advertised length, not what was read.
	ContentLength int64

	// Sink, if set, receives the body of every 2xx response that is a
	// stream: its Content-Type is text/event-stream, or Sink.All says every
	// one is. Set it once; it costs nothing for other responses.
	Sink StreamSink
	// EventStream reports that the final response's Content-Type is
	// text/event-stream.
	EventStream bool
	streaming   bool // the body goes to Sink

	state     parseState
	head      bool // response to a HEAD request: no body
	fed       bool // some byte was fed since Reset
	connClose bool // Connection: close seen
	connKeep  bool // Connection: keep-alive seen
	te        transferCoding
	remaining int64 // bytes left in the Content-Length body or current chunk
	trailer   int   // trailer bytes consumed
	err       error // sticky error
}

// Reset prepares p for the next response on the connection. head reports
// that the request was HEAD, whose response has no body whatever its
// headers say. The settings (MaxHeaderBytes, BodyLimit, WantLocation) and
// the arrays of Location and Body are kept; every result is cleared.
func (p *Parser) Reset(head bool) {
	// Field by field rather than *p = Parser{...}: it is several times
	// faster, and Reset runs once per response.
	p.Status = 0
	p.Proto10 = false
	p.KeepAlive = false
	p.HeaderBytes = 0
	p.BodyBytes = 0
	p.WireBytes = 0
	p.Location = p.Location[:0]
	p.Body = p.Body[:0]
	p.clearWanted()
	p.Chunked = false
	p.ContentLength = -1
	p.EventStream = false
	p.streaming = false
	p.state = stStatus
	p.head = head
	p.fed = false
	p.connClose = false
	p.connKeep = false
	p.te = teNone
	p.remaining = 0
	p.trailer = 0
	if p.err != nil {
		p.err = nil
	}
	if p.BodyLimit > 0 && cap(p.Body) < p.BodyLimit {
		p.Body = make([]byte, 0, min(p.BodyLimit, maxBodyPrealloc))
	}
}

// Feed parses the response from b, which must start with the bytes not
// consumed by the previous call, and returns how many bytes it consumed.
//
// Status, header, chunk-size and trailer lines are consumed only when
// complete (ended by LF, with or without CR); body bytes are consumed as
// they come. If the response is not done and n < len(b), the caller keeps
// b[n:] at the front of its buffer, appends more bytes from the connection
// and calls Feed again with all of them. When done, b[n:] belongs to the
// next response (pipelining).
//
// On error, n counts the bytes consumed before the offending line. After an
// error the parser keeps returning it; the connection is unusable.
// Calling Feed after done returns (0, true, nil) until Reset.
func (p *Parser) Feed(b []byte) (n int, done bool, err error) {
	if p.err != nil {
		return 0, false, p.err
	}
	if len(b) > 0 {
		p.fed = true
	}
	for {
		switch p.state {
		case stDone:
			return n, true, nil

		case stBodyLength, stChunkData:
			rest := b[n:]
			if len(rest) == 0 {
				return n, false, nil
			}
			k := len(rest)
			if int64(k) > p.remaining {
				k = int(p.remaining)
			}
			p.body(rest[:k])
			n += k
			p.remaining -= int64(k)
			if p.remaining > 0 {
				return n, false, nil
			}
			if p.state == stBodyLength {
				p.state = stDone
			} else {
				p.state = stChunkDataEnd
			}

		case stBodyClose:
			p.body(b[n:])
			return len(b), false, nil

		default: // a line state
			rest := b[n:]
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				if err := p.partialLine(rest); err != nil {
					p.err = err
					return n, false, err
				}
				return n, false, nil
			}
			line := rest[:i+1]
			if err := p.line(line); err != nil {
				p.err = err
				return n, false, err
			}
			n += len(line)
			p.WireBytes += int64(len(line))
		}
	}
}

// EOF tells p that the peer closed the connection, after every byte read
// was fed. It completes a body delimited by connection close. Otherwise, if
// the response is not done, it returns ErrClosedBeforeResponse when no byte
// was fed since Reset and ErrUnexpectedEOF when some were.
func (p *Parser) EOF() (done bool, err error) {
	if p.err != nil {
		return false, p.err
	}
	switch p.state {
	case stDone:
		return true, nil
	case stBodyClose:
		p.state = stDone
		return true, nil
	}
	if p.fed {
		p.err = ErrUnexpectedEOF
	} else {
		p.err = ErrClosedBeforeResponse
	}
	return false, p.err
}

// maxHeader returns the effective header size limit.
func (p *Parser) maxHeader() int {
	if p.MaxHeaderBytes > 0 {
		return p.MaxHeaderBytes
	}
	return DefaultMaxHeaderBytes
}

// partialLine checks rest, the start of a line whose LF has not arrived
// yet, so that an oversized or already hopeless line fails now instead of
// waiting for more bytes.
//
// For the result not to depend on how the input is split, an error must be
// reported as soon as the bytes that prove it have been seen, and when the
// visible bytes prove several, the one proved by the earliest byte wins,
// whether the line is complete or not. A line's size limit is exceeded at a
// byte at or before its LF, so checking the size before parsing a complete
// line respects that order; only the status line, whose "HTTP/1." prefix is
// checked early, needs more care (statusEarly).
func (p *Parser) partialLine(rest []byte) error {
	switch p.state {
	case stStatus:
		return p.statusEarly(rest)
	case stHeader:
		if p.HeaderBytes+len(rest) > p.maxHeader() {
			return ErrHeaderTooLarge
		}
	case stTrailer:
		if p.trailer+len(rest) > p.maxHeader() {
			return ErrHeaderTooLarge
		}
	case stChunkSize:
		if len(rest) > maxChunkLineBytes {
			return ErrBadChunk
		}
		if len(rest) > 0 && unhex(rest[0]) < 0 {
			return ErrBadChunk
		}
	case stChunkDataEnd:
		if len(rest) >= 2 || len(rest) == 1 && rest[0] != '\r' {
			return ErrBadChunk
		}
	}
	return nil
}

// line handles one complete line, LF included.
func (p *Parser) line(line []byte) error {
	switch p.state {
	case stStatus, stHeader:
		if p.state == stStatus {
			if err := p.statusEarly(line); err != nil {
				return err
			}
		}
		if p.HeaderBytes+len(line) > p.maxHeader() {
			return ErrHeaderTooLarge
		}
		var err error
		if p.state == stStatus {
			err = p.statusLine(stripEOL(line))
		} else {
			err = p.header(stripEOL(line))
		}
		if err != nil {
			return err
		}
		p.HeaderBytes += len(line)
		return nil
	case stChunkSize:
		return p.chunkSize(line)
	case stChunkDataEnd:
		if len(stripEOL(line)) != 0 {
			return ErrBadChunk
		}
		p.state = stChunkSize
		return nil
	case stTrailer:
		if p.trailer+len(line) > p.maxHeader() {
			return ErrHeaderTooLarge
		}
		p.trailer += len(line)
		s := stripEOL(line)
		if len(s) == 0 {
			p.state = stDone
			return nil
		}
		if headerColon(s) < 0 {
			return ErrMalformedHeader
		}
		return nil
	}
	panic("http1: line in non-line state")
}

// stripEOL removes the LF, and a CR before it, that end line.
func stripEOL(line []byte) []byte {
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line
}

// statusEarly reports the errors that a prefix of a status line (LF
// included or not) already proves: a byte that breaks the "HTTP/1." prefix
// or a byte beyond the header size limit, whichever comes first.
func (p *Parser) statusEarly(b []byte) error {
	limit := p.maxHeader() - p.HeaderBytes // index of the first byte too many
	for i := 0; i < len(b) && i < len("HTTP/1."); i++ {
		if b[i] != "HTTP/1."[i] {
			if i < limit {
				return ErrMalformedStatusLine
			}
			break
		}
	}
	if len(b) > limit {
		return ErrHeaderTooLarge
	}
	return nil
}

// statusLine parses "HTTP/1.x SP 3DIGIT [SP reason]" (without EOL) and
// starts a new message: headers of an earlier 1xx response are forgotten.
func (p *Parser) statusLine(s []byte) error {
	if len(s) < 12 || string(s[:7]) != "HTTP/1." || !isDigit(s[7]) || s[8] != ' ' ||
		!isDigit(s[9]) || !isDigit(s[10]) || !isDigit(s[11]) || len(s) > 12 && s[12] != ' ' {
		return ErrMalformedStatusLine
	}
	code := int(s[9]-'0')*100 + int(s[10]-'0')*10 + int(s[11]-'0')
	if code < 100 {
		return ErrMalformedStatusLine
	}
	p.Status = code
	p.Proto10 = s[7] == '0'
	if code == 101 {
		return ErrUnexpectedUpgrade
	}
	p.ContentLength = -1
	p.Chunked = false
	p.EventStream = false
	p.connClose = false
	p.connKeep = false
	p.te = teNone
	p.Location = p.Location[:0]
	p.clearWanted()
	p.state = stHeader
	return nil
}

// clearWanted empties the captured header values, sizing HeaderValues to
// WantHeaders.
func (p *Parser) clearWanted() {
	if len(p.WantHeaders) == 0 {
		return
	}
	if len(p.HeaderValues) != len(p.WantHeaders) {
		p.HeaderValues = make([][]byte, len(p.WantHeaders))
	}
	for i := range p.HeaderValues {
		p.HeaderValues[i] = p.HeaderValues[i][:0]
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// StreamSink receives a streaming response's body as the parser decodes it
// (a stream.Meter).
type StreamSink interface {
	// All reports whether every 2xx response is a stream, whatever its
	// Content-Type.
	All() bool
	// StreamHead is called when the head of a streaming response has been
	// parsed, before any of its body.
	StreamHead()
	// StreamBody receives decoded body bytes: chunk data without its
	// framing.
	StreamBody(b []byte)
}
