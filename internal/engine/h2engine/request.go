package h2engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unsafe"

	"github.com/hail-loadgen/hail/internal/engine"
)

// template is one request variant turned from its HTTP/1.1 wire form (as
// every engine.Requests builds it) into what an HTTP/2 or HTTP/3 round
// tripper takes. Requests are converted once per distinct variant: each
// stream keeps the last few and recognises them by their bytes.
type template struct {
	raw   []byte        // the wire bytes it was made from (a private copy)
	req   *http.Request // method, URL, Host, headers; Body unset
	body  []byte
	head  bool
	block []byte // the HTTP/2 HEADERS block, made on first use
	grpc  bool   // a gRPC call (content-type application/grpc): see grpc.go
	msgs  int64  // a gRPC call's request messages
}

// hopHeaders are HTTP/1 connection-specific headers: HTTP/2 and HTTP/3 forbid them.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Content-Length", "Te"}

// parseTemplate converts an encoded HTTP/1.x request for scheme. The
// template keeps a private copy of raw, and its body is a part of that copy.
func parseTemplate(raw []byte, scheme string) (*template, error) {
	return parse(append([]byte(nil), raw...), scheme)
}

// parse converts raw, which the template then holds (it must not change).
func parse(raw []byte, scheme string) (*template, error) {
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
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
	te := r.Header.Get("Te")
	for _, h := range hopHeaders {
		r.Header.Del(h)
	}
	if te == "trailers" { // the one TE HTTP/2 allows; gRPC requires it
		r.Header.Set("Te", te)
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
	tp := &template{raw: raw, req: req, body: body, head: r.Method == http.MethodHead, grpc: grpc}
	if grpc {
		tp.msgs = countFrames(body)
	}
	return tp, nil
}

// templates caches a stream's converted variants. Shared are a run's
// static variants, converted once for every stream before it starts (read
// only: their HEADERS blocks are made then); engine.Static's Next(hit)
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
// first time it is seen.
func (t *templates) get(raw []byte, hit uint64) (*template, error) {
	if n := uint64(len(t.shared)); n > 0 {
		if tp := t.shared[hit%n]; len(tp.raw) == len(raw) && unsafe.SliceData(tp.raw) == unsafe.SliceData(raw) {
			return tp, nil
		}
	}
	for _, tp := range t.list {
		if len(tp.raw) == len(raw) && bytes.Equal(tp.raw, raw) {
			return tp, nil
		}
	}
	tp, err := parseTemplate(raw, t.scheme)
	if err != nil {
		return nil, err
	}
	if len(t.list) < maxTemplates {
		t.list = append(t.list, tp)
	} else {
		t.list[t.next] = tp
		t.next = (t.next + 1) % maxTemplates
	}
	return tp, nil
}
