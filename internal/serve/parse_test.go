package serve

import (
	"strings"
	"testing"
)

func TestParseHead(t *testing.T) {
	for _, tc := range []struct {
		name, in        string
		err             *httpError
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

		{name: "incomplete", in: "GET / HTTP/1.1\r\nHost: x\r\n", err: errIncomplete},
		{name: "empty", in: "", err: errIncomplete},
		{name: "only CR", in: "\r", err: errIncomplete},
		{name: "stray CR", in: "\rGET / HTTP/1.1\r\n\r\n", err: errBadRequestLine},
		{name: "two spaces", in: "GET  / HTTP/1.1\r\n\r\n", err: errBadRequestLine},
		{name: "lower http", in: "GET / http/1.1\r\n\r\n", err: errBadVersion},
		{name: "HTTP/2", in: "GET / HTTP/2.0\r\n\r\n", err: errVersion},
		{name: "trailing space", in: "GET / HTTP/1.1 \r\n\r\n", err: errBadVersion},
		{name: "ctl in target", in: "GET /\x7f HTTP/1.1\r\n\r\n", err: errBadTarget},
		{name: "empty header name", in: "GET / HTTP/1.1\r\n: x\r\n\r\n", err: errBadHeader},
		{name: "CR in value", in: "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", err: errBadHeader},
		{name: "huge CL", in: "GET / HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n\r\n", err: errBadCL},
		{name: "empty CL", in: "GET / HTTP/1.1\r\nContent-Length:\r\n\r\n", err: errBadCL},
		{name: "te list", in: "GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", err: errUnsupportedTE},
		{name: "too large", in: "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 200) + "\r\n\r\n", err: errHeaderTooLarge},
		{name: "too large incomplete", in: "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 200), err: errHeaderTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r request
			n, err := parseHead([]byte(tc.in), 128, &r)
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
			if n != wantN || string(r.method) != tc.method || string(r.path) != tc.path || string(r.query) != tc.q ||
				r.minor != tc.minor || r.contentLength != tc.cl || r.chunked != tc.chunked || r.keepAlive != tc.keep ||
				r.expectContinue != tc.expect || string(r.contentType) != tc.ctype || string(r.head) != tc.head {
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
		n, ok := parseChunkSize([]byte(tc.in))
		if ok != tc.okay || (ok && n != tc.n) {
			t.Errorf("%q: %d %v", tc.in, n, ok)
		}
	}
}
