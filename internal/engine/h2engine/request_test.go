package h2engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// A request whose head differs from a cached one only in its
// Content-Length value is that template with its own body: a templated
// body (a scenario's gRPC data, a JSON body) converts its head once.
func TestTemplatesBodyOfItsOwn(t *testing.T) {
	t.Parallel()
	raw := func(path, body string) []byte {
		return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: a\r\nContent-Type: application/grpc\r\nContent-Length: %d\r\nX-B: 1\r\n\r\n%s", path, len(body), body)
	}
	var ts templates
	ts.scheme = "http"
	a, body, err := ts.get(raw("/p", "abc"), 0, false)
	if err != nil || string(body) != "abc" {
		t.Fatalf("first: %v %q", err, body)
	}
	for _, b := range []string{"defgh", "", "x", string(make([]byte, 1000))} {
		tp, body, err := ts.get(raw("/p", b), 1, false)
		if err != nil || tp != a || string(body) != b {
			t.Errorf("body %d bytes: template %p (want %p), body %d bytes, %v", len(b), tp, a, len(body), err)
		}
	}
	if tp, _, _ := ts.get(raw("/q", "abc"), 2, false); tp == a {
		t.Error("another path matched the first template")
	}
	// A Content-Length that does not give the body's length is no match.
	bad := []byte("POST /p HTTP/1.1\r\nHost: a\r\nContent-Type: application/grpc\r\nContent-Length: 9\r\nX-B: 1\r\n\r\nabc")
	if _, ok := a.match(bad, false); ok {
		t.Error("a Content-Length of 9 with 3 bytes matched")
	}
	if len(ts.list) != 2 {
		t.Errorf("%d templates cached, want 2", len(ts.list))
	}
	// The HEADERS block carries each request's own content-length (a
	// plain POST: gRPC sends none).
	plain := []byte("POST /j HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}")
	tp, _, _ := ts.get(plain, 3, false)
	want := tp.h2Block()
	if got := tp.appendBlock(nil, 12345); string(got[:len(tp.base)]) != string(want[:len(tp.base)]) || string(got[len(got)-5:]) != "12345" {
		t.Errorf("block for 12345 bytes: %q (template's %q)", got, want)
	}
	// The head alone of a request whose body is shared (engine.SharedBody):
	// converted once, its block carrying the shared body's length, and
	// found again by its head.
	head := []byte("PUT /big HTTP/1.1\r\nHost: a\r\nContent-Length: 1048576\r\n\r\n")
	big, body, err := ts.get(head, 4, true)
	if err != nil || body != nil || big.clen != 1<<20 {
		t.Fatalf("head of a shared body: body %q, length %d, err %v", body, big.clen, err)
	}
	if f := fieldsOf(t, big.h2Block()); !slices.Contains(f, "content-length: 1048576") {
		t.Errorf("shared body's block: %q", f)
	}
	if again, body, _ := ts.get(head, 5, true); again != big || body != nil {
		t.Errorf("the same head again: template %p (want %p), body %q", again, big, body)
	}
}

// fieldsOf decodes a HEADERS block into its fields, sorted, as
// "name: value" lines.
func fieldsOf(t testing.TB, block []byte) []string {
	t.Helper()
	var out []string
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) { out = append(out, f.Name+": "+f.Value) })
	if _, err := dec.Write(block); err != nil {
		t.Fatalf("block does not decode: %v", err)
	}
	sort.Strings(out)
	return out
}

// sameAsHTTP checks the fast conversion of raw against net/http's: the
// same header fields, body, method and kind.
func sameAsHTTP(t testing.TB, raw []byte, scheme string) bool {
	t.Helper()
	fast, ok := parseFast(raw, scheme)
	if !ok {
		return false
	}
	slow, err := parseHTTP(raw, scheme)
	if err != nil {
		t.Fatalf("%q: converted directly, refused by net/http: %v", raw, err)
	}
	f, s := fieldsOf(t, fast.h2Block()), fieldsOf(t, slow.h2Block())
	if strings.Join(f, "\n") != strings.Join(s, "\n") || string(fast.body) != string(slow.body) ||
		fast.method != slow.method || fast.grpc != slow.grpc || fast.head != slow.head || fast.msgs != slow.msgs {
		t.Fatalf("%q:\n direct  %q %q %s grpc %v\n net/http %q %q %s grpc %v", raw, f, fast.body, fast.method, fast.grpc, s, slow.body, slow.method, slow.grpc)
	}
	return true
}

// Requests as hail's builders write them convert directly, to what
// net/http's reading makes of them; anything else is left to net/http.
func TestParseFast(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw    string
		direct bool
	}{
		{"GET / HTTP/1.1\r\nHost: a:1\r\nUser-Agent: hail/1\r\n\r\n", true},
		{"POST /items?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", true},
		{"POST /p.S/M HTTP/1.1\r\nHost: a\r\nContent-Type: application/grpc\r\nTE: trailers\r\ngrpc-timeout: 2S\r\nX-Tenant: acme\r\nContent-Length: 5\r\n\r\n\x00\x00\x00\x00\x00", true},
		{"DELETE /items/1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\nKeep-Alive: 5\r\nTE: gzip\r\n\r\n", true},
		{"POST /p.S/M HTTP/1.1\r\nHost: a\r\nTE:\r\nTE: trailers\r\nte: trailers\r\nContent-Length: 0\r\n\r\n", true}, // one te: trailers
		{"HEAD /x HTTP/1.0\r\nHost: a\r\nX-Empty:\r\n\r\n", true},
		{"PATCH /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", true},
		{"GET http://a/x HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", false},
		{"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\nabc", false},
		{"GET /x HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", false},
		{"GET /x HTTP/1.1\r\n\r\n", false},
	} {
		if got := sameAsHTTP(t, []byte(tc.raw), "http"); got != tc.direct {
			t.Errorf("%q: converted directly %v, want %v", tc.raw, got, tc.direct)
		}
	}
}

// FuzzParseFast: whatever converts directly, net/http reads the same.
func FuzzParseFast(f *testing.F) {
	f.Add([]byte("POST /p.S/M HTTP/1.1\r\nHost: a\r\nContent-Type: application/grpc\r\nTE: trailers\r\nContent-Length: 5\r\n\r\n\x00\x00\x00\x00\x00"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a:1\r\nUser-Agent: hail/1\r\nConnection: close\r\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameAsHTTP(t, raw, "https")
	})
}
