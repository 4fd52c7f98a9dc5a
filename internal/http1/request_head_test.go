package http1

import (
	"strings"
	"testing"
)

func TestParseRequestHead(t *testing.T) {
	for _, tc := range []struct {
		name, in        string
		err             *RequestError
		method, path, q string
		minor           int
		cl              int64
		chunked, keep   bool
		expect          bool
		ctype, head     string
		n               int // 0: len(in)
	}{
		{name: "simple", in: "GET / HTTP/1.1\r\nHost: x\r\n\r\n", method: "GET", path: "/", minor: 1, cl: -1, keep: true,
			head: "GET / HTTP/1.1\r\nHost: x\r\n"},
		{name: "query", in: "GET /a/b?x=1&y=2 HTTP/1.1\r\n\r\n", method: "GET", path: "/a/b", q: "x=1&y=2", minor: 1, cl: -1, keep: true,
			head: "GET /a/b?x=1&y=2 HTTP/1.1\r\n"},
		{name: "empty query", in: "GET /? HTTP/1.1\r\n\r\n", method: "GET", path: "/", minor: 1, cl: -1, keep: true,
			head: "GET /? HTTP/1.1\r\n"},
		{name: "bare LF", in: "POST /echo HTTP/1.1\nContent-Length: 5\nContent-Type:  text/x \n\nhello", method: "POST", path: "/echo",
			minor: 1, cl: 5, keep: true, ctype: "text/x", head: "POST /echo HTTP/1.1\nContent-Length: 5\nContent-Type:  text/x \n", n: 62},
		{name: "leading CRLF", in: "\r\n\r\nGET / HTTP/1.0\r\n\r\n", method: "GET", path: "/", minor: 0, cl: -1, head: "GET / HTTP/1.0\r\n"},
		{name: "1.0 keep-alive", in: "GET / HTTP/1.0\r\nconnection: Keep-Alive\r\n\r\n", method: "GET", path: "/", minor: 0, cl: -1, keep: true,
			head: "GET / HTTP/1.0\r\nconnection: Keep-Alive\r\n"},
		{name: "close", in: "GET / HTTP/1.1\r\nConnection: foo, CLOSE\r\n\r\n", method: "GET", path: "/", minor: 1, cl: -1,
			head: "GET / HTTP/1.1\r\nConnection: foo, CLOSE\r\n"},
		{name: "chunked", in: "PUT /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\nExpect: 100-Continue\r\n\r\n", method: "PUT", path: "/x",
			minor: 1, cl: -1, chunked: true, keep: true, expect: true, head: "PUT /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\nExpect: 100-Continue\r\n"},
		{name: "1.0 ignores expect", in: "PUT /x HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", method: "PUT", path: "/x", cl: -1,
			head: "PUT /x HTTP/1.0\r\nExpect: 100-continue\r\n"},
		{name: "same CL twice", in: "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", method: "POST", path: "/", minor: 1,
			cl: 3, keep: true, head: "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n"},
		{name: "absolute", in: "GET HTTP://h:80/p?q HTTP/1.1\r\n\r\n", method: "GET", path: "/p", q: "q", minor: 1, cl: -1, keep: true,
			head: "GET HTTP://h:80/p?q HTTP/1.1\r\n"},
		{name: "absolute no path", in: "GET https://h?q=1 HTTP/1.1\r\n\r\n", method: "GET", path: "/", q: "q=1", minor: 1, cl: -1, keep: true,
			head: "GET https://h?q=1 HTTP/1.1\r\n"},
		{name: "asterisk", in: "OPTIONS * HTTP/1.1\r\n\r\n", method: "OPTIONS", path: "*", minor: 1, cl: -1, keep: true,
			head: "OPTIONS * HTTP/1.1\r\n"},
		{name: "HTTP/1.2 as 1.1", in: "GET / HTTP/1.2\r\n\r\n", method: "GET", path: "/", minor: 1, cl: -1, keep: true, head: "GET / HTTP/1.2\r\n"},

		{name: "incomplete", in: "GET / HTTP/1.1\r\nHost: x\r\n", err: ErrRequestIncomplete},
		{name: "empty", in: "", err: ErrRequestIncomplete},
		{name: "only CR", in: "\r", err: ErrRequestIncomplete},
		{name: "stray CR", in: "\rGET / HTTP/1.1\r\n\r\n", err: ErrRequestLine},
		{name: "two spaces", in: "GET  / HTTP/1.1\r\n\r\n", err: ErrRequestLine},
		{name: "lower http", in: "GET / http/1.1\r\n\r\n", err: ErrRequestVersionSyntax},
		{name: "HTTP/2", in: "GET / HTTP/2.0\r\n\r\n", err: ErrRequestVersion},
		{name: "trailing space", in: "GET / HTTP/1.1 \r\n\r\n", err: ErrRequestVersionSyntax},
		{name: "ctl in target", in: "GET /\x7f HTTP/1.1\r\n\r\n", err: ErrRequestTarget},
		{name: "empty header name", in: "GET / HTTP/1.1\r\n: x\r\n\r\n", err: ErrRequestHeader},
		{name: "CR in value", in: "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", err: ErrRequestHeader},
		{name: "huge CL", in: "GET / HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n\r\n", err: ErrRequestContentLength},
		{name: "empty CL", in: "GET / HTTP/1.1\r\nContent-Length:\r\n\r\n", err: ErrRequestContentLength},
		{name: "te list", in: "GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", err: ErrRequestTE},
		{name: "too large", in: "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 200) + "\r\n\r\n", err: ErrRequestHeadTooLarge},
		{name: "too large incomplete", in: "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 200), err: ErrRequestHeadTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r RequestHead
			n, err := ParseRequestHead([]byte(tc.in), 128, &r)
			if err != tc.err {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			wantN := tc.n
			if wantN == 0 {
				wantN = len(tc.in)
			}
			if n != wantN || string(r.Method) != tc.method || string(r.Path) != tc.path || string(r.Query) != tc.q ||
				r.Minor != tc.minor || r.ContentLength != tc.cl || r.Chunked != tc.chunked || r.KeepAlive != tc.keep ||
				r.ExpectContinue != tc.expect || string(r.ContentType) != tc.ctype || string(r.Head) != tc.head {
				t.Errorf("n=%d %+v", n, r)
			}
		})
	}
}

func TestParseChunkSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int64
		okay bool
	}{
		{"0", 0, true}, {"a", 10, true}, {"FF", 255, true}, {"1f ; name=value", 31, true}, {"10;x", 16, true},
		{"", 0, false}, {"g", 0, false}, {"-1", 0, false}, {"1 2", 0, false}, {"1000000000000000", 0, false}, {"1;\x01", 0, false},
	} {
		n, ok := ParseChunkSize([]byte(tc.in))
		if ok != tc.okay || (ok && n != tc.n) {
			t.Errorf("%q: %d %v", tc.in, n, ok)
		}
	}
}

func BenchmarkParseRequestHead(b *testing.B) {
	in := []byte("GET /?size=1k HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: hail\r\nAccept: */*\r\n\r\n")
	var r RequestHead
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		ParseRequestHead(in, 64<<10, &r)
	}
}

// TestParseRequestHeadAllocatesNothing: the built-in servers parse every
// request head with it, on their per-request path.
func TestParseRequestHeadAllocatesNothing(t *testing.T) {
	in := []byte("POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive, x\r\n\r\n{}")
	var r RequestHead
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := ParseRequestHead(in, 64<<10, &r); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per head", n)
	}
}
