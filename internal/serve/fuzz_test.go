package serve

import (
	"bytes"
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
)

// FuzzRequestParser feeds arbitrary bytes to parseHead, checks its
// invariants, and then runs a whole connection over the same bytes (read in
// pieces of chunk+1 bytes) with sleeping faults disabled. Nothing may panic
// or hang.
func FuzzRequestParser(f *testing.F) {
	for _, s := range []string{
		plainGET,
		"GET / HTTP/1.0\r\n\r\n",
		"GET /?delay=1ms:50,2ms:50&status=503:10&size=1k&chunked=1&close=5 HTTP/1.1\r\n\r\n",
		"POST /echo HTTP/1.1\r\nContent-Length: 5\r\nContent-Type: text/x\r\n\r\nhello",
		"POST /echo?headers=1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n",
		"PUT /echo HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
		"POST /items HTTP/1.1\r\nContent-Length: 7\r\n\r\n{\"a\":1}GET /items HTTP/1.1\r\n\r\n",
		"DELETE /items/0123456789abcdef HTTP/1.1\r\n\r\n",
		"GET http://host/stats HTTP/1.1\r\nConnection: close\r\n\r\n",
		"\r\n\nOPTIONS * HTTP/1.1\nHost: a\n\n",
		"GET /?stall=1s@0 HTTP/1.1\r\n\r\n",
		"POST /stats/reset HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		var r http1.RequestHead
		n, err := http1.ParseRequestHead(data, 1024, &r)
		if err == nil {
			if n <= 0 || n > len(data) || n > 1024 {
				t.Fatalf("n=%d for %d bytes", n, len(data))
			}
			if len(r.Path) == 0 || (r.Path[0] != '/' && string(r.Path) != "*") {
				t.Fatalf("path %q", r.Path)
			}
			if r.Minor != 0 && r.Minor != 1 {
				t.Fatalf("minor %d", r.Minor)
			}
			if r.Chunked && r.ContentLength >= 0 {
				t.Fatal("chunked with Content-Length")
			}
			if !bytes.Contains(data[:n], r.Head) || !bytes.HasPrefix(r.Head, r.Method) {
				t.Fatalf("head %q", r.Head)
			}
			// Parsing is independent of what follows the head.
			var r2 http1.RequestHead
			n2, err2 := http1.ParseRequestHead(append(append([]byte{}, data[:n]...), "GARBAGE"...), 1024, &r2)
			if n2 != n || err2 != nil {
				t.Fatalf("re-parse: %d %v, want %d", n2, err2, n)
			}
		} else if err != http1.ErrRequestIncomplete && err.Status == 0 {
			t.Fatalf("error without status: %v", err)
		}

		s := New(Config{Seed: 1, ReadBufferSize: 64, MaxHeaderBytes: 1024, MaxBodyBytes: 4096})
		s.noSleep = true
		mc := newMemConn(string(data), 1)
		mc.chunk = int(chunk%32) + 1
		c := newConn(s, mc)
		c.serve()
	})
}
