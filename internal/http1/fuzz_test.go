package http1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// fuzzParse parses data delivered in pieces (as feedPieces does, without
// scribbling) and checks the invariants that hold for any input.
func fuzzParse(t *testing.T, head bool, pieces [][]byte) result {
	t.Helper()
	p := &Parser{MaxHeaderBytes: 512, BodyLimit: 16, WantLocation: true}
	p.Reset(head)
	var buf []byte
	fed, total := 0, 0
	var done bool
	var err error
	for _, piece := range pieces {
		buf = append(buf, piece...)
		fed += len(piece)
		var n int
		n, done, err = p.Feed(buf)
		if n < 0 || n > len(buf) {
			t.Fatalf("Feed consumed %d of %d bytes", n, len(buf))
		}
		total += n
		buf = buf[n:]
		if err == nil && p.WireBytes != int64(total) {
			t.Fatalf("WireBytes %d, consumed %d", p.WireBytes, total)
		}
		if done || err != nil {
			break
		}
	}
	if !done && err == nil {
		done, err = p.EOF()
		if done == (err != nil) {
			t.Fatalf("EOF = %v, %v", done, err)
		}
	}
	if p.BodyBytes < 0 || p.BodyBytes > int64(fed) || p.WireBytes > int64(fed) || int64(p.HeaderBytes) > p.WireBytes {
		t.Fatalf("fed %d: BodyBytes %d WireBytes %d HeaderBytes %d", fed, p.BodyBytes, p.WireBytes, p.HeaderBytes)
	}
	if len(p.Body) > p.BodyLimit || int64(len(p.Body)) > p.BodyBytes {
		t.Fatalf("captured %d body bytes of %d with limit %d", len(p.Body), p.BodyBytes, p.BodyLimit)
	}
	if done && p.Status < 200 {
		t.Fatalf("done with status %d", p.Status)
	}
	if err != nil && !knownError(err) {
		t.Fatalf("unknown error %v", err)
	}
	return snapshot(p, total, done, err)
}

func knownError(err error) bool {
	for _, e := range []error{ErrMalformedStatusLine, ErrMalformedHeader, ErrHeaderTooLarge, ErrBadContentLength,
		ErrBadChunk, ErrUnexpectedEOF, ErrClosedBeforeResponse, ErrUnexpectedUpgrade} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Run the fuzzers one at a time, e.g.
//
//	go test -run XXX -fuzz '^FuzzParser$' -fuzztime 20s -fuzzminimizetime 5s ./internal/http1/
//
// A short -fuzzminimizetime matters: minimizing a long interesting string
// can otherwise stall a worker for the default 60 s.

// FuzzParser feeds arbitrary bytes whole, split at a fuzzed point and in
// small pieces: the parser must not panic, must consume no more than it is
// given, must reach the same result whichever way the bytes come, and must
// not count more body bytes than it was fed.
func FuzzParser(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), uint16(20), false)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), uint16(50), false)
	f.Fuzz(func(t *testing.T, data []byte, split uint16, head bool) {
		whole := fuzzParse(t, head, [][]byte{data})
		k := int(split) % (len(data) + 1)
		if got := fuzzParse(t, head, [][]byte{data[:k], data[k:]}); got != whole {
			t.Fatalf("split at %d:\n%+v\nwhole:\n%+v", k, got, whole)
		}
		step := 1 + int(split)%13
		if len(data) > 4096 {
			step = 1 + len(data)/256
		}
		var pieces [][]byte
		for i := 0; i < len(data); i += step {
			pieces = append(pieces, data[i:min(i+step, len(data))])
		}
		if got := fuzzParse(t, head, pieces); got != whole {
			t.Fatalf("pieces of %d:\n%+v\nwhole:\n%+v", step, got, whole)
		}
	})
}

// FuzzAppendRequest checks that a spec that passes Validate is encoded as a
// request that net/http reads back with the same method, target, host and
// body, and nothing left over.
func FuzzAppendRequest(f *testing.F) {
	f.Add("GET", "/", "example.com", false, "Accept", "*/*", []byte(nil), false, false)
	f.Add("POST", "/submit?x=1", "h:8080", false, "Content-Type", "application/json", []byte(`{"a":1}`), true, false)
	f.Add("", "", "h", true, "X-A", "b", []byte("body"), false, true)
	f.Add("PUT", "/a%20b", "", false, "Host", "from-header", []byte{}, false, false)
	f.Add("OPTIONS", "*", "h", false, "Content-Length", "0", []byte{}, false, false)
	f.Add("GET", "/", "[fe80::1%lo]:8080", false, "", "", []byte{}, false, false)
	f.Add("GET", "/\r\nX: y", "h", false, "X", "a\r\nb", []byte{}, false, false)
	f.Fuzz(func(t *testing.T, method, target, host string, http10 bool, hname, hval string, body []byte, close, keep10 bool) {
		spec := RequestSpec{Method: method, Target: target, Host: host, Body: body, Close: close, KeepAlive10: keep10}
		if http10 {
			spec.Proto = "HTTP/1.0"
		}
		if hname != "" {
			spec.Header = [][2]string{{hname, hval}, {"X-Fixed", "1"}}
		}
		if spec.Validate() != nil {
			return
		}
		wire := AppendRequest(nil, &spec)
		br := bufio.NewReader(bytes.NewReader(wire))
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("http.ReadRequest(%q): %v", wire, err)
		}
		got, err := io.ReadAll(req.Body)
		if err != nil {
			t.Fatalf("reading body of %q: %v", wire, err)
		}
		wantHost := StripZone(spec.Host) // an IPv6 zone stays on this side
		if strings.EqualFold(hname, "host") {
			wantHost = strings.Trim(hval, " \t")
		}
		if req.Method != spec.method() || req.RequestURI != spec.target() || req.Host != wantHost ||
			req.Proto != spec.proto() || !bytes.Equal(got, body) || br.Buffered() != 0 {
			t.Fatalf("http.ReadRequest(%q) = %s %s %s host %q body %q, %d bytes left",
				wire, req.Method, req.RequestURI, req.Proto, req.Host, got, br.Buffered())
		}
		if !strings.EqualFold(hname, "connection") && req.Close != (close || http10 && !keep10) {
			t.Fatalf("http.ReadRequest(%q): Close = %v", wire, req.Close)
		}
	})
}

// contentLengthOf is what a Content-Length value means, written plainly:
// comma-separated decimal numbers (leading zeros allowed, at most 18
// significant digits), all equal.
func contentLengthOf(v string) (int64, bool) {
	n := int64(-1)
	for _, e := range strings.Split(v, ",") {
		e = strings.Trim(e, " \t")
		if e == "" || strings.Trim(e, "0123456789") != "" {
			return 0, false
		}
		if e = strings.TrimLeft(e, "0"); e == "" {
			e = "0"
		}
		if len(e) > 18 {
			return 0, false
		}
		k, _ := strconv.ParseInt(e, 10, 64)
		if n >= 0 && k != n {
			return 0, false
		}
		n = k
	}
	return n, true
}

// FuzzContentLength checks the parser's reading of a Content-Length value
// against contentLengthOf.
func FuzzContentLength(f *testing.F) {
	for _, v := range []string{"5", "007", "0", "000", "00000000000000000000000000012", "3, 3", "3, 03", "3,4", "", "1,",
		"-1", "+1", "999999999999999999", "1000000000000000000", " 7 ", "1e3"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r >= 0x7f }) {
			return // not a header value
		}
		p := &Parser{MaxHeaderBytes: 64 << 10}
		p.Reset(false)
		_, _, err := p.Feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: " + v + "\r\n\r\n"))
		want, ok := contentLengthOf(v)
		switch {
		case !ok && !errors.Is(err, ErrBadContentLength):
			t.Fatalf("Content-Length %q: err %v, want bad content-length", v, err)
		case ok && err != nil:
			t.Fatalf("Content-Length %q: %v, want %d", v, err, want)
		case ok && p.ContentLength != want:
			t.Fatalf("Content-Length %q = %d, want %d", v, p.ContentLength, want)
		}
	})
}
