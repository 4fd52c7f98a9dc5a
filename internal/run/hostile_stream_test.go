package run

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/testnet"
)

// Hostile streams never hang or crash hail: each is a named outcome, on
// both HTTP/1.1 engines (a raw server that writes exactly the bytes of the
// scenario, framing and all) and on HTTP/2 (Go's h2c server, one DATA
// frame per flush).

// chatEvent is one chat completion chunk event.
func chatEvent(content string) string {
	return fmt.Sprintf(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q}}]}`+"\n\n", content)
}

// goodStream is a well-formed token stream of n tokens, one per chunk,
// with usage and [DONE].
func goodStream(n int) string {
	var b strings.Builder
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n")
	for range n {
		b.WriteString(chatEvent(" t"))
	}
	fmt.Fprintf(&b, `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":%d}}`+"\n\ndata: [DONE]\n\n", n)
	return b.String()
}

// h1 is what the raw HTTP/1.1 server does with one request's connection:
// write the response (or part of it) and report whether the connection
// may carry another request.
type h1 func(c net.Conn) bool

// chunkedHead writes a chunked event-stream response's head.
func chunkedHead(c net.Conn) {
	io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
}

// writeChunk writes s as one chunk.
func writeChunk(c net.Conn, s string) error {
	_, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(s), s)
	return err
}

// scriptedServer serves every request on every connection with f, until the
// test ends.
func scriptedServer(t *testing.T, f h1) string {
	t.Helper()
	return "http://" + requestServer(t, "127.0.0.1:0", func(_ *http.Request, c net.Conn) bool { return f(c) }) + "/v1/chat/completions"
}

// requestServer binds addr and, until the test ends, reads every request on
// every connection (its body discarded) and calls answer with it, which
// writes the response (or part of it) and reports whether the connection
// may carry another request. It returns the bound address.
func requestServer(t *testing.T, addr string, answer func(req *http.Request, c net.Conn) bool) string {
	t.Helper()
	return testnet.Serve(t, addr, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if !answer(req, c) {
				return
			}
		}
	})
}

// h2Server serves f over h2c.
func h2Server(t *testing.T, f http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f, Protocols: new(http.Protocols), ErrorLog: log.New(io.Discard, "", 0)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/v1/chat/completions"
}

// flushWrite writes s and flushes it as its own DATA frame.
func flushWrite(w http.ResponseWriter, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// hostileStream is one scenario: its HTTP/1.1 and HTTP/2 servers and the
// outcome each must be.
type hostileStream struct {
	name     string
	h1       h1
	h2       http.HandlerFunc
	want     string // error kind of every request ("" : completed, with tokens output tokens)
	want2    string // on HTTP/2, when it differs
	tokens   int
	idle     time.Duration
	duration time.Duration // -z instead of -n (then every request is truncated)
}

var hostileStreams = []hostileStream{
	{name: "an event line of megabytes",
		h1: func(c net.Conn) bool {
			chunkedHead(c)
			writeChunk(c, "data: ")
			x := strings.Repeat("x", 64<<10)
			for range 48 { // 3 MiB before the line ends
				if writeChunk(c, x) != nil {
					return false
				}
			}
			writeChunk(c, "\n\n"+goodStream(2))
			io.WriteString(c, "0\r\n\r\n")
			return true
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			flushWrite(w, "data: ")
			x := strings.Repeat("x", 64<<10)
			for range 48 {
				if flushWrite(w, x) != nil {
					return
				}
			}
			flushWrite(w, "\n\n"+goodStream(2))
		},
		want: stats.ErrStreamTooLarge.String()},
	{name: "every byte split from the next",
		h1: func(c net.Conn) bool {
			chunkedHead(c)
			for _, b := range []byte(goodStream(5)) {
				if writeChunk(c, string(b)) != nil {
					return false
				}
			}
			io.WriteString(c, "0\r\n\r\n")
			return true
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, b := range []byte(goodStream(5)) {
				if flushWrite(w, string(b)) != nil {
					return
				}
			}
		},
		tokens: 5},
	{name: "a stream that never ends: the idle timeout",
		h1: func(c net.Conn) bool {
			chunkedHead(c)
			writeChunk(c, chatEvent(" t"))
			io.Copy(io.Discard, c) // until hail gives up
			return false
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			flushWrite(w, chatEvent(" t"))
			<-r.Context().Done()
		},
		want: stats.ErrStreamIdle.String(), idle: 300 * time.Millisecond},
	{name: "a stream that never ends: -z cuts it, truncated",
		h1: func(c net.Conn) bool {
			chunkedHead(c)
			for writeChunk(c, chatEvent(" t")) == nil {
				time.Sleep(10 * time.Millisecond)
			}
			return false
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for flushWrite(w, chatEvent(" t")) == nil {
				time.Sleep(10 * time.Millisecond)
			}
		},
		duration: 400 * time.Millisecond},
	{name: "chunk framing broken mid-stream (HTTP/2: the stream reset)",
		h1: func(c net.Conn) bool {
			chunkedHead(c)
			writeChunk(c, chatEvent(" t"))
			io.WriteString(c, "zz\r\n"+chatEvent(" t")+"\r\n")
			return false
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			flushWrite(w, chatEvent(" t"))
			panic(http.ErrAbortHandler)
		},
		want: stats.ErrBadChunk.String(), want2: stats.ErrHTTP2StreamReset.String()},
	{name: "[DONE] followed by more data",
		h1: func(c net.Conn) bool {
			chunkedHead(c)
			writeChunk(c, goodStream(2)+chatEvent(" late"))
			io.WriteString(c, "0\r\n\r\n")
			return true
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			flushWrite(w, goodStream(2))
			flushWrite(w, chatEvent(" late"))
		},
		want: stats.ErrStreamAfterDone.String()},
	{name: "an error event with no JSON",
		h1: func(c net.Conn) bool {
			chunkedHead(c)
			writeChunk(c, chatEvent(" t")+"event: error\ndata: upstream went away\n\n")
			io.WriteString(c, "0\r\n\r\n")
			return true
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			flushWrite(w, chatEvent(" t")+"event: error\ndata: upstream went away\n\n")
		},
		want: stats.ErrStreamError.String()},
	{name: "the server closes mid-event (chunked; HTTP/2: the stream ends)",
		h1: func(c net.Conn) bool {
			chunkedHead(c)
			writeChunk(c, chatEvent(" t")+`data: {"choi`)
			return false // closed without the last chunk
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			flushWrite(w, chatEvent(" t")+`data: {"choi`)
		},
		want: stats.ErrClosedMidResponse.String(), want2: stats.ErrStreamMidEvent.String()},
	{name: "the server closes mid-event (body delimited by the close)",
		h1: func(c net.Conn) bool {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"+chatEvent(" t")+`data: {"choi`)
			return false
		},
		h2: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			flushWrite(w, chatEvent(" t")+`data: {"choi`)
		},
		want: stats.ErrStreamMidEvent.String()},
}

func TestHostileStreams(t *testing.T) {
	t.Parallel()
	for _, proto := range append(append([]string(nil), testEngines...), "h2") {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			for _, hs := range hostileStreams {
				t.Run(hs.name, func(t *testing.T) {
					t.Parallel()
					var u string
					want := hs.want
					if proto == "h2" {
						u = h2Server(t, hs.h2)
						if hs.want2 != "" {
							want = hs.want2
						}
					} else {
						u = scriptedServer(t, hs.h1)
					}
					engine := proto
					if proto == "h2" {
						engine = "auto"
					}
					p := newPlan(t, u, engine)
					p.Method, p.Connections, p.Requests, p.SSE = "POST", 2, 4, true
					if proto == "h2" {
						p.HTTPVersion = "2"
					}
					if hs.idle > 0 {
						p.IdleTimeout = hs.idle
					}
					if hs.duration > 0 {
						p.Requests, p.Duration, p.StreamDrain = 0, hs.duration, 50*time.Millisecond
					}
					start := time.Now()
					res := mustRun(t, p, Options{Workload: &Workload{Stream: &stream.Config{Tokens: true}}})
					if d := time.Since(start); d > 15*time.Second {
						t.Errorf("the run took %v", d)
					}
					c := res.Hail.Counts
					switch {
					case hs.duration > 0:
						if c.Truncated != 2 || c.Errors != 0 || c.Requests != 2 {
							t.Errorf("truncated %d, errors %v, requests %d; want the 2 streams truncated", c.Truncated, res.ErrorDistribution, c.Requests)
						}
					case want != "":
						if got := res.ErrorDistribution[want]; got != 4 || c.Requests != 4 {
							t.Errorf("%q: %d of %d requests (errors %v, statuses %v)", want, got, c.Requests, res.ErrorDistribution, res.StatusCodeDistribution)
						}
					default:
						if l := res.Hail.LLM; l == nil || l.Completed != 4 || l.TotalOutputTokens != int64(4*hs.tokens) {
							t.Errorf("errors %v, llm %+v; want 4 completed streams of %d tokens", res.ErrorDistribution, l, hs.tokens)
						}
					}
				})
			}
		})
	}
}
