package h2engine

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// FuzzClientFrames: whatever a server sends after its SETTINGS — any
// frames, any bytes, with one request and one gRPC call in flight — the
// client never panics, ends both requests within their deadline, and its
// connection ends (no goroutine is left reading).
func FuzzClientFrames(f *testing.F) {
	frame := func(t http2.FrameType, flags http2.Flags, id uint32, payload ...byte) []byte {
		return append(appendFrameHeader(nil, len(payload), t, flags, id), payload...)
	}
	f.Add(frame(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, 1, 0x88))                              // :status 200
	f.Add(append(frame(http2.FrameHeaders, http2.FlagHeadersEndHeaders, 3, 0x88), frame(http2.FrameData, 1, 3, 0, 0, 0, 0, 0)...)) // a gRPC message
	f.Add(frame(http2.FrameRSTStream, 0, 1, 0, 0, 0, 2))
	f.Add(frame(http2.FrameGoAway, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	f.Add(frame(http2.FrameContinuation, 0, 1, 0x88))
	f.Add(frame(http2.FramePing, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8))
	f.Add(frame(http2.FrameWindowUpdate, 0, 1, 0x7f, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, server []byte) {
		cs, ss := net.Pipe()
		defer ss.Close()
		go io.Copy(io.Discard, ss) // the server reads whatever the client writes
		go func() {
			ss.Write(append(frame(http2.FrameSettings, 0, 0), server...))
		}()
		c, err := newClient(newBatchConn(cs), 64<<10, func() time.Duration { return 0 }, time.Second, time.Second)
		if err != nil {
			t.Skip(err)
		}
		defer c.Close()
		get, err := parseTemplate([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "http")
		if err != nil {
			t.Fatal(err)
		}
		grpcCall, err := parseTemplate([]byte("POST /s/M HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc\r\nTE: trailers\r\nContent-Length: 5\r\n\r\n\x00\x00\x00\x00\x00"), "http")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{}, 2)
		for _, tp := range []*template{get, grpcCall} {
			go func() {
				defer func() { done <- struct{}{} }()
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				var status int
				var body int64
				var capture, loc []byte
				r := &httpResult{status: &status, body: &body, capture: &capture, limit: 1 << 10, location: &loc}
				var g grpcResult
				if tp.grpc {
					g.reset()
					r.grpc = &g
				}
				cl := &call{done: make(chan struct{}, 1)}
				c.exchange(ctx, tp, tp.body, cl, r)
				if tp.grpc {
					g.code(status)
				}
			}()
		}
		for range 2 {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("a request did not end after the server sent %x", server)
			}
		}
	})
}
