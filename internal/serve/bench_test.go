package serve

import (
	"io"
	"net"
	"strings"
	"testing"
)

const plainGET = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: hail\r\nAccept: */*\r\n\r\n"

// TestPlainGETZeroAllocs proves the plain keep-alive GET path does not
// allocate: each run reads one request from an in-memory conn, answers it
// and flushes the previous answer.
func TestPlainGETZeroAllocs(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"one per read", plainGET},
		{"pipelined", strings.Repeat(plainGET, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Seed: 1})
			mc := newMemConn(tc.src, 1<<30)
			mc.keep = true
			c := newConn(s, mc)
			c.handle()
			c.flush()
			if string(mc.out) != string(helloResponse) {
				t.Fatalf("response %q", mc.out)
			}
			mc.keep = false
			if n := testing.AllocsPerRun(1000, func() {
				if !c.handle() {
					t.Fatal("connection ended")
				}
			}); n != 0 {
				t.Errorf("%v allocs per request", n)
			}
		})
	}
}

// BenchmarkPlainGET measures the server side of a keep-alive "GET /": one
// request per read from an in-memory conn, parse, answer, flush.
func BenchmarkPlainGET(b *testing.B) {
	s := New(Config{Seed: 1})
	c := newConn(s, newMemConn(plainGET, 1<<62))
	b.ReportAllocs()
	b.SetBytes(int64(len(plainGET)))
	for b.Loop() {
		c.handle()
	}
}

// BenchmarkPlainGETPipelined is BenchmarkPlainGET with 16 requests per read.
func BenchmarkPlainGETPipelined(b *testing.B) {
	s := New(Config{Seed: 1})
	c := newConn(s, newMemConn(strings.Repeat(plainGET, 16), 1<<62))
	b.ReportAllocs()
	b.SetBytes(int64(len(plainGET)))
	for b.Loop() {
		c.handle()
	}
}

// BenchmarkQueryGET is a cached fault query that does not sleep.
func BenchmarkQueryGET(b *testing.B) {
	s := New(Config{Seed: 1})
	c := newConn(s, newMemConn("GET /?size=100&status=503:1 HTTP/1.1\r\nHost: x\r\n\r\n", 1<<62))
	b.ReportAllocs()
	for b.Loop() {
		c.handle()
	}
}

// BenchmarkPlainGETTCP is a full round trip over loopback TCP with one
// connection (client cost and two context switches included).
func BenchmarkPlainGETTCP(b *testing.B) {
	_, addr := startServer(b, Config{})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req := []byte(plainGET)
	resp := make([]byte, len(helloResponse))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, resp); err != nil {
			b.Fatal(err)
		}
	}
}
