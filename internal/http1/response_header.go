package http1

// A response's header fields: the line's syntax and the fields the parser
// acts on (Connection, Transfer-Encoding, Content-Length, Location and the
// captured ones).

import "bytes"

// transferCoding summarizes the Transfer-Encoding header.
type transferCoding uint8

const (
	teNone    transferCoding = iota // absent, or only "identity"
	teChunked                       // the final coding is chunked
	teOther                         // the final coding is not chunked: body runs to close
)

// headerColon returns the index of the colon that ends the field name of
// a header line (without EOL), or -1 if the line is malformed: it starts with
// whitespace (obsolete line folding), has no colon, an empty name or a name
// that is not a token (whitespace before the colon included).
func headerColon(s []byte) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !Tchar[c] {
			if c == ':' && i > 0 {
				return i
			}
			return -1
		}
	}
	return -1
}

// header handles one header line (without EOL); an empty one ends the
// header section.
func (p *Parser) header(s []byte) error {
	if len(s) == 0 {
		p.endHeaders()
		return nil
	}
	colon := headerColon(s)
	if colon < 0 {
		return ErrMalformedHeader
	}
	name := s[:colon]
	if len(p.HeaderValues) != len(p.WantHeaders) {
		p.clearWanted()
	}
	for i, want := range p.WantHeaders {
		if len(want) == colon && EqualFoldLower(name, want) {
			p.HeaderValues[i] = append(p.HeaderValues[i][:0], TrimOWS(s[colon+1:])...)
		}
	}
	// Names are compared in their usual spelling first: a plain memory
	// compare, faster than folding case byte by byte.
	switch colon {
	case len("content-type"):
		if string(name) == "Content-Type" || EqualFoldLower(name, "content-type") {
			p.EventStream = IsEventStream(TrimOWS(s[colon+1:]))
		}
	case len("location"):
		if p.WantLocation && (string(name) == "Location" || EqualFoldLower(name, "location")) {
			p.Location = append(p.Location[:0], TrimOWS(s[colon+1:])...)
		}
	case len("connection"):
		if string(name) == "Connection" || EqualFoldLower(name, "connection") {
			p.connection(s[colon+1:])
		}
	case len("content-length"):
		if string(name) == "Content-Length" || EqualFoldLower(name, "content-length") {
			return p.contentLength(s[colon+1:])
		}
	case len("transfer-encoding"):
		if string(name) == "Transfer-Encoding" || EqualFoldLower(name, "transfer-encoding") {
			p.transferEncoding(s[colon+1:])
		}
	}
	return nil
}

// nextElem splits the first element off a comma-separated list and trims it.
func nextElem(v []byte) (elem, rest []byte) {
	if i := bytes.IndexByte(v, ','); i >= 0 {
		return TrimOWS(v[:i]), v[i+1:]
	}
	return TrimOWS(v), nil
}

// connection records the close and keep-alive options of a Connection header.
func (p *Parser) connection(v []byte) {
	for len(v) > 0 {
		var e []byte
		e, v = nextElem(v)
		if EqualFoldLower(e, "close") {
			p.connClose = true
		} else if EqualFoldLower(e, "keep-alive") {
			p.connKeep = true
		}
	}
}

// transferEncoding records whether the final transfer coding is chunked.
// Codings accumulate across Transfer-Encoding headers; "identity" and
// empty elements are ignored.
func (p *Parser) transferEncoding(v []byte) {
	for len(v) > 0 {
		var e []byte
		e, v = nextElem(v)
		switch {
		case len(e) == 0 || EqualFoldLower(e, "identity"):
		case EqualFoldLower(e, "chunked"):
			p.te = teChunked
		default:
			p.te = teOther
		}
	}
}

// contentLength parses a Content-Length value: one decimal number, or a
// comma-separated list of equal ones, and equal to any earlier value.
// Leading zeros are allowed (RFC 9110's 1*DIGIT): 007 is 7.
func (p *Parser) contentLength(v []byte) error {
	for {
		var e []byte
		e, v = nextElem(v)
		if len(e) == 0 {
			return ErrBadContentLength
		}
		for len(e) > 1 && e[0] == '0' {
			e = e[1:]
		}
		if len(e) > 18 { // 18 digits cannot overflow int64
			return ErrBadContentLength
		}
		var n int64
		for _, c := range e {
			if !isDigit(c) {
				return ErrBadContentLength
			}
			n = n*10 + int64(c-'0')
		}
		if p.ContentLength >= 0 && p.ContentLength != n {
			return ErrBadContentLength
		}
		p.ContentLength = n
		if v == nil {
			return nil
		}
	}
}

// IsEventStream reports whether a Content-Type value is text/event-stream
// (any case, parameters allowed).
func IsEventStream(v []byte) bool {
	const t = "text/event-stream"
	if len(v) < len(t) || !EqualFoldLower(v[:len(t)], t) {
		return false
	}
	rest := v[len(t):]
	return len(rest) == 0 || rest[0] == ';' || rest[0] == ' ' || rest[0] == '\t'
}
