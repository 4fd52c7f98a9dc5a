package h2engine

import (
	"fmt"
	"testing"
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
	a, body, err := ts.get(raw("/p", "abc"), 0)
	if err != nil || string(body) != "abc" {
		t.Fatalf("first: %v %q", err, body)
	}
	for _, b := range []string{"defgh", "", "x", string(make([]byte, 1000))} {
		tp, body, err := ts.get(raw("/p", b), 1)
		if err != nil || tp != a || string(body) != b {
			t.Errorf("body %d bytes: template %p (want %p), body %d bytes, %v", len(b), tp, a, len(body), err)
		}
	}
	if tp, _, _ := ts.get(raw("/q", "abc"), 2); tp == a {
		t.Error("another path matched the first template")
	}
	// A Content-Length that does not give the body's length is no match.
	bad := []byte("POST /p HTTP/1.1\r\nHost: a\r\nContent-Type: application/grpc\r\nContent-Length: 9\r\nX-B: 1\r\n\r\nabc")
	if _, ok := a.match(bad); ok {
		t.Error("a Content-Length of 9 with 3 bytes matched")
	}
	if len(ts.list) != 2 {
		t.Errorf("%d templates cached, want 2", len(ts.list))
	}
	// The HEADERS block carries each request's own content-length (a
	// plain POST: gRPC sends none).
	plain := []byte("POST /j HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}")
	tp, _, _ := ts.get(plain, 3)
	want := tp.h2Block()
	if got := tp.appendBlock(nil, 12345); string(got[:len(tp.base)]) != string(want[:len(tp.base)]) || string(got[len(got)-5:]) != "12345" {
		t.Errorf("block for 12345 bytes: %q (template's %q)", got, want)
	}
}
