package h2engine

import (
	"bytes"
	"strconv"
)

// parseFast converts raw, a request as hail's builders write it (an
// origin-form target, a Host header, the body framed by Content-Length),
// straight into its HTTP/2 header block, without net/http's reader: a
// request whose head changes per call (a templated path or header)
// costs one pass over its bytes. ok is false for anything else (an
// absolute target, chunked framing, folded lines, a body without a length
// that matches), which parseHTTP reads.
func parseFast(raw []byte, scheme string) (*template, bool) {
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, false
	}
	head, body := raw[:end+2], raw[end+4:]
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	method, line, ok1 := bytes.Cut(line, []byte(" "))
	target, proto, ok2 := bytes.Cut(line, []byte(" "))
	if !ok1 || !ok2 || !isToken(method) || len(target) == 0 || target[0] != '/' || !plainTarget(target) ||
		!bytes.Equal(proto, []byte("HTTP/1.1")) && !bytes.Equal(proto, []byte("HTTP/1.0")) {
		return nil, false
	}
	tp := &template{raw: raw, method: methodName(method), scheme: scheme}
	b := make([]byte, 0, len(head)+16)
	switch tp.method {
	case "GET":
		b = append(b, 0x82)
	case "POST":
		b = append(b, 0x83)
	default:
		b = appendLiteralIndexed(b, 2, tp.method)
	}
	if scheme == "https" {
		b = append(b, 0x87)
	} else {
		b = append(b, 0x86)
	}
	at := len(b) // the authority goes here, once the Host line is found
	length, host, hasHost, hasTE := -1, []byte(nil), false, false
	var fields []byte
	for len(rest) > 0 {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok || !isToken(name) {
			return nil, false
		}
		value = bytes.Trim(value, " \t")
		for _, c := range value {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return nil, false
			}
		}
		switch {
		case eqFold(name, "host"):
			if hasHost {
				return nil, false
			}
			host, hasHost = value, true
		case eqFold(name, "content-length"):
			n, err := strconv.Atoi(string(value))
			if err != nil || length >= 0 {
				return nil, false
			}
			length = n
		case eqFold(name, "transfer-encoding"):
			return nil, false
		case eqFold(name, "te"):
			// The one TE HTTP/2 allows (gRPC requires it), sent once
			// however many TE lines name it.
			if !hasTE && bytes.Equal(value, []byte("trailers")) {
				fields, hasTE = appendField(fields, name, value), true
			}
		case eqFold(name, "connection"), eqFold(name, "keep-alive"), eqFold(name, "proxy-connection"), eqFold(name, "upgrade"):
		default:
			if eqFold(name, "content-type") && bytes.HasPrefix(value, []byte("application/grpc")) {
				tp.grpc = true
			}
			fields = appendField(fields, name, value)
		}
	}
	if !hasHost || len(body) != max(length, 0) {
		return nil, false
	}
	b = appendLiteralIndexed(b[:at], 1, string(host))
	if len(target) == 1 {
		b = append(b, 0x84)
	} else {
		b = appendInt(b, 4, 0x00, 4)
		b = appendInt(b, 7, 0x00, uint64(len(target)))
		b = append(b, target...)
	}
	tp.base = append(b, fields...)
	tp.body, tp.clen = body[:len(body):len(body)], int64(len(body))
	tp.block = tp.appendBlock(nil, len(tp.body))
	tp.head = tp.method == "HEAD"
	if tp.grpc {
		tp.msgs = countFrames(tp.body)
	}
	tp.setHead(end + 4)
	return tp, true
}

// isToken reports whether b is an HTTP token (a method, a header name).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0) {
			return false
		}
	}
	return true
}

// plainTarget reports whether a request target goes out as it is: a path
// of unreserved characters, sub-delimiters, : @ [ ] and valid percent
// escapes (what net/url keeps verbatim), and any visible query but '#'.
// Others are left to net/http, which escapes them.
func plainTarget(b []byte) bool {
	path, query, _ := bytes.Cut(b, []byte("?"))
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', bytes.IndexByte([]byte("-._~!$&'()*+,;=:@[]/"), c) >= 0:
		case c == '%' && i+2 < len(path) && isHex(path[i+1]) && isHex(path[i+2]):
			i += 2
		default:
			return false
		}
	}
	for _, c := range query {
		if c <= 0x20 || c >= 0x7f || c == '#' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// appendField appends a header field as a literal the server does not
// index, its name in lower case.
func appendField(b, name, value []byte) []byte {
	b = append(b, 0x00)
	b = appendInt(b, 7, 0x00, uint64(len(name)))
	for _, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	b = appendInt(b, 7, 0x00, uint64(len(value)))
	return append(b, value...)
}

// eqFold reports whether b is name (lower case) in any case.
func eqFold(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// methodName is the method as a string, the common ones without an
// allocation.
func methodName(m []byte) string {
	for _, known := range []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"} {
		if string(m) == known {
			return known
		}
	}
	return string(m)
}
