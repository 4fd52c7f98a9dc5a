package http1

import (
	"fmt"
	"strconv"
	"strings"
)

// RequestSpec describes one request; AppendRequest turns it into wire bytes
// once, before the run, and Validate checks it first.
type RequestSpec struct {
	// Method is the request method, "GET" if empty.
	Method string

	// Target is the request-target in origin form (path and query), "/" if
	// empty. "*" is accepted for OPTIONS.
	Target string

	// Host is the Host header value. It is required for HTTP/1.1 unless
	// Header has a Host entry.
	Host string

	// Proto is "HTTP/1.1" (the default when empty) or "HTTP/1.0".
	Proto string

	// Header holds extra header fields, sent in order with names as given.
	// A Host or Content-Length entry replaces the generated one.
	Header [][2]string

	// Body is sent after the header, framed by Content-Length.
	Body []byte

	// Close sends "Connection: close".
	Close bool

	// KeepAlive10 sends "Connection: keep-alive" on an HTTP/1.0 request
	// (unless Close is set); HTTP/1.0 connections close by default.
	KeepAlive10 bool
}

// Defaults filled in for empty RequestSpec fields.
const (
	defaultMethod = "GET"
	defaultTarget = "/"
	proto11       = "HTTP/1.1"
	proto10       = "HTTP/1.0"
)

func (r *RequestSpec) method() string {
	if r.Method == "" {
		return defaultMethod
	}
	return r.Method
}

func (r *RequestSpec) target() string {
	if r.Target == "" {
		return defaultTarget
	}
	return r.Target
}

func (r *RequestSpec) proto() string {
	if r.Proto == "" {
		return proto11
	}
	return r.Proto
}

// sendsContentLength reports whether a Content-Length header is generated
// (when Header has none): when there is a body, or the method is one that
// normally has one, so that an empty POST says "Content-Length: 0".
func (r *RequestSpec) sendsContentLength() bool {
	switch r.method() {
	case "POST", "PUT", "PATCH":
		return true
	}
	return len(r.Body) > 0
}

// AppendRequest appends the wire form of r to dst and returns the extended
// slice. It writes the request line, Host (unless Header has one), the
// entries of Header in order, Content-Length (when there is a body or the
// method is POST, PUT or PATCH, unless Header has one), Connection when
// Close or KeepAlive10 asks for it, the empty line and the body.
//
// AppendRequest does not check r: call Validate first. It allocates only
// if dst lacks capacity.
func AppendRequest(dst []byte, r *RequestSpec) []byte {
	return append(AppendHead(dst, r), r.Body...)
}

// AppendHead appends what AppendRequest writes before the body: the
// request line and header, through the empty line, Content-Length
// counting r.Body. A large body is then sent apart, from where it is
// (engine.SharedBody), never copied into each request.
func AppendHead(dst []byte, r *RequestSpec) []byte {
	proto := r.proto()
	dst = append(dst, r.method()...)
	dst = append(dst, ' ')
	dst = append(dst, r.target()...)
	dst = append(dst, ' ')
	dst = append(dst, proto...)
	dst = append(dst, "\r\n"...)

	userHost, userLength := false, false
	for i := range r.Header {
		name := r.Header[i][0]
		userHost = userHost || equalFoldLowerString(name, "host")
		userLength = userLength || equalFoldLowerString(name, "content-length")
	}
	if !userHost && (r.Host != "" || proto != proto10) {
		dst = append(dst, "Host: "...)
		dst = AppendHost(dst, r.Host)
		dst = append(dst, "\r\n"...)
	}
	for i := range r.Header {
		dst = append(dst, r.Header[i][0]...)
		dst = append(dst, ": "...)
		dst = append(dst, r.Header[i][1]...)
		dst = append(dst, "\r\n"...)
	}
	if !userLength && r.sendsContentLength() {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(r.Body)), 10)
		dst = append(dst, "\r\n"...)
	}
	if r.Close {
		dst = append(dst, "Connection: close\r\n"...)
	} else if r.KeepAlive10 && proto == proto10 {
		dst = append(dst, "Connection: keep-alive\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// Validate reports the first problem that would make AppendRequest write a
// broken or ambiguous request: CR, LF, NUL or other control bytes in the
// method, target, host or a header; a method or header name that is not a
// token; a target not in origin form or with a bad percent-escape; a
// missing Host for HTTP/1.1; an unknown Proto; a duplicate Host or
// Content-Length header; a Content-Length header that disagrees with Body;
// a Transfer-Encoding header. The message names the offending field and
// value, to be shown to the user as one line.
func (r *RequestSpec) Validate() error {
	method := r.method()
	if i := badByte(method, isTokenByte); i >= 0 {
		return fmt.Errorf("http1: invalid method %q: %s (a method is a token: letters, digits and !#$%%&'*+-.^_`|~)",
			method, describeByte(method, i))
	}

	proto := r.proto()
	if proto != proto11 && proto != proto10 {
		return fmt.Errorf("http1: invalid protocol %q: must be %s or %s", proto, proto11, proto10)
	}

	if err := validateTarget(method, r.target()); err != nil {
		return err
	}

	if i := badByte(r.Host, isHostByte); i >= 0 {
		return fmt.Errorf("http1: invalid host %q: %s", r.Host, describeByte(r.Host, i))
	}

	hosts, lengths := 0, 0
	for i, h := range r.Header {
		name, value := h[0], h[1]
		if name == "" {
			return fmt.Errorf("http1: empty header name (header %d, value %q)", i+1, value)
		}
		if j := badByte(name, isTokenByte); j >= 0 {
			return fmt.Errorf("http1: invalid header name %q: %s (a header name is a token: letters, digits and !#$%%&'*+-.^_`|~)",
				name, describeByte(name, j))
		}
		if j := badByte(value, isValueByte); j >= 0 {
			return fmt.Errorf("http1: invalid value for header %q: %q: %s", name, value, describeByte(value, j))
		}
		switch {
		case equalFoldLowerString(name, "host"):
			hosts++
			if hosts > 1 {
				return fmt.Errorf("http1: duplicate header %q: %q", name, value)
			}
		case equalFoldLowerString(name, "content-length"):
			lengths++
			if lengths > 1 {
				return fmt.Errorf("http1: duplicate header %q: %q", name, value)
			}
			v := strings.Trim(value, " \t")
			n, err := strconv.ParseUint(v, 10, 63)
			if err != nil || v[0] == '+' {
				return fmt.Errorf("http1: invalid value for header %q: %q is not a decimal number", name, value)
			}
			if n != uint64(len(r.Body)) {
				return fmt.Errorf("http1: header %q: %q does not match the body length %d", name, value, len(r.Body))
			}
		case equalFoldLowerString(name, "transfer-encoding"):
			return fmt.Errorf("http1: header %q: %q is not supported: the body is always sent with Content-Length", name, value)
		}
	}
	if proto == proto11 && r.Host == "" && hosts == 0 {
		return fmt.Errorf("http1: missing host: %s requires a Host header", proto11)
	}
	return nil
}

// validateTarget checks an origin-form request-target ("/path?query"), or
// "*" for OPTIONS.
func validateTarget(method, target string) error {
	if target == "*" {
		if method != "OPTIONS" {
			return fmt.Errorf("http1: invalid request target %q: \"*\" is only valid with OPTIONS, not %s", target, method)
		}
		return nil
	}
	if target[0] != '/' {
		return fmt.Errorf("http1: invalid request target %q: must start with \"/\"", target)
	}
	if i := badByte(target, isTargetByte); i >= 0 {
		return fmt.Errorf("http1: invalid request target %q: %s (percent-encode it)", target, describeByte(target, i))
	}
	path := target
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '%' && (i+2 >= len(path) || unhex(path[i+1]) < 0 || unhex(path[i+2]) < 0) {
			return fmt.Errorf("http1: invalid request target %q: bad percent-escape at offset %d (write %%25 for a literal %%)", target, i)
		}
	}
	return nil
}

func isTokenByte(c byte) bool { return Tchar[c] }

// isTargetByte accepts visible ASCII: anything else must be percent-encoded.
func isTargetByte(c byte) bool { return 0x21 <= c && c <= 0x7e }

// isHostByte accepts visible ASCII except the URI delimiters that cannot be
// in a host[:port].
func isHostByte(c byte) bool {
	return isTargetByte(c) && c != '/' && c != '?' && c != '#' && c != '@' && c != '\\'
}

// isValueByte accepts field-content: anything but control bytes, HTAB
// excepted.
func isValueByte(c byte) bool { return c == '\t' || c >= 0x20 && c != 0x7f }

// badByte returns the index of the first byte of s that ok rejects, or -1.
func badByte(s string, ok func(byte) bool) int {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return i
		}
	}
	return -1
}

// describeByte names the byte s[i] for an error message.
func describeByte(s string, i int) string {
	c := s[i]
	var name string
	switch c {
	case '\r':
		name = "CR"
	case '\n':
		name = "LF"
	case 0:
		name = "NUL"
	case '\t':
		name = "TAB"
	case ' ':
		name = "space"
	default:
		if c > 0x20 && c < 0x7f {
			name = fmt.Sprintf("%q", c)
		} else {
			name = fmt.Sprintf("byte 0x%02x", c)
		}
	}
	return fmt.Sprintf("%s at offset %d is not allowed", name, i)
}
