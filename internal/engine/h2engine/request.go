package h2engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/hail-loadgen/hail/internal/engine"
)

// template is one request variant turned from its HTTP/1.1 wire form (as
// every engine.Requests builds it) into what an HTTP/2 or HTTP/3 round
// tripper takes. Requests are converted once per distinct variant: each
// stream keeps the last few and recognises them by their bytes.
type template struct {
	raw []byte        // the wire bytes it was made from (a private copy)
	req *http.Request // method, URL, Host, headers; Body unset (made on first use: request)
	// reqOnce makes req on first use: a run's static templates are shared
	// by all its streams (staticTemplates).
	reqOnce sync.Once
	reqErr  error
	method  string
	scheme  string
	body    []byte
	clen    int64 // the body's length: its own, or (the head alone) a shared one's
	head    bool
	block   []byte // the HTTP/2 HEADERS block, made on first use, for a body of clen
	base    []byte // the block's fields but content-length
	grpc    bool   // a gRPC call (content-type application/grpc): see grpc.go
	msgs    int64  // a gRPC call's request messages
	// pre and post are the wire head around its Content-Length line
	// (post ends with the empty line): a request whose head differs from
	// this one's only in that line's value is this template with its own
	// body (match), so a templated body costs no conversion.
	pre, post []byte
	cl        bool // the head has a Content-Length line
}

// hopHeaders are HTTP/1 connection-specific headers: HTTP/2 and HTTP/3 forbid them.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Content-Length", "Te"}

// parseTemplate converts an encoded HTTP/1.x request for scheme. The
// template keeps a private copy of raw, and its body is a part of that copy.
func parseTemplate(raw []byte, scheme string) (*template, error) {
	return parse(append([]byte(nil), raw...), scheme)
}

// parse converts raw, which the template then holds (it must not change):
// by reading it directly (fast) when it is a request as hail's builders
// write them, with net/http otherwise.
func parse(raw []byte, scheme string) (*template, error) {
	if tp, ok := parseFast(raw, scheme); ok {
		return tp, nil
	}
	return parseHTTP(raw, scheme)
}

// request is the template's request as net/http has it (the HTTP/3
// engine's round tripper takes one), made on first use.
func (tp *template) request() (*http.Request, error) {
	tp.reqOnce.Do(func() {
		if tp.req != nil {
			return
		}
		full, err := parseHTTP(tp.raw, tp.scheme)
		if err != nil {
			tp.reqErr = err
			return
		}
		tp.req = full.req
	})
	return tp.req, tp.reqErr
}

// parseHTTP converts raw with net/http's request reader.
func parseHTTP(raw []byte, scheme string) (*template, error) {
	r, err := http.ReadRequest(bufio.NewReaderSize(bytes.NewReader(raw), max(len(raw), 16)))
	if err != nil {
		return nil, fmt.Errorf("request does not parse: %v", err)
	}
	var body []byte
	end := bytes.Index(raw, []byte("\r\n\r\n")) + 4
	switch {
	case end == len(raw) && r.ContentLength > 0 && len(r.TransferEncoding) == 0:
		// The head alone: its shared body (engine.SharedBody) follows
		// with each request.
	case r.ContentLength == int64(len(raw)-end) && len(r.TransferEncoding) == 0:
		body = raw[end:len(raw):len(raw)] // the body as sent: no copy of a large one
	default:
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, fmt.Errorf("request body: %v", err)
		}
	}
	target := r.RequestURI
	var u *url.URL
	if strings.Contains(target, "://") {
		u, err = url.Parse(target)
	} else {
		u, err = url.ParseRequestURI(target)
		if err == nil {
			u.Scheme, u.Host = scheme, r.Host
		}
	}
	if err != nil {
		return nil, fmt.Errorf("request target %q: %v", target, err)
	}
	grpc := strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
	trailers := slices.Contains(r.Header.Values("Te"), "trailers")
	for _, h := range hopHeaders {
		r.Header.Del(h)
	}
	if trailers { // the one TE HTTP/2 allows (gRPC requires it), sent once however many TE lines name it
		r.Header.Set("Te", "trailers")
	}
	length := int64(len(body))
	if body == nil && end == len(raw) {
		length = max(r.ContentLength, 0) // a shared body's
	}
	req := &http.Request{
		Method: r.Method, URL: u, Host: r.Host, Header: r.Header,
		Proto: "HTTP/2.0", ProtoMajor: 2, ContentLength: length,
	}
	if length == 0 {
		req.Body = http.NoBody
	}
	tp := &template{raw: raw, req: req, method: r.Method, scheme: scheme, body: body, clen: length, head: r.Method == http.MethodHead, grpc: grpc}
	if grpc {
		tp.msgs = countFrames(body)
	}
	tp.setHead(end)
	return tp, nil
}

// setHead notes the wire head around its Content-Length line (match);
// end is where the body starts.
func (tp *template) setHead(end int) {
	raw := tp.raw
	tp.pre, tp.post = raw[:end], nil
	if i := bytes.Index(raw[:end], []byte("\r\nContent-Length: ")); i >= 0 {
		line := i + 2
		if j := bytes.Index(raw[line:end], []byte("\r\n")); j >= 0 {
			tp.pre, tp.post, tp.cl = raw[:line], raw[line+j+2:end], true
		}
	}
}

// match reports whether raw is tp's request with a body of its own (its
// head the same but for the Content-Length value), and returns that body.
// headOnly says raw is the head alone, its body a shared one
// (engine.SharedBody): it matches tp's head, and the body is nil.
func (tp *template) match(raw []byte, headOnly bool) ([]byte, bool) {
	if !bytes.HasPrefix(raw, tp.pre) {
		return nil, false
	}
	rest := raw[len(tp.pre):]
	n := 0
	if tp.cl {
		var ok bool
		if rest, ok = bytes.CutPrefix(rest, []byte("Content-Length: ")); !ok {
			return nil, false
		}
		i := 0
		for ; i < len(rest) && i < 10 && rest[i] >= '0' && rest[i] <= '9'; i++ {
			n = n*10 + int(rest[i]-'0')
		}
		if i == 0 || !bytes.HasPrefix(rest[i:], []byte("\r\n")) {
			return nil, false
		}
		rest = rest[i+2:]
	}
	if !bytes.HasPrefix(rest, tp.post) {
		return nil, false
	}
	switch body := rest[len(tp.post):]; {
	case headOnly:
		return nil, len(body) == 0
	case len(body) == n:
		return body, true
	}
	return nil, false
}

// templates caches a stream's converted variants. Shared are a run's
// static variants, converted once for every stream before it starts (read
// only: their HEADERS blocks are made then, their http.Request once, by
// whichever stream needs it first); engine.Static's Next(hit)
// returns Variants[hit%len], so the template for a request is found at that
// index and confirmed by identity (a redirect hop's request is not).
type templates struct {
	scheme string
	shared []*template
	list   []*template
	next   int // round-robin slot to replace when full
}

const maxTemplates = 16

// maxShared bounds the static variants converted ahead: a -Z file of a
// million lines is converted as requests need it, in each stream's cache,
// rather than held whole as templates.
const maxShared = 1024

// staticTemplates converts the static variants of j's requests, if its
// requests are static and at most maxShared; nil otherwise, or if one does
// not convert (each stream then reports the error for its own requests).
func staticTemplates(j *engine.Job) []*template {
	st, ok := j.NewRequests(0).(*engine.Static)
	if !ok || len(st.Variants) > maxShared {
		return nil
	}
	shared := make([]*template, len(st.Variants))
	for i, raw := range st.Variants {
		tp, err := parse(raw, j.URL.Scheme)
		if err != nil || len(raw) == 0 {
			return nil
		}
		tp.h2Block()
		shared[i] = tp
	}
	return shared
}

// get returns the template for raw, the request of hit, converting it the
// first time its head is seen, and the request's body (part of raw; nil
// when headOnly: raw is the head of a request whose body is shared).
func (t *templates) get(raw []byte, hit uint64, headOnly bool) (*template, []byte, error) {
	if n := uint64(len(t.shared)); n > 0 {
		if tp := t.shared[hit%n]; len(tp.raw) == len(raw) && unsafe.SliceData(tp.raw) == unsafe.SliceData(raw) {
			return tp, tp.body, nil
		}
	}
	for _, tp := range t.list {
		if body, ok := tp.match(raw, headOnly); ok {
			return tp, body, nil
		}
	}
	tp, err := parseTemplate(raw, t.scheme)
	if err != nil {
		return nil, nil, err
	}
	if len(t.list) < maxTemplates {
		t.list = append(t.list, tp)
	} else {
		t.list[t.next] = tp
		t.next = (t.next + 1) % maxTemplates
	}
	return tp, tp.body, nil
}
