package http1

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// result is everything observable about one parse.
type result struct {
	N             int // bytes consumed in total
	Done          bool
	Err           error
	Status        int
	Proto10       bool
	KeepAlive     bool
	HeaderBytes   int
	BodyBytes     int64
	WireBytes     int64
	Location      string
	Body          string
	Chunked       bool
	ContentLength int64
}

func snapshot(p *Parser, n int, done bool, err error) result {
	return result{
		N: n, Done: done, Err: err,
		Status: p.Status, Proto10: p.Proto10, KeepAlive: p.KeepAlive,
		HeaderBytes: p.HeaderBytes, BodyBytes: p.BodyBytes, WireBytes: p.WireBytes,
		Location: string(p.Location), Body: string(p.Body),
		Chunked: p.Chunked, ContentLength: p.ContentLength,
	}
}

// feedPieces parses one response delivered in pieces, the way an engine
// does: unconsumed bytes are kept (in a fresh buffer, the old one scribbled
// over, so that any reference kept into it shows) and the next piece is
// appended. If eof, the connection closes after the last piece.
func feedPieces(t testing.TB, p *Parser, pieces [][]byte, eof bool) result {
	t.Helper()
	var buf []byte
	total := 0
	var done bool
	var err error
	for _, piece := range pieces {
		nb := make([]byte, 0, len(buf)+len(piece))
		nb = append(append(nb, buf...), piece...)
		for i := range buf {
			buf[i] = 0xA5
		}
		buf = nb
		var n int
		n, done, err = p.Feed(buf)
		if n < 0 || n > len(buf) {
			t.Fatalf("Feed consumed %d of %d bytes", n, len(buf))
		}
		total += n
		buf = buf[n:]
		if done || err != nil {
			return snapshot(p, total, done, err)
		}
	}
	if eof {
		done, err = p.EOF()
	}
	return snapshot(p, total, done, err)
}

// splits returns every way the tests deliver in: whole, byte by byte, and
// cut in two at each point (0 and len included: an empty Feed). Long inputs
// are delivered in 7-byte pieces instead of bytewise, and cut at a sample of
// points, to keep the quadratic cost of re-scanning a pending line in check.
func splits(in string) (names []string, ways [][][]byte) {
	b := []byte(in)
	names = append(names, "whole")
	ways = append(ways, [][]byte{b})
	piece, stride := 1, 1
	if len(b) > 1024 {
		piece, stride = 7, 61
	}
	var small [][]byte
	for i := 0; i < len(b); i += piece {
		small = append(small, b[i:min(i+piece, len(b))])
	}
	names = append(names, fmt.Sprintf("pieces of %d", piece))
	ways = append(ways, small)
	for k := 0; k <= len(b); k++ {
		if k%stride != 0 && k > 8 && k < len(b)-8 {
			continue
		}
		names = append(names, fmt.Sprintf("split@%d", k))
		ways = append(ways, [][]byte{b[:k], b[k:]})
	}
	return names, ways
}

type parseCase struct {
	name  string
	head  bool   // response to HEAD
	hdr   string // 1xx responses, status line and headers: HeaderBytes
	body  string // body as on the wire (chunk framing, trailers)
	extra string // bytes of the next response, left unconsumed
	eof   bool   // the peer closes after the input
	max   int    // MaxHeaderBytes
	limit int    // BodyLimit
	loc   bool   // WantLocation

	err error // expected error; if set, only it is checked

	done      bool
	status    int
	proto10   bool
	keep      bool
	chunked   bool
	bodyBytes int64
	cl        int64
	location  string
	capture   string
}

const chunkedBody = "5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n"

var parseCases = []parseCase{
	// Content-Length.
	{name: "content-length", hdr: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n", body: "hello",
		done: true, status: 200, keep: true, bodyBytes: 5, cl: 5},
	{name: "pipelined next response", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", body: "hello",
		extra: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", done: true, status: 200, keep: true, bodyBytes: 5, cl: 5},
	{name: "content-length zero", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", extra: "HTTP/1.1 200 OK\r\n",
		done: true, status: 200, keep: true, cl: 0},
	{name: "no reason phrase", hdr: "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\n", body: "ok",
		done: true, status: 200, keep: true, bodyBytes: 2, cl: 2},
	{name: "empty reason phrase", hdr: "HTTP/1.1 404 \r\nContent-Length: 2\r\n\r\n", body: "no",
		done: true, status: 404, keep: true, bodyBytes: 2, cl: 2},
	{name: "bare LF", hdr: "HTTP/1.1 200 OK\nContent-Length: 3\n\n", body: "abc",
		done: true, status: 200, keep: true, bodyBytes: 3, cl: 3},
	{name: "header names case-insensitive", hdr: "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh:3\r\nCONNECTION:  CLOSE  \r\n\r\n", body: "abc",
		done: true, status: 200, bodyBytes: 3, cl: 3},
	{name: "duplicate equal content-length", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", body: "abc",
		done: true, status: 200, keep: true, bodyBytes: 3, cl: 3},
	{name: "content-length list of equal values", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n", body: "abc",
		done: true, status: 200, keep: true, bodyBytes: 3, cl: 3},
	{name: "content-length incomplete body", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", body: "abc",
		done: false, status: 200, keep: true, bodyBytes: 3, cl: 10},
	{name: "status 500", hdr: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 500, keep: true, bodyBytes: 1, cl: 1},
	{name: "status 999", hdr: "HTTP/1.1 999 Whatever\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 999, keep: true, bodyBytes: 1, cl: 1},
	{name: "status HTTP/1.2 treated as 1.1", hdr: "HTTP/1.2 200 OK\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, keep: true, bodyBytes: 1, cl: 1},
	{name: "headers with odd but valid content", hdr: "HTTP/1.1 200 OK\r\nX-Empty:\r\nX-Tab:\tv\t\r\nX-Colon: a:b\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, keep: true, bodyBytes: 1, cl: 1},
	{name: "content-length leading zeros", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 0000000000000000000000000003\r\n\r\n", body: "abc",
		done: true, status: 200, keep: true, bodyBytes: 3, cl: 3},
	{name: "content-length zeros", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 000, 0\r\n\r\n", extra: "HTTP/1.1 200 OK\r\n",
		done: true, status: 200, keep: true, cl: 0},
	{name: "content-length errors", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", err: ErrBadContentLength},
	{name: "content-length conflicting list", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\n", err: ErrBadContentLength},
	{name: "content-length non-digit", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 3a\r\n\r\n", err: ErrBadContentLength},
	{name: "content-length negative", hdr: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: ErrBadContentLength},
	{name: "content-length plus", hdr: "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n", err: ErrBadContentLength},
	{name: "content-length empty", hdr: "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", err: ErrBadContentLength},
	{name: "content-length empty element", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 1,\r\n\r\n", err: ErrBadContentLength},
	{name: "content-length overflow", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n\r\n", err: ErrBadContentLength},
	{name: "content-length in 1xx is checked", hdr: "HTTP/1.1 100 Continue\r\nContent-Length: x\r\n\r\n", err: ErrBadContentLength},

	// Chunked.
	{name: "chunked", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: chunkedBody,
		extra: "HTTP/1.1 200 OK\r\n", done: true, status: 200, keep: true, chunked: true, bodyBytes: 12, cl: -1},
	{name: "chunked capture across chunks", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: chunkedBody, limit: 8,
		done: true, status: 200, keep: true, chunked: true, bodyBytes: 12, cl: -1, capture: "hello, w"},
	{name: "chunked extensions trailers uppercase hex", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n",
		body: "A;name=value;x=\"q\"\r\n0123456789\r\n1b \t; ext\r\nabcdefghijklmnopqrstuvwxyz!\r\n000;last\r\nX-Trailer: t\r\nX-Other:\r\n\r\n",
		done: true, status: 200, keep: true, chunked: true, bodyBytes: 37, cl: -1},
	{name: "chunked bare LF", hdr: "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n", body: "3\nabc\n0\n\n",
		done: true, status: 200, keep: true, chunked: true, bodyBytes: 3, cl: -1},
	{name: "chunked overrides content-length", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n", body: chunkedBody,
		done: true, status: 200, keep: true, chunked: true, bodyBytes: 12, cl: -1},
	{name: "chunked after gzip", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", body: chunkedBody,
		done: true, status: 200, keep: true, chunked: true, bodyBytes: 12, cl: -1},
	{name: "chunked in two headers", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", body: chunkedBody,
		done: true, status: 200, keep: true, chunked: true, bodyBytes: 12, cl: -1},
	{name: "chunked incomplete", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "5\r\nhel",
		done: false, status: 200, keep: true, chunked: true, bodyBytes: 3, cl: -1},
	{name: "chunked bad size", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "zz\r\n", err: ErrBadChunk},
	{name: "chunked empty size", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "\r\n", err: ErrBadChunk},
	{name: "chunked 0x prefix", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "0x5\r\nhello\r\n", err: ErrBadChunk},
	{name: "chunked junk after size", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "5 x\r\nhello\r\n", err: ErrBadChunk},
	{name: "chunked size overflow", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "10000000000000000\r\n", err: ErrBadChunk},
	{name: "chunked data overrun", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "5\r\nhelloXY\r\n0\r\n\r\n", err: ErrBadChunk},
	{name: "chunked data overrun no LF", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "5\r\nhelloXY", err: ErrBadChunk},
	{name: "chunked huge extension", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "5;" + strings.Repeat("x", 5000), err: ErrBadChunk},
	{name: "chunked folded trailer", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "0\r\nX: a\r\n b\r\n\r\n", err: ErrMalformedHeader},
	{name: "chunked trailer too large", max: 100, hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
		body: "0\r\nX: " + strings.Repeat("t", 100) + "\r\n\r\n", err: ErrHeaderTooLarge},
	{name: "chunked eof mid-chunk", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "5\r\nhel", eof: true, err: ErrUnexpectedEOF},
	{name: "chunked eof before last-chunk", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "5\r\nhello\r\n", eof: true, err: ErrUnexpectedEOF},
	{name: "chunked eof in trailers", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: "0\r\n", eof: true, err: ErrUnexpectedEOF},

	// Close-delimited.
	{name: "close-delimited at EOF", hdr: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n", body: "all of it\r\n\r\nHTTP/1.1 200 OK\r\n", eof: true,
		done: true, status: 200, bodyBytes: 30, cl: -1},
	{name: "close-delimited before EOF", hdr: "HTTP/1.1 200 OK\r\n\r\n", body: "partial",
		done: false, status: 200, bodyBytes: 7, cl: -1},
	{name: "close-delimited empty", hdr: "HTTP/1.1 200 OK\r\n\r\n", eof: true,
		done: true, status: 200, cl: -1},
	{name: "close-delimited capture", hdr: "HTTP/1.1 200 OK\r\n\r\n", body: "0123456789", limit: 4, eof: true,
		done: true, status: 200, bodyBytes: 10, cl: -1, capture: "0123"},
	{name: "transfer-encoding not ending in chunked", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\nContent-Length: 3\r\n\r\n", body: "abcdef", eof: true,
		done: true, status: 200, bodyBytes: 6, cl: -1},
	{name: "transfer-encoding identity ignored", hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 3\r\n\r\n", body: "abc",
		done: true, status: 200, keep: true, bodyBytes: 3, cl: 3},
	{name: "HTTP/1.0 close-delimited", hdr: "HTTP/1.0 200 OK\r\nServer: old\r\n\r\n", body: "<html></html>", eof: true,
		done: true, status: 200, proto10: true, bodyBytes: 13, cl: -1},
	{name: "HTTP/1.0 keep-alive close-delimited", hdr: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", body: "x", eof: true,
		done: true, status: 200, proto10: true, bodyBytes: 1, cl: -1},

	// Connection management.
	{name: "connection close", hdr: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, bodyBytes: 1, cl: 1},
	{name: "connection list with close", hdr: "HTTP/1.1 200 OK\r\nConnection: foo, Close\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, bodyBytes: 1, cl: 1},
	{name: "connection close in second header", hdr: "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nconnection: upgrade,close,\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, bodyBytes: 1, cl: 1},
	{name: "connection closer is not close", hdr: "HTTP/1.1 200 OK\r\nConnection: closer, xclose\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, keep: true, bodyBytes: 1, cl: 1},
	{name: "HTTP/1.0 keep-alive", hdr: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, proto10: true, keep: true, bodyBytes: 1, cl: 1},
	{name: "HTTP/1.0 keep-alive in list", hdr: "HTTP/1.0 200 OK\r\nConnection: x-foo ,\tKEEP-ALIVE\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, proto10: true, keep: true, bodyBytes: 1, cl: 1},
	{name: "HTTP/1.0 without keep-alive", hdr: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, proto10: true, bodyBytes: 1, cl: 1},
	{name: "HTTP/1.0 keep-alive and close", hdr: "HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, proto10: true, bodyBytes: 1, cl: 1},

	// Responses without a body.
	{name: "HEAD with content-length", head: true, hdr: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", extra: "HTTP/1.1 200 OK\r\n",
		done: true, status: 200, keep: true, cl: 1000},
	{name: "HEAD with chunked", head: true, hdr: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", extra: "5\r\nhello\r\n",
		done: true, status: 200, keep: true, chunked: true, cl: -1},
	{name: "HEAD without length", head: true, hdr: "HTTP/1.1 200 OK\r\n\r\n", extra: "x",
		done: true, status: 200, keep: true, cl: -1},
	{name: "HEAD 1.0 close", head: true, hdr: "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\n",
		done: true, status: 200, proto10: true, cl: 5},
	{name: "204 ignores content-length", hdr: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", extra: "HTTP/1.1 200 OK\r\n",
		done: true, status: 204, keep: true, cl: 5},
	{name: "204 ignores chunked", hdr: "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
		done: true, status: 204, keep: true, chunked: true, cl: -1},
	{name: "304", hdr: "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 1234\r\n\r\n",
		done: true, status: 304, keep: true, cl: 1234},
	{name: "304 no length", hdr: "HTTP/1.1 304 Not Modified\r\n\r\n", extra: "HTTP/1.1 200 OK\r\n",
		done: true, status: 304, keep: true, cl: -1},

	// Interim responses.
	{name: "100 continue", hdr: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", body: "ok",
		done: true, status: 200, keep: true, bodyBytes: 2, cl: 2},
	{name: "103 early hints then 100 then 201", loc: true,
		hdr: "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nLocation: /wrong\r\nConnection: close\r\n\r\n" +
			"HTTP/1.1 100 Continue\r\n\r\n" +
			"HTTP/1.1 201 Created\r\nLocation: /items/7\r\nTransfer-Encoding: chunked\r\n\r\n",
		body: chunkedBody, done: true, status: 201, keep: true, chunked: true, bodyBytes: 12, cl: -1, location: "/items/7"},
	{name: "1xx counted against the limit", max: 60,
		hdr: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", err: ErrHeaderTooLarge},
	{name: "101 switching protocols", hdr: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", err: ErrUnexpectedUpgrade},
	{name: "1xx then eof", hdr: "HTTP/1.1 100 Continue\r\n\r\n", eof: true, err: ErrUnexpectedEOF},

	// Location.
	{name: "location", loc: true, hdr: "HTTP/1.1 302 Found\r\nlocation:   https://example.com/x?y=1 \r\nContent-Length: 0\r\n\r\n",
		done: true, status: 302, keep: true, cl: 0, location: "https://example.com/x?y=1"},
	{name: "location not wanted", hdr: "HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
		done: true, status: 302, keep: true, cl: 0},
	{name: "last location wins", loc: true, hdr: "HTTP/1.1 301 Moved\r\nLocation: /a\r\nLOCATION: /b\r\nContent-Length: 0\r\n\r\n",
		done: true, status: 301, keep: true, cl: 0, location: "/b"},
	{name: "body capture limit", limit: 3, hdr: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", body: "hello",
		done: true, status: 200, keep: true, bodyBytes: 5, cl: 5, capture: "hel"},
	{name: "body capture larger than body", limit: 100, hdr: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", body: "hello",
		done: true, status: 200, keep: true, bodyBytes: 5, cl: 5, capture: "hello"},

	// Malformed status lines and headers.
	{name: "HTTP/2 status", hdr: "HTTP/2 200 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "HTTP/2.0 status", hdr: "HTTP/2.0 200 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "lowercase http", hdr: "http/1.1 200 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "two-digit status", hdr: "HTTP/1.1 20 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "four-digit status", hdr: "HTTP/1.1 2000 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "status below 100", hdr: "HTTP/1.1 099 Odd\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "non-digit status", hdr: "HTTP/1.1 2x0 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "double space", hdr: "HTTP/1.1  200 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "missing status", hdr: "HTTP/1.1\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "ICY", hdr: "ICY 200 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "leading empty line", hdr: "\r\nHTTP/1.1 200 OK\r\n\r\n", err: ErrMalformedStatusLine},
	{name: "garbage without LF", hdr: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", err: ErrMalformedStatusLine},
	{name: "html instead of response", hdr: "<html><body>hi</body></html>", err: ErrMalformedStatusLine},
	{name: "obs-fold", hdr: "HTTP/1.1 200 OK\r\nX-Long: a\r\n  b\r\nContent-Length: 0\r\n\r\n", err: ErrMalformedHeader},
	{name: "obs-fold tab", hdr: "HTTP/1.1 200 OK\r\nX-Long: a\r\n\tb\r\n\r\n", err: ErrMalformedHeader},
	{name: "header without colon", hdr: "HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n", err: ErrMalformedHeader},
	{name: "space before colon", hdr: "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", err: ErrMalformedHeader},
	{name: "empty header name", hdr: "HTTP/1.1 200 OK\r\n: x\r\n\r\n", err: ErrMalformedHeader},
	{name: "CR alone as line", hdr: "HTTP/1.1 200 OK\r\n\r\r\n", err: ErrMalformedHeader},
	{name: "header too large", max: 64, hdr: "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("b", 64) + "\r\n\r\n", err: ErrHeaderTooLarge},
	{name: "header too large without LF", max: 64, hdr: "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("b", 64), err: ErrHeaderTooLarge},
	{name: "header exactly at the limit", max: 38, hdr: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n", body: "x",
		done: true, status: 200, keep: true, bodyBytes: 1, cl: 1},
	{name: "header one over the limit", max: 37, hdr: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n", body: "x", err: ErrHeaderTooLarge},
	{name: "bad status prefix before the limit", max: 10, hdr: "HTT0/1.1 200 OK but much longer than the limit", err: ErrMalformedStatusLine},
	{name: "bad status prefix after the limit", max: 30, hdr: "HTTP/1.1 100 Continue\r\n\r\nHTTP/X.1 200 OK\r\n\r\n", err: ErrHeaderTooLarge},
	{name: "default limit", hdr: "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("b", DefaultMaxHeaderBytes) + "\r\n\r\n", err: ErrHeaderTooLarge},

	// Connection closed early.
	{name: "closed before response", eof: true, err: ErrClosedBeforeResponse},
	{name: "closed mid status line", hdr: "HTTP/1.1 20", eof: true, err: ErrUnexpectedEOF},
	{name: "closed mid headers", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", eof: true, err: ErrUnexpectedEOF},
	{name: "closed mid body", hdr: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", body: "hel", eof: true, err: ErrUnexpectedEOF},
}

func TestParser(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.hdr + tc.body + tc.extra
			names, ways := splits(in)
			var first result
			for i, pieces := range ways {
				p := &Parser{MaxHeaderBytes: tc.max, BodyLimit: tc.limit, WantLocation: tc.loc}
				p.Reset(tc.head)
				got := feedPieces(t, p, pieces, tc.eof)
				if i == 0 {
					first = got
					checkCase(t, tc, got)
					continue
				}
				if got != first {
					t.Fatalf("%s: got\n%+v\nwhole input gave\n%+v", names[i], got, first)
				}
			}
		})
	}
}

func checkCase(t *testing.T, tc parseCase, got result) {
	t.Helper()
	if tc.err != nil {
		if !errors.Is(got.Err, tc.err) {
			t.Fatalf("err = %v, want %v (result %+v)", got.Err, tc.err, got)
		}
		return
	}
	want := result{
		N: len(tc.hdr) + len(tc.body), Done: tc.done,
		Status: tc.status, Proto10: tc.proto10, KeepAlive: tc.keep,
		HeaderBytes: len(tc.hdr), BodyBytes: tc.bodyBytes, WireBytes: int64(len(tc.hdr) + len(tc.body)),
		Location: tc.location, Body: tc.capture, Chunked: tc.chunked, ContentLength: tc.cl,
	}
	if got != want {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

// TestParserStates checks the zero Parser, Feed and EOF after done, sticky
// errors and what Reset keeps.
func TestParserStates(t *testing.T) {
	var p Parser // the zero value parses a non-HEAD response
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP")
	n, done, err := p.Feed(in)
	if n != len(in)-4 || !done || err != nil {
		t.Fatalf("zero Parser: Feed = %d, %v, %v", n, done, err)
	}
	if n, done, err := p.Feed(in[n:]); n != 0 || !done || err != nil {
		t.Fatalf("Feed after done = %d, %v, %v", n, done, err)
	}
	if done, err := p.EOF(); !done || err != nil {
		t.Fatalf("EOF after done = %v, %v", done, err)
	}

	p.Reset(false)
	if _, _, err := p.Feed([]byte("HTTP/1.1 200 OK\r\nbad header\r\n")); !errors.Is(err, ErrMalformedHeader) {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := p.Feed([]byte("Content-Length: 0\r\n\r\n")); !errors.Is(err, ErrMalformedHeader) {
		t.Fatalf("error not sticky: %v", err)
	}
	if _, err := p.EOF(); !errors.Is(err, ErrMalformedHeader) {
		t.Fatalf("error not sticky in EOF: %v", err)
	}
	p.Reset(false)
	if _, done, err := p.Feed([]byte("HTTP/1.1 204 No Content\r\n\r\n")); !done || err != nil {
		t.Fatalf("after Reset: %v, %v", done, err)
	}

	// Reset keeps the settings and the buffers' arrays.
	p = Parser{BodyLimit: 4, WantLocation: true, MaxHeaderBytes: 100}
	p.Reset(false)
	p.Feed([]byte("HTTP/1.1 302 Found\r\nLocation: /abc\r\nContent-Length: 6\r\n\r\nabcdef"))
	loc, body := &p.Location[0], &p.Body[0]
	p.Reset(true)
	if p.BodyLimit != 4 || !p.WantLocation || p.MaxHeaderBytes != 100 || len(p.Location) != 0 || len(p.Body) != 0 ||
		p.ContentLength != -1 || p.Status != 0 || p.WireBytes != 0 {
		t.Fatalf("Reset left %+v", p)
	}
	p.Feed([]byte("HTTP/1.1 302 Found\r\nLocation: /xyz\r\nContent-Length: 6\r\n\r\n"))
	if &p.Location[0] != loc || string(p.Location) != "/xyz" || cap(p.Body) == 0 || &p.Body[:1][0] != body {
		t.Fatal("Reset did not reuse the Location and Body arrays")
	}
	if p.BodyBytes != 0 {
		t.Fatal("HEAD response read a body")
	}
}

// TestParserPipeline parses several responses from one stream, the way a
// pipelining or keep-alive connection delivers them, in random pieces.
func TestParserPipeline(t *testing.T) {
	resps := []struct {
		head                 bool
		text                 string
		status               int
		bodyBytes            int64
		keep                 bool
		wantHeader, wantWire int
	}{
		{false, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, 5, true, 38, 43},
		{false, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunkedBody, 200, 12, true, 47, 47 + len(chunkedBody)},
		{true, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 200, 0, true, 38, 38},
		{false, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", 204, 0, true, 52, 52},
		{false, "HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n", 304, 0, true, 48, 48},
		{false, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 404, 0, true, 45, 45},
		{false, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nrest of the stream", 200, 18, false, 38, 56},
	}
	var stream []byte
	for _, r := range resps {
		stream = append(stream, r.text...)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		var p Parser
		buf := make([]byte, 0, 64)
		pos, i := 0, 0
		p.Reset(resps[0].head)
		for i < len(resps) {
			n, done, err := p.Feed(buf)
			if err != nil {
				t.Fatalf("response %d: %v", i, err)
			}
			buf = buf[:copy(buf, buf[n:])]
			if done {
				r := resps[i]
				if p.Status != r.status || p.BodyBytes != r.bodyBytes || p.KeepAlive != r.keep ||
					p.HeaderBytes != r.wantHeader || p.WireBytes != int64(r.wantWire) {
					t.Fatalf("response %d: status %d body %d keep %v header %d wire %d", i, p.Status, p.BodyBytes, p.KeepAlive, p.HeaderBytes, p.WireBytes)
				}
				i++
				if i < len(resps) {
					p.Reset(resps[i].head)
				}
				continue
			}
			if pos == len(stream) {
				done, err := p.EOF()
				if !done || err != nil || i != len(resps)-1 {
					t.Fatalf("EOF at response %d: %v %v", i, done, err)
				}
				i++
				continue
			}
			k := min(1+rng.IntN(20), len(stream)-pos, cap(buf)-len(buf))
			if k == 0 {
				t.Fatalf("response %d: a line does not fit in the buffer", i)
			}
			buf = append(buf, stream[pos:pos+k]...)
			pos += k
		}
	}
}

// keepAliveStream returns count copies of resp back to back and random
// read sizes that cover it.
func keepAliveStream(resp string, count int, seed uint64) (stream []byte, reads []int) {
	stream = []byte(strings.Repeat(resp, count))
	rng := rand.New(rand.NewPCG(seed, seed))
	for left := len(stream); left > 0; {
		k := min(1+rng.IntN(40), left)
		reads = append(reads, k)
		left -= k
	}
	return stream, reads
}

// parseStream parses stream with a fixed buffer, one read size at a time,
// and returns the number of responses. It must not allocate.
func parseStream(p *Parser, buf []byte, stream []byte, reads []int) (responses int, err error) {
	fill, pos := 0, 0
	p.Reset(false)
	for _, r := range reads {
		fill += copy(buf[fill:], stream[pos:pos+r])
		pos += r
		for {
			n, done, err := p.Feed(buf[:fill])
			if err != nil {
				return responses, err
			}
			fill = copy(buf, buf[n:fill])
			if !done {
				break
			}
			responses++
			p.Reset(false)
		}
	}
	return responses, nil
}

const (
	typicalResponse = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 12\r\n" +
		"Date: Sun, 30 Nov 2025 03:01:00 GMT\r\nServer: hail-test\r\n\r\nHello world!"
	typicalChunked = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n" +
		"Date: Sun, 30 Nov 2025 03:01:00 GMT\r\nLocation: /next\r\n\r\n" +
		"5;ext=1\r\nHello\r\n7\r\n world!\r\n0\r\nX-Trailer: 1\r\n\r\n"
)

func TestParserNoAllocs(t *testing.T) {
	for _, tc := range []struct {
		name, resp string
		bodyBytes  int64
	}{
		{"content-length", typicalResponse, 12},
		{"chunked", typicalChunked, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const count = 100
			stream, reads := keepAliveStream(tc.resp, count, 7)
			p := &Parser{BodyLimit: 8, WantLocation: true}
			buf := make([]byte, 4096)
			allocs := testing.AllocsPerRun(20, func() {
				n, err := parseStream(p, buf, stream, reads)
				if err != nil || n != count {
					t.Fatalf("parsed %d responses, err %v", n, err)
				}
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per %d responses, want 0", allocs, count)
			}
			if p.BodyBytes != 0 || p.Status != 0 { // just Reset
				t.Fatalf("parser not reset")
			}
		})
	}
}

func BenchmarkParseContentLength(b *testing.B) {
	benchmarkParse(b, typicalResponse)
}

func BenchmarkParseChunked(b *testing.B) {
	benchmarkParse(b, typicalChunked)
}

func benchmarkParse(b *testing.B, resp string) {
	in := []byte(resp)
	p := &Parser{WantLocation: true}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		p.Reset(false)
		n, done, err := p.Feed(in)
		if n != len(in) || !done || err != nil {
			b.Fatalf("Feed = %d, %v, %v", n, done, err)
		}
	}
	if !bytes.Equal(p.Location, []byte("/next")) && strings.Contains(resp, "Location") {
		b.Fatalf("Location = %q", p.Location)
	}
}

// WantHeaders copies exactly the named headers of the final response, in
// any spelling, with no allocation once warm.
func TestWantHeaders(t *testing.T) {
	var p Parser
	p.WantHeaders = []string{"x-request-id", "location"}
	stream := "HTTP/1.1 100 Continue\r\nX-Request-Id: early\r\n\r\n" +
		"HTTP/1.1 201 Created\r\nx-REQUEST-id:  abc-1 \r\nLocation: /items/7\r\nContent-Length: 0\r\n\r\n"
	p.Reset(false)
	n, done, err := p.Feed([]byte(stream))
	if err != nil || !done || n != len(stream) {
		t.Fatalf("n %d done %v err %v", n, done, err)
	}
	if got := string(p.HeaderValues[0]); got != "abc-1" {
		t.Errorf("x-request-id = %q, want abc-1 (the final response's, trimmed)", got)
	}
	if got := string(p.HeaderValues[1]); got != "/items/7" {
		t.Errorf("location = %q", got)
	}
	sb, pb := []byte(stream), []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	allocs := testing.AllocsPerRun(200, func() {
		p.Reset(false)
		p.Feed(sb)
		p.Reset(false)
		p.Feed(pb)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per response pair", allocs)
	}
	if len(p.HeaderValues[0]) != 0 {
		t.Errorf("a response without the header kept %q", p.HeaderValues[0])
	}
}
