package h2engine_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/testnet"
	"github.com/hail-loadgen/hail/result"
)

// hostileH2 serves h2c (prior knowledge) on loopback with behave in charge of each connection
// after the client's preface, and returns the base URL.
func hostileH2(t *testing.T, behave func(fr *http2.Framer, c net.Conn)) string {
	t.Helper()
	return "http://" + testnet.Serve(t, "127.0.0.1:0", func(c net.Conn) {
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(c, preface); err != nil {
			return
		}
		behave(http2.NewFramer(c, c), c)
	}) + "/"
}

// drain reads the client's frames until the connection ends, acknowledging its SETTINGS.
func drain(fr *http2.Framer) {
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			fr.WriteSettingsAck()
		}
	}
}

// onRequest sends the server's SETTINGS, then calls answer with the stream ID of each request's
// HEADERS until it returns false or the connection ends.
func onRequest(answer func(fr *http2.Framer, id uint32) bool) func(fr *http2.Framer, c net.Conn) {
	return func(fr *http2.Framer, c net.Conn) {
		fr.WriteSettings()
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if h, ok := f.(*http2.HeadersFrame); ok && !answer(fr, h.StreamID) {
				return
			}
		}
	}
}

// runBounded runs p and fails the test if the run takes longer than limit: a hostile server
// must never hang hail.
func runBounded(t *testing.T, p *plan.Plan, limit time.Duration) *result.Result {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	type out struct {
		res *result.Result
		err error
	}
	ch := make(chan out, 1)
	start := time.Now()
	go func() {
		res, err := run.Run(context.Background(), p, run.Options{})
		ch <- out{res, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("run failed: %v", o.err)
		}
		t.Logf("took %v: statuses %v, errors %v", time.Since(start).Round(time.Millisecond), o.res.StatusCodeDistribution, o.res.ErrorDistribution)
		return o.res
	case <-time.After(limit):
		t.Fatalf("the run did not end within %v: hail hangs on this server", limit)
		return nil
	}
}

// Hostile HTTP/2 servers: each misbehaviour ends as a counted, named error, every request is
// accounted for, and the run ends within its bounds.
func TestH2Hostile(t *testing.T) {
	t.Parallel()
	settings := func(s ...http2.Setting) func(fr *http2.Framer, c net.Conn) {
		return func(fr *http2.Framer, c net.Conn) {
			fr.WriteSettings(s...)
			drain(fr)
		}
	}
	hb := func(fields ...string) []byte {
		var b bytes.Buffer
		enc := hpack.NewEncoder(&b)
		for i := 0; i+1 < len(fields); i += 2 {
			enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		name    string
		behave  func(fr *http2.Framer, c net.Conn)
		post    bool          // send a 5-byte body
		timeout time.Duration // -t
		want    string        // the error kind of every request
		or      string        // another kind some requests may end as
	}{
		// RFC 9113 allows 0: the client must wait for a slot, so only -t ends each request.
		{name: "max-streams-0", behave: settings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 0}),
			timeout: 200 * time.Millisecond, want: "request timeout"},
		// A send window that never opens: the body cannot be sent; -t ends it.
		{name: "window-0", behave: settings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}), post: true,
			timeout: 200 * time.Millisecond, want: "request timeout"},
		{name: "bad-max-frame-size", behave: settings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 0}),
			timeout: 2 * time.Second, want: "http2 connection error"},
		{name: "bad-window-size", behave: settings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 31}),
			timeout: 2 * time.Second, want: "http2 connection error"},
		{name: "goaway-at-once", behave: func(fr *http2.Framer, c net.Conn) {
			fr.WriteSettings()
			fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, []byte("go away"))
			drain(fr)
		}, timeout: 2 * time.Second, want: "http2 goaway"},
		// A frame far above the 16 KiB the client accepts: refused before it is read into memory.
		{name: "oversized-frame", behave: func(fr *http2.Framer, c net.Conn) {
			fr.WriteSettings()
			c.Write([]byte{0x10, 0, 0, byte(http2.FrameData), 0, 0, 0, 0, 1}) // a 1 MiB DATA frame header
			drain(fr)
		}, timeout: 2 * time.Second, want: "http2 connection error"},
		{name: "bad-status", behave: onRequest(func(fr *http2.Framer, id uint32) bool {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb(":status", "abc"), EndHeaders: true, EndStream: true})
			return true
		}), timeout: 2 * time.Second, want: "http2 stream reset"},
		// Header fields without end: refused once the block passes the header list size hail
		// announced (it waited for -t before, decoding and dropping fields).
		{name: "continuation-flood", behave: onRequest(func(fr *http2.Framer, id uint32) bool {
			if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb(":status", "200")}) != nil {
				return false
			}
			junk := hb("x-junk", string(bytes.Repeat([]byte("j"), 1000)))
			for fr.WriteContinuation(id, false, junk) == nil {
			}
			return false
		}), timeout: 2 * time.Second, want: "header block too large"},
		{name: "close-mid-body", behave: onRequest(func(fr *http2.Framer, id uint32) bool {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb(":status", "200"), EndHeaders: true})
			fr.WriteData(id, false, []byte("partial"))
			return false
		}), timeout: 2 * time.Second, want: "connection closed mid-response",
			or: "connection reset by peer"}, // the close resets the client's unread frames
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := hostileH2(t, tc.behave)
			p := h2plan(t, base)
			p.Requests, p.Connections, p.Streams, p.Timeout = 8, 2, 2, tc.timeout
			if tc.post {
				p.Method, p.Bodies = "POST", [][]byte{[]byte("hello")}
			}
			res := runBounded(t, p, 15*time.Second)
			if got := res.Hail.Counts.Requests; got != 8 {
				t.Errorf("%d requests accounted for, want 8", got)
			}
			got := res.ErrorDistribution[tc.want] + res.ErrorDistribution[tc.or]
			if tc.name == "close-mid-body" {
				// A stream that shared the connection with the one being
				// answered never got its headers: closed before its response.
				got += res.ErrorDistribution["connection closed before response"]
			}
			if got != 8 || res.ErrorDistribution[tc.want] == 0 {
				t.Errorf("errors %v, statuses %v: want 8 × %q", res.ErrorDistribution, res.StatusCodeDistribution, tc.want)
			}
		})
	}
	t.Run("control", func(t *testing.T) { // the fake server itself works
		p := h2plan(t, hostileH2(t, onRequest(func(fr *http2.Framer, id uint32) bool {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb(":status", "200"), EndHeaders: true})
			return fr.WriteData(id, true, []byte("hello")) == nil
		})))
		p.Requests, p.Connections, p.Streams = 8, 2, 2
		if res := runBounded(t, p, 15*time.Second); res.StatusCodeDistribution["200"] != 8 {
			t.Errorf("statuses %v, errors %v: want 8 × 200", res.StatusCodeDistribution, res.ErrorDistribution)
		}
	})
}

// An HTTP/1-only server behind an http:// URL with --http2: the run ends at once with one clear
// error saying so (as TLS's ALPN case does), nothing counted as sent.
func TestH2CNotSpoken(t *testing.T) {
	t.Parallel()
	base := hostileH2(t, func(fr *http2.Framer, c net.Conn) {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
		io.Copy(io.Discard, c) // an HTTP/1 server that keeps the connection open
	})
	p := h2plan(t, base)
	p.Requests = 8
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := run.Run(ctx, p, run.Options{})
	if err == nil || !strings.Contains(err.Error(), "does not speak h2c") {
		t.Fatalf("err = %v, want one error saying the server does not speak h2c", err)
	}
}
