package h2engine_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/result"
)

// rawConn is one connection of a raw HTTP/2 server: its framer, with
// writes serialized (a flood writes while requests are answered), and
// its own HPACK encoder (the client's decoder keeps one table per
// connection).
type rawConn struct {
	fr   *http2.Framer
	c    net.Conn
	mu   sync.Mutex
	buf  bytes.Buffer
	enc  *hpack.Encoder
	seen int // requests seen on this connection (the reading goroutine's)
}

func newRawConn(fr *http2.Framer, c net.Conn) *rawConn {
	r := &rawConn{fr: fr, c: c}
	r.enc = hpack.NewEncoder(&r.buf)
	return r
}

// block encodes header fields (name, value, …) with this connection's encoder.
func (r *rawConn) block(fields ...string) []byte {
	r.buf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		r.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append([]byte(nil), r.buf.Bytes()...)
}

func (r *rawConn) headers(id uint32, end bool, fields ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block(fields...), EndHeaders: true, EndStream: end})
}

func (r *rawConn) data(id uint32, end bool, b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fr.WriteData(id, end, b)
}

// do runs f with the framer's writes to itself.
func (r *rawConn) do(f func(fr *http2.Framer) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return f(r.fr)
}

// answer is a complete answer: a 200 with a body, or for a gRPC call a
// gRPC response (one message, grpc-status 0).
func (r *rawConn) answer(id uint32, grpc bool) error {
	if !grpc {
		if err := r.headers(id, false, ":status", "200"); err != nil {
			return err
		}
		return r.data(id, true, []byte("hello"))
	}
	if err := r.headers(id, false, ":status", "200", "content-type", "application/grpc"); err != nil {
		return err
	}
	if err := r.data(id, false, grpcFrame(0, []byte("hi"))); err != nil {
		return err
	}
	return r.headers(id, true, "grpc-status", "0")
}

// grpcFrame is one length-prefixed gRPC message with the flag byte given.
func grpcFrame(flag byte, payload []byte) []byte {
	b := []byte{flag, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(payload)))
	return append(b, payload...)
}

// serveRaw serves h2c with each connection in behave's hands after the
// client's preface, and counts the streams behave answered in answered.
func serveRaw(t *testing.T, behave func(r *rawConn)) string {
	return hostileH2(t, func(fr *http2.Framer, c net.Conn) { behave(newRawConn(fr, c)) })
}

// eachRequest sends the server's SETTINGS (settings, if any) and calls on
// with each request's stream ID (its HEADERS) until it returns false or
// the connection ends; see serveRequests.
func eachRequest(on func(r *rawConn, id uint32) bool, settings ...http2.Setting) func(r *rawConn) {
	return func(r *rawConn) {
		r.do(func(fr *http2.Framer) error { return fr.WriteSettings(settings...) })
		serveRequests(r, on)
	}
}

// serveRequests reads the client's frames, acknowledging its SETTINGS and
// reading (never acknowledging) the rest, and calls on with each request's
// stream ID until it returns false or the connection ends.
func serveRequests(r *rawConn, on func(r *rawConn, id uint32) bool) {
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				r.do(func(fr *http2.Framer) error { return fr.WriteSettingsAck() })
			}
		case *http2.HeadersFrame:
			r.seen++
			if !on(r, f.StreamID) {
				return
			}
		}
	}
}

// grpcPlan is a plan of gRPC calls as hail grpc makes them: a POST of one
// framed message with gRPC's headers, on the h2 engine.
func grpcPlan(t *testing.T, base string) *plan.Plan {
	p := h2plan(t, base)
	p.Method = "POST"
	p.Headers = [][2]string{{"Content-Type", "application/grpc"}, {"TE", "trailers"}}
	p.Bodies = [][]byte{grpcFrame(0, []byte("ping"))}
	p.MaxRedirects = 0
	return p
}

// outcome is what a case expects of every request: one error kind (or
// another it may end as), or one status (a gRPC status name).
type outcome struct{ kind, or, status string }

// check asserts that all n requests ended as o.
func (o outcome) check(t *testing.T, res *result.Result, n int64) {
	t.Helper()
	if got := res.Hail.Counts.Requests; got != n {
		t.Errorf("%d requests accounted for, want %d", got, n)
	}
	var got int64
	if o.status != "" {
		got = res.StatusCodeDistribution[o.status]
	} else {
		got = res.ErrorDistribution[o.kind] + res.ErrorDistribution[o.or]
	}
	if got != n {
		t.Errorf("statuses %v, errors %v: want %d × %s", res.StatusCodeDistribution, res.ErrorDistribution, n, o)
	}
}

func (o outcome) String() string {
	if o.status != "" {
		return o.status
	}
	if o.or != "" {
		return o.kind + " or " + o.or
	}
	return o.kind
}

// Hostile HTTP/2 servers beyond TestH2Hostile's, each tried with plain
// requests (hail -p, --http2) and with gRPC calls (hail grpc), which share
// the engine: every request ends as the named outcome, every one is
// accounted for, and the run ends in bounded time.
func TestH2HostileFrames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		behave  func(grpc bool) func(r *rawConn)
		n       uint64        // requests (8 when 0)
		post    int           // a body of this many bytes (HTTP); gRPC calls always carry one message
		timeout time.Duration // -t
		http    outcome
		grpc    outcome
	}{
		// A response head that arrives a byte a second: -t ends each request
		// (a gRPC call past its deadline is DeadlineExceeded, as gRPC clients end it).
		{name: "slowloris-frame", behave: func(bool) func(r *rawConn) {
			return eachRequest(func(r *rawConn, id uint32) bool {
				if r.seen > 1 { // one dribble per connection: the others wait behind it
					return true
				}
				head := r.block(":status", "200")
				var fh [9]byte
				fh[2], fh[3], fh[4] = byte(len(head)), byte(http2.FrameHeaders), byte(http2.FlagHeadersEndHeaders)
				binary.BigEndian.PutUint32(fh[5:], id)
				go func() {
					for _, b := range append(fh[:], head...) {
						if r.do(func(*http2.Framer) error { _, err := r.c.Write([]byte{b}); return err }) != nil {
							return
						}
						time.Sleep(time.Second)
					}
				}()
				return true
			})
		}, timeout: 300 * time.Millisecond, http: outcome{kind: "request timeout"}, grpc: outcome{status: "DeadlineExceeded"}},

		// SETTINGS and PING floods from a server that reads what hail sends:
		// hail acknowledges them all and the answers still come.
		{name: "settings-flood", behave: func(grpc bool) func(r *rawConn) {
			return flooding(grpc, true, func(fr *http2.Framer, i int) error {
				return fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(65535 + i%2)})
			})
		}, timeout: 5 * time.Second, http: outcome{status: "200"}, grpc: outcome{status: "OK"}},
		{name: "ping-flood", behave: func(grpc bool) func(r *rawConn) {
			return flooding(grpc, true, func(fr *http2.Framer, i int) error { return fr.WritePing(false, [8]byte{byte(i)}) })
		}, timeout: 5 * time.Second, http: outcome{status: "200"}, grpc: outcome{status: "OK"}},
		// The same floods, with nothing between, from a server that never
		// reads: past 10,000 frames in a row the connection is given up
		// (-t 30s only bounds the case on a slow machine). The bound on
		// unsent acknowledgements is TestWriteAcksUnread's.
		{name: "settings-flood-unread", behave: func(grpc bool) func(r *rawConn) {
			return flooding(grpc, false, func(fr *http2.Framer, i int) error { return fr.WriteSettings() })
		}, n: 4, timeout: 30 * time.Second, http: outcome{kind: "http2 connection error"}, grpc: outcome{kind: "http2 connection error"}},
		{name: "ping-flood-unread", behave: func(grpc bool) func(r *rawConn) {
			return flooding(grpc, false, func(fr *http2.Framer, i int) error { return fr.WritePing(false, [8]byte{}) })
		}, n: 4, timeout: 30 * time.Second, http: outcome{kind: "http2 connection error"}, grpc: outcome{kind: "http2 connection error"}},

		// A header block without end, and one header of 1 MB: refused once
		// past the header list size hail announced (64 KiB), not read on.
		{name: "endless-continuation", behave: func(bool) func(r *rawConn) {
			return eachRequest(func(r *rawConn, id uint32) bool {
				r.do(func(fr *http2.Framer) error {
					if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block(":status", "200")}); err != nil {
						return err
					}
					for i := 0; ; i++ {
						if err := fr.WriteContinuation(id, false, r.block("x-junk", strings.Repeat("j", 900))); err != nil {
							return err
						}
					}
				})
				return false
			})
		}, timeout: 5 * time.Second, http: outcome{kind: "header block too large"}, grpc: outcome{kind: "header block too large"}},
		{name: "1mb-hpack-header", behave: func(bool) func(r *rawConn) {
			return eachRequest(func(r *rawConn, id uint32) bool {
				block := r.block(":status", "200", "x-big", strings.Repeat("b", 1<<20))
				r.do(func(fr *http2.Framer) error {
					first := block[:16384]
					if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first}); err != nil {
						return err
					}
					for rest := block[16384:]; len(rest) > 0; {
						n := min(len(rest), 16384)
						if err := fr.WriteContinuation(id, n == len(rest), rest[:n]); err != nil {
							return err
						}
						rest = rest[n:]
					}
					return nil
				})
				return true
			})
		}, timeout: 5 * time.Second, http: outcome{kind: "header block too large"}, grpc: outcome{kind: "header block too large"}},
		// HPACK's own bomb: a 4 KB field indexed once, then referenced 100
		// times in a block of a few hundred bytes that decodes to 400 KB.
		{name: "hpack-bomb", behave: func(bool) func(r *rawConn) {
			return eachRequest(func(r *rawConn, id uint32) bool {
				fields := []string{":status", "200"}
				for range 100 {
					fields = append(fields, "x-bomb", strings.Repeat("b", 4000))
				}
				r.headers(id, true, fields...)
				return true
			})
		}, timeout: 5 * time.Second, http: outcome{kind: "header block too large"}, grpc: outcome{kind: "header block too large"}},

		// Every stream reset as it opens, amid resets of streams that were
		// never opened: each request is a stream reset, nothing hangs.
		{name: "rst-stream-storm", behave: func(bool) func(r *rawConn) {
			return eachRequest(func(r *rawConn, id uint32) bool {
				return r.do(func(fr *http2.Framer) error {
					for i := uint32(1); i <= 200; i++ {
						fr.WriteRSTStream(id+2*i, http2.ErrCodeInternal) // not open (yet): ignored
					}
					return fr.WriteRSTStream(id, http2.ErrCodeInternal)
				}) == nil
			})
		}, timeout: 5 * time.Second, http: outcome{kind: "http2 stream reset"}, grpc: outcome{kind: "http2 stream reset"}},

		// A connection window that never opens: a body over its 65,535
		// bytes cannot be sent, -t ends the request (a stall, not a hang).
		{name: "conn-window-stall", behave: func(bool) func(r *rawConn) {
			// Stream windows of 1 MiB; the connection's stays at 65,535.
			return eachRequest(func(r *rawConn, id uint32) bool { return true },
				http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
		}, post: 100 << 10, timeout: 300 * time.Millisecond, http: outcome{kind: "request timeout"}, grpc: outcome{status: "DeadlineExceeded"}},

		// DATA after END_STREAM, and DATA on a stream never opened: the
		// answer counts as it ended; the stray frames change nothing.
		{name: "data-after-end-stream", behave: func(grpc bool) func(r *rawConn) {
			return eachRequest(func(r *rawConn, id uint32) bool {
				if r.answer(id, grpc) != nil {
					return false
				}
				r.data(id, false, []byte("stray"))
				r.data(id+1000, true, []byte("stray"))
				return true
			})
		}, timeout: 5 * time.Second, http: outcome{status: "200"}, grpc: outcome{status: "OK"}},
	} {
		for _, grpc := range []bool{false, true} {
			name := tc.name + map[bool]string{false: "/http", true: "/grpc"}[grpc]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				base := serveRaw(t, tc.behave(grpc))
				p, want := h2plan(t, base), tc.http
				if grpc {
					p, want = grpcPlan(t, base), tc.grpc
				}
				if tc.post > 0 {
					p.Method = "POST"
					if grpc {
						p.Bodies = [][]byte{grpcFrame(0, make([]byte, tc.post))}
					} else {
						p.Bodies = [][]byte{make([]byte, tc.post)}
					}
				}
				n := tc.n
				if n == 0 {
					n = 8
				}
				p.Requests, p.Connections, p.Streams, p.Timeout = n, 2, 2, tc.timeout
				res := runBounded(t, p, tc.timeout+15*time.Second)
				want.check(t, res, int64(n))
				if want.status == "200" && res.Summary.TotalData != 8*5 {
					t.Errorf("%d body bytes, want 40: stray DATA counted", res.Summary.TotalData)
				}
			})
		}
	}
}

// floodFrames is how many frames a server that reads floods with: 50,000
// (five times the acknowledgements hail lets wait unsent), or 20,000 under
// the race detector, where each costs hail's reader ten times the CPU.
// Written floodBatch at a time, they reach hail faster than its reader
// takes them: the answers wait behind all that the socket buffers hold (a
// flood of 200,000 took 2.5 s of the cases' -t 5s on a quiet machine).
var floodFrames = map[bool]int{false: 50_000, true: 20_000}[raceDetector]

// floodBatch is how many flood frames go in one write, between the
// answers' frames (a write each cost the server a system call: seconds).
const floodBatch = 500

// flooding answers each request while another goroutine floods the
// connection with frames (write): with read, the server reads what hail
// sends (its acks) as it floods, floodFrames frames, floodBatch at a time
// with a WINDOW_UPDATE after each batch (so that no row of them passes
// hail's bound, maxControlRun); without, it never reads after the client's
// preface and floods, 64 KiB at a time with nothing between, until the
// connection fails.
func flooding(grpc, read bool, write func(fr *http2.Framer, i int) error) func(r *rawConn) {
	return func(r *rawConn) {
		if !read {
			fr := http2.NewFramer(bufio.NewWriterSize(r.c, 64<<10), nil)
			fr.WriteSettings()
			for i := 0; write(fr, i) == nil; i++ {
			}
			return
		}
		r.do(func(fr *http2.Framer) error { return fr.WriteSettings() })
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			var batch bytes.Buffer
			fr := http2.NewFramer(&batch, nil)
			for i := 0; i < floodFrames; {
				select {
				case <-stop:
					return
				default:
				}
				batch.Reset()
				for end := min(i+floodBatch, floodFrames); i < end; i++ {
					write(fr, i)
				}
				fr.WriteWindowUpdate(0, 1) // another frame between batches: under hail's bound on a row of them
				if r.do(func(*http2.Framer) error { _, err := r.c.Write(batch.Bytes()); return err }) != nil {
					return
				}
			}
		}()
		serveRequests(r, func(r *rawConn, id uint32) bool { return r.answer(id, grpc) == nil })
	}
}

// GOAWAY with streams in flight: streams above the last one the server
// processes are sent again, once, on a new connection, or fail as http2
// goaway; the server's own count of answers equals the responses; a gRPC
// call is counted once whatever its attempts, its retries apart
// (hail.grpc.retries, also among the reconnects).
func TestH2GoAwayMidRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		streams int
		// on answers stream id of a connection whose first stream was first.
		on func(r *rawConn, id, first uint32, grpc bool, answered *atomic.Int64) bool
	}{
		// hail grpc -n 40 against a server that sends GOAWAY after each
		// connection's first call, as the next call arrives (grpc-go's
		// graceful close races the client this way): each second call is
		// turned away unprocessed and sent again on a new connection. Before,
		// hail.grpc.calls counted every attempt: 79 for 40.
		{name: "after-each-first-call", streams: 1, on: func(r *rawConn, id, first uint32, grpc bool, answered *atomic.Int64) bool {
			if id == first {
				answered.Add(1)
				return r.answer(id, grpc) == nil
			}
			return r.do(func(fr *http2.Framer) error { return fr.WriteGoAway(first, http2.ErrCodeNo, nil) }) == nil
		}},
		// Four streams in flight; the server answers the first and turns the
		// others away: each is sent again once (and may be turned away again:
		// then it fails as http2 goaway).
		{name: "streams-in-flight", streams: 4, on: func(r *rawConn, id, first uint32, grpc bool, answered *atomic.Int64) bool {
			if id != first {
				return true
			}
			answered.Add(1)
			if r.answer(id, grpc) != nil {
				return false
			}
			return r.do(func(fr *http2.Framer) error { return fr.WriteGoAway(first, http2.ErrCodeNo, nil) }) == nil
		}},
	} {
		for _, grpc := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "/http", true: "/grpc"}[grpc], func(t *testing.T) {
				t.Parallel()
				var answered atomic.Int64
				base := serveRaw(t, func(r *rawConn) {
					first := uint32(0)
					eachRequest(func(r *rawConn, id uint32) bool {
						if first == 0 {
							first = id
						}
						return tc.on(r, id, first, grpc, &answered)
					})(r)
				})
				const n = 40
				p := h2plan(t, base)
				if grpc {
					p = grpcPlan(t, base)
				}
				p.Requests, p.Connections, p.Streams, p.Timeout = n, 1, tc.streams, 5*time.Second
				res := runBounded(t, p, 30*time.Second)
				c := res.Hail.Counts
				ok := res.StatusCodeDistribution[map[bool]string{false: "200", true: "OK"}[grpc]]
				failed := res.ErrorDistribution["http2 goaway"]
				if ok != answered.Load() || ok+failed != c.Requests || c.Requests+c.Unsent != n || ok == 0 {
					t.Errorf("%d answered by the server; %d sent, %d unsent; statuses %v, errors %v: want every request answered or failed as http2 goaway",
						answered.Load(), c.Requests, c.Unsent, res.StatusCodeDistribution, res.ErrorDistribution)
				}
				if tc.streams == 1 && (ok != n || c.Reconnects != n-1) {
					t.Errorf("%d OK, %d reconnects: want %d, each second call sent again once", ok, c.Reconnects, n-1)
				}
				if !grpc {
					return
				}
				g := res.Hail.GRPC
				// Calls are the sent requests (a call turned away twice
				// before any byte of it left was never sent). Four streams
				// whose calls never overlapped retry none.
				if g == nil || g.Calls != c.Sent || g.Retries > c.Reconnects {
					t.Fatalf("hail.grpc %+v, %d sent, %d reconnects: want calls = sent, retries counted apart (0 … reconnects)", g, c.Sent, c.Reconnects)
				}
				if tc.streams == 1 && g.Retries != n-1 {
					t.Errorf("%d retries, want %d", g.Retries, n-1)
				}
				t.Logf("calls %d, retries %d, reconnects %d", g.Calls, g.Retries, c.Reconnects)
			})
		}
	}
}

// A stream waiting for a stream slot (SETTINGS_MAX_CONCURRENT_STREAMS 1,
// two streams) when a GOAWAY comes is turned away before any byte of its
// request left, and sends it on a new connection: also when an earlier
// request of the same stream was answered, whose response head it must
// not take for its own (it would look answered in part, and fail).
func TestH2GoAwayWhileWaitingForSlot(t *testing.T) {
	t.Parallel()
	for _, grpc := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "grpc"}[grpc], func(t *testing.T) {
			t.Parallel()
			const n, early = 40, 10
			var answered atomic.Int64
			var first atomic.Pointer[rawConn] // the first connection
			base := serveRaw(t, eachRequest(func(r *rawConn, id uint32) bool {
				first.CompareAndSwap(nil, r)
				answered.Add(1)
				if r.seen == early && first.Load() == r {
					// The tenth request on the first connection: its other
					// stream, answered before, now waits for the slot. The
					// GOAWAY goes first, then the answer, so that the
					// waiting stream wakes to a draining connection.
					time.Sleep(10 * time.Millisecond)
					if r.do(func(fr *http2.Framer) error { return fr.WriteGoAway(id, http2.ErrCodeNo, nil) }) != nil {
						return false
					}
				}
				return r.answer(id, grpc) == nil
			}, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1}))
			p := h2plan(t, base)
			if grpc {
				p = grpcPlan(t, base)
			}
			p.Requests, p.Connections, p.Streams, p.Timeout = n, 1, 2, 5*time.Second
			res := runBounded(t, p, 30*time.Second)
			c := res.Hail.Counts
			ok := res.StatusCodeDistribution[map[bool]string{false: "200", true: "OK"}[grpc]]
			// One reconnect; none when the other stream came back only
			// after the GOAWAY (a slow machine), so that it never waited.
			if ok != n || answered.Load() != n || c.Reconnects > 1 {
				t.Errorf("%d OK, %d answered by the server, %d not sent, %d reconnects, errors %v: want all %d answered, at most one sent again",
					ok, answered.Load(), c.NotSent, c.Reconnects, res.ErrorDistribution, n)
			}
		})
	}
}

// A new connection whose first stream a GOAWAY refuses (last stream 0:
// what a server's idle timeout sends when a connection's first request
// comes after it, as on a loaded machine) sends the request again on
// another: the server provably did not process it, so also a POST. It
// failed as "http2 goaway" when only a reused connection's requests went
// again.
func TestH2GoAwayRefusesFirstStream(t *testing.T) {
	t.Parallel()
	var refused atomic.Bool
	var answered atomic.Int64
	base := serveRaw(t, eachRequest(func(r *rawConn, id uint32) bool {
		if refused.CompareAndSwap(false, true) {
			_ = r.do(func(fr *http2.Framer) error { return fr.WriteGoAway(0, http2.ErrCodeNo, nil) })
			return false
		}
		answered.Add(1)
		return r.answer(id, false) == nil
	}))
	p := h2plan(t, base)
	p.Requests, p.Connections, p.Streams, p.Method = 4, 1, 1, "POST"
	res := runBounded(t, p, 30*time.Second)
	c := res.Hail.Counts
	if res.StatusCodeDistribution["200"] != 4 || answered.Load() != 4 || c.Reconnects != 1 || c.Errors != 0 || c.Sent != 4 {
		t.Errorf("%d 200s, %d answered by the server, %d sent, %d reconnects, errors %v: want 4 of each, one reconnect",
			res.StatusCodeDistribution["200"], answered.Load(), c.Sent, c.Reconnects, res.ErrorDistribution)
	}
}

// A server that accepts the connection and sends its SETTINGS a byte a
// second (or never): the run ends at --connect-timeout with one line
// saying that hail timed out waiting for the server's HTTP/2 settings.
func TestH2SettingsTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		behave func(fr *http2.Framer, c net.Conn)
	}{
		{"silent", func(fr *http2.Framer, c net.Conn) { io.Copy(io.Discard, c) }},
		{"a-byte-a-second", func(fr *http2.Framer, c net.Conn) {
			for _, b := range []byte{0, 0, 0, byte(http2.FrameSettings), 0, 0, 0, 0, 0} {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(time.Second)
			}
			drain(fr)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := h2plan(t, hostileH2(t, tc.behave))
			p.Requests, p.ConnectTimeout = 4, 500*time.Millisecond
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := run.Run(ctx, p, run.Options{})
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "timed out after 500ms waiting for the server's HTTP/2 settings") {
				t.Fatalf("err = %v", err)
			}
			if took > 3*time.Second {
				t.Errorf("took %v with --connect-timeout 500ms", took)
			}
		})
	}
}
