package http1

// A response's body: how its header section delimits it, its bytes, and
// the chunk-size lines of a chunked one.

import "math"

// endHeaders ends a header section: it loops back for the final response
// after a 1xx one, and otherwise decides how the body is delimited.
func (p *Parser) endHeaders() {
	if p.Status < 200 {
		p.state = stStatus
		return
	}
	if p.Proto10 {
		p.KeepAlive = p.connKeep && !p.connClose
	} else {
		p.KeepAlive = !p.connClose
	}
	if p.te != teNone {
		// Transfer-Encoding overrides Content-Length (RFC 9112, 6.3).
		p.ContentLength = -1
		p.Chunked = p.te == teChunked
	}
	if p.Sink != nil && p.Status < 300 && p.Status != 204 && !p.head && (p.EventStream || p.Sink.All()) {
		p.streaming = true
		p.Sink.StreamHead()
	}
	switch {
	case p.head || p.Status == 204 || p.Status == 304:
		p.state = stDone
	case p.te == teChunked:
		p.state = stChunkSize
	case p.te == teNone && p.ContentLength == 0:
		p.state = stDone
	case p.te == teNone && p.ContentLength > 0:
		p.remaining = p.ContentLength
		p.state = stBodyLength
	default:
		p.KeepAlive = false
		p.state = stBodyClose
	}
}

// body accounts for decoded body bytes b and captures what BodyLimit asks.
func (p *Parser) body(b []byte) {
	p.BodyBytes += int64(len(b))
	p.WireBytes += int64(len(b))
	if p.streaming {
		p.Sink.StreamBody(b)
	}
	if room := p.BodyLimit - len(p.Body); room > 0 {
		if len(b) > room {
			b = b[:room]
		}
		p.Body = append(p.Body, b...)
	}
}

// chunkSize parses a chunk-size line: hex digits, optional whitespace and
// optional chunk extensions (";..."), which are ignored.
func (p *Parser) chunkSize(line []byte) error {
	if len(line) > maxChunkLineBytes {
		return ErrBadChunk
	}
	s := stripEOL(line)
	var size int64
	i := 0
	for ; i < len(s); i++ {
		d := unhex(s[i])
		if d < 0 {
			break
		}
		if size > math.MaxInt64>>4 {
			return ErrBadChunk
		}
		size = size<<4 | d
	}
	if i == 0 {
		return ErrBadChunk
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && s[i] != ';' {
		return ErrBadChunk
	}
	if size == 0 {
		p.state = stTrailer
	} else {
		p.remaining = size
		p.state = stChunkData
	}
	return nil
}
