// Package redirect holds hail's one set of redirect rules, shared by every
// engine: which responses redirect, what the next request is (RFC 9110
// §15.4: method and body), which of its headers survive (credentials never
// cross to another origin), and whether the next hop stays on the origin
// the connection belongs to.
//
// Engines keep requests as HTTP/1.1 wire bytes (internal/http1 encodes
// them once), so the next request is made by rewriting the previous one's
// bytes: its own body (a -Z line, a scenario's templated body) and headers
// go on, and --host survives a hop that stays on the origin.
package redirect

import (
	"bytes"
	"errors"
	"net/url"

	"github.com/hail-loadgen/hail/internal/http1"
)

// Is reports whether status is a redirect that hail follows (301, 302,
// 303, 307, 308). 300 and 304 are results.
func Is(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// ErrBadLocation is a Location that is not an http:// or https:// URL.
var ErrBadLocation = errors.New("redirect to a Location that is not an http(s) URL")

// Hop is the next request of a redirect chain.
type Hop struct {
	// URL is where it goes (the Location resolved against the current URL).
	URL *url.URL
	// Method is its method.
	Method string
	// KeepBody is false when the method changed to GET: the body and the
	// headers that describe it are dropped.
	KeepBody bool
	// SameOrigin is true when URL has the current URL's scheme, host and
	// port: the hop may reuse the connection, and the request keeps its
	// Host header and credentials.
	SameOrigin bool
}

// Next computes the hop that a response with status and location asks for,
// after a request with method to cur.
//
// RFC 9110 §15.4: 303 turns every method but HEAD into GET; 301 and 302 turn
// POST into GET (as browsers, curl and Go's net/http do); 307 and 308 keep
// method and body.
func Next(cur *url.URL, status int, method string, location []byte) (Hop, error) {
	next, err := cur.Parse(string(location))
	if err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
		return Hop{}, ErrBadLocation
	}
	next.Fragment, next.RawFragment = "", ""
	h := Hop{URL: next, Method: method, KeepBody: true, SameOrigin: SameOrigin(cur, next)}
	if (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST") {
		h.Method, h.KeepBody = "GET", false
	}
	return h, nil
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (an omitted port is the scheme's default).
func SameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && a.Hostname() == b.Hostname() && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// crossOrigin are the headers dropped when a hop leaves the origin: the
// credentials (curl and Go's net/http drop them too).
var crossOrigin = []string{"authorization", "cookie", "proxy-authorization"}

// bodyHeaders describe the body; they are dropped with it.
var bodyHeaders = []string{"content-length", "content-type", "content-encoding", "content-language",
	"content-location", "transfer-encoding"}

// ErrNotRequest is request bytes that do not parse as hail's own encoding.
var ErrNotRequest = errors.New("redirect: the request to rewrite is not an HTTP/1 request")

// Rewrite appends to dst the HTTP/1.1 request that hop asks for, made from
// req (the wire bytes of the request that was redirected): the method and
// target of hop, req's headers and body, except that
//   - a hop to another origin sets Host to the new host and drops
//     Authorization, Cookie and Proxy-Authorization;
//   - a hop that turns the method into GET drops the body and the headers
//     that describe it.
//
// A request in absolute form (sent through a proxy) keeps that form. dst
// must not overlap req.
func Rewrite(dst, req []byte, hop Hop) ([]byte, error) {
	lineEnd := bytes.Index(req, []byte("\r\n"))
	headEnd := bytes.Index(req, []byte("\r\n\r\n"))
	if lineEnd < 0 || headEnd < lineEnd {
		return dst, ErrNotRequest
	}
	line := req[:lineEnd]
	sp1 := bytes.IndexByte(line, ' ')
	sp2 := bytes.LastIndexByte(line, ' ')
	if sp1 <= 0 || sp2 <= sp1 {
		return dst, ErrNotRequest
	}
	absolute := bytes.Contains(line[sp1+1:sp2], []byte("://"))
	dst = append(dst, hop.Method...)
	dst = append(dst, ' ')
	if absolute {
		u := *hop.URL
		u.User = nil
		dst = append(dst, u.String()...)
	} else {
		dst = append(dst, hop.URL.RequestURI()...)
	}
	dst = append(dst, line[sp2:]...)
	dst = append(dst, "\r\n"...)
	body := req[headEnd+4:]
	if !hop.KeepBody {
		body = nil
	}
	for rest := req[lineEnd+2 : headEnd+2]; len(rest) > 0; {
		i := bytes.Index(rest, []byte("\r\n"))
		if i < 0 {
			return dst, ErrNotRequest
		}
		field := rest[:i+2]
		rest = rest[i+2:]
		colon := bytes.IndexByte(field, ':')
		if colon <= 0 {
			return dst, ErrNotRequest
		}
		name := field[:colon]
		switch {
		case http1.EqualFoldLower(name, "host") && !hop.SameOrigin:
			dst = append(dst, "Host: "...)
			dst = http1.AppendHost(dst, hop.URL.Host) // an IPv6 zone stays on this side, as on the first request
			dst = append(dst, "\r\n"...)
			continue
		case !hop.SameOrigin && anyFold(name, crossOrigin):
			continue
		case !hop.KeepBody && anyFold(name, bodyHeaders):
			continue
		}
		dst = append(dst, field...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, body...), nil
}

// Method returns the method of an encoded request ("" if it has none).
func Method(req []byte) string {
	if i := bytes.IndexByte(req, ' '); i > 0 {
		return methodString(req[:i])
	}
	return ""
}

// methodString avoids an allocation for the common methods.
func methodString(m []byte) string {
	for _, s := range [...]string{"GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		if string(m) == s {
			return s
		}
	}
	return string(m)
}

func anyFold(name []byte, lower []string) bool {
	for _, l := range lower {
		if http1.EqualFoldLower(name, l) {
			return true
		}
	}
	return false
}

// URLOf is the URL of an encoded request sent to base's origin: its target
// in absolute form as it is, in origin form resolved against base.
func URLOf(base *url.URL, req []byte) *url.URL {
	line := req
	if i := bytes.Index(req, []byte("\r\n")); i >= 0 {
		line = req[:i]
	}
	sp1 := bytes.IndexByte(line, ' ')
	sp2 := bytes.LastIndexByte(line, ' ')
	if sp1 < 0 || sp2 <= sp1 {
		return base
	}
	u, err := base.Parse(string(line[sp1+1 : sp2]))
	if err != nil {
		return base
	}
	return u
}
