package netengine

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	"hail/internal/engine"
	"hail/internal/http1"
	"hail/internal/stats"
	"hail/internal/transport"
)

// readBufSize is a connection's initial read buffer: enough for a small
// response, so 10,000 idle-ish connections cost little. A read that fills
// the buffer doubles it (up to maxReadBuf) so large bodies stream in big reads.
const (
	readBufSize = 512
	maxReadBuf  = 64 << 10
)

// worker drives one connection: it takes a request, sends it, reads the
// response and records the outcome, reconnecting when the connection ends.
type worker struct {
	j       *engine.Job
	index   int // connection number, for connection stages
	shard   int
	reqs    engine.Requests
	scratch []byte          // request bytes built by reqs
	rec     *stats.Recorder // the current request's step's recorder
	tickets <-chan engine.Ticket
	ctx     context.Context
	cancel  context.CancelFunc

	mu      sync.Mutex // guards c against abort; taken per connection, not per request
	c       net.Conn
	aborted bool

	buf    []byte
	r, w   int // unconsumed response bytes are buf[r:w]
	parser http1.Parser
	redir  []byte // scratch for encoding redirected requests

	tracing bool              // the current request goes to the per-request log
	tr      stats.TraceRecord // its record, filled as it goes
}

func newWorker(j *engine.Job, i int, tickets <-chan engine.Ticket) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &worker{j: j, index: i, shard: i % len(j.Recorders[0]), reqs: j.NewRequests(i), tickets: tickets, ctx: ctx, cancel: cancel,
		buf: make([]byte, readBufSize)}
	w.rec = j.Recorders[0][w.shard]
	w.parser.BodyLimit = j.BodyLimit
	w.parser.WantHeaders = j.CaptureHeaders
	w.parser.MaxHeaderBytes = j.MaxHeaderBytes
	w.parser.WantLocation = j.MaxRedirects > 0
	return w
}

func (w *worker) abort() {
	w.mu.Lock()
	w.aborted = true
	if w.c != nil {
		_ = w.c.SetDeadline(time.Unix(1, 0))
	}
	w.mu.Unlock()
	w.cancel()
}

func (w *worker) run() {
	defer w.closeConn()
	defer w.cancel()
	j := w.j
	for {
		t, queued, ok := engine.Next(j, w.tickets, w.index, w.closeConn)
		hit, at := t.Hit, t.At
		if !ok {
			return
		}
		req, step, head, ok := w.reqs.Next(hit)
		if !ok {
			continue
		}
		w.rec = j.Recorders[step][w.shard]
		start := j.Since()
		if w.tickets != nil {
			if queued {
				w.rec.Queued(int64(start - at))
			} else {
				w.rec.Lag(int64(start - at))
			}
		} else {
			at = start
		}
		w.rec.InFlight(1)
		if w.tracing = w.rec.Tracing(); w.tracing {
			w.tr = stats.TraceRecord{Hit: hit, Intended: int64(at), Start: int64(start), Conn: int32(w.index), Step: uint16(step)}
		}
		if w.do(req, head, at, start) {
			w.reqs.Done(step, &w.parser)
		} else {
			w.reqs.Done(step, nil)
		}
		if w.tracing {
			w.rec.Trace(&w.tr)
		}
		w.rec.InFlight(-1)
	}
}

// do performs one request (following redirects) and records its outcome.
// at is the time its latency counts from. It reports whether the request
// ended in a response (left in w.parser).
func (w *worker) do(req []byte, head bool, at, start time.Duration) bool {
	j := w.j
	u := j.URL
	var firstByte time.Duration = -1
	for hops := 0; ; hops++ {
		status, fb, err := w.exchange(req, head, start)
		if firstByte < 0 && fb > 0 {
			firstByte = fb
		}
		if err != nil {
			w.fail(err)
			return false
		}
		if j.MaxRedirects == 0 || !isRedirect(status) || len(w.parser.Location) == 0 {
			end := j.Since()
			w.rec.Response(status, int64(end-at), int64(firstByte-start), w.parser.BodyBytes, w.parser.WireBytes)
			w.traceResponse(status, end, firstByte)
			return true
		}
		if hops >= j.MaxRedirects {
			w.recordError(stats.ErrTooManyRedirects)
			return false
		}
		next, err := u.Parse(string(w.parser.Location))
		if err != nil || (next.Scheme != "http" && next.Scheme != "https") {
			w.recordError(stats.ErrRedirect)
			return false
		}
		spec := j.Redirect
		spec.Target = next.RequestURI()
		spec.Host = next.Host
		if status == 303 || ((status == 301 || status == 302) && spec.Method == "POST") {
			spec.Method, spec.Body = "GET", nil
		}
		head = spec.Method == "HEAD"
		w.redir = http1.AppendRequest(w.redir[:0], &spec)
		req = w.redir
		if next.Scheme != u.Scheme || next.Host != u.Host {
			status, fb, err := w.foreign(next, req, head)
			if err != nil {
				w.fail(err)
				return false
			}
			end := j.Since()
			if firstByte < 0 {
				firstByte = fb
			}
			w.rec.Response(status, int64(end-at), int64(firstByte-start), w.parser.BodyBytes, w.parser.WireBytes)
			w.traceResponse(status, end, firstByte)
			return true
		}
		u = next
	}
}

// foreign sends req once over a new connection to another origin.
func (w *worker) foreign(u *url.URL, req []byte, head bool) (int, time.Duration, error) {
	d, err := w.j.RedirectDialer(u)
	if err != nil {
		return 0, 0, err
	}
	c, _, err := d.Dial(w.ctx)
	if err != nil {
		return 0, 0, err
	}
	saved, sr, sw := w.c, w.r, w.w
	w.setConn(c)
	w.r, w.w = 0, 0
	status, fb, err := w.exchange(req, head, w.j.Since())
	w.closeConn()
	w.setConn(saved)
	w.r, w.w = sr, sw
	return status, fb, err
}

func isRedirect(s int) bool { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308 }

func (w *worker) setConn(c net.Conn) {
	w.mu.Lock()
	w.c = c
	if w.aborted && c != nil {
		_ = c.SetDeadline(time.Unix(1, 0))
	}
	w.mu.Unlock()
}

func (w *worker) closeConn() {
	w.mu.Lock()
	c := w.c
	w.c = nil
	w.mu.Unlock()
	if c != nil {
		c.Close()
		w.rec.Closed()
	}
	w.r, w.w = 0, 0
}

func (w *worker) fail(err error) {
	mid := w.parser.WireBytes > 0
	w.closeConn()
	if w.j.Aborting() {
		w.recordError(stats.ErrAborted)
		return
	}
	w.recordError(engine.Classify(err, mid))
}

// recordError records a failed request (and its trace record, if tracing).
func (w *worker) recordError(k stats.ErrorKind) {
	w.rec.Error(k)
	if w.tracing {
		w.tr.End = int64(w.j.Since())
		w.tr.SetError(k)
	}
}

// traceResponse completes the trace record of a request that got a response.
func (w *worker) traceResponse(status int, end, firstByte time.Duration) {
	if w.tracing {
		w.tr.Status, w.tr.End, w.tr.Body = int32(status), int64(end), w.parser.BodyBytes
		if firstByte > 0 {
			w.tr.FirstByte = int64(firstByte)
		}
	}
}

// exchange writes req on the worker's connection (dialing one if needed)
// and reads one response. It returns the status and the first-byte time.
func (w *worker) exchange(req []byte, head bool, start time.Duration) (int, time.Duration, error) {
	j := w.j
	w.parser.Reset(head)
	if w.c == nil {
		c, tm, err := w.dial()
		if err != nil {
			return 0, 0, err
		}
		w.rec.Connected(int64(tm.DNS), int64(tm.Total))
		w.tr.Connect, w.tr.DNS = int64(tm.Total), int64(tm.DNS)
		w.setConn(c)
	}
	c := w.c
	if j.Timeout > 0 {
		_ = c.SetDeadline(time.Now().Add(j.Timeout))
	}
	if _, err := c.Write(req); err != nil {
		return 0, 0, err
	}
	w.rec.Sent(int64(len(req)))
	var fb time.Duration
	for {
		if w.r < w.w {
			n, done, err := w.parser.Feed(w.buf[w.r:w.w])
			w.r += n
			if err != nil {
				return 0, fb, err
			}
			if done {
				if !w.parser.KeepAlive || !j.KeepAlive {
					w.closeConn()
				}
				return w.parser.Status, fb, nil
			}
		}
		if w.r == w.w {
			w.r, w.w = 0, 0
		} else if w.w == len(w.buf) {
			if w.r > 0 {
				w.w = copy(w.buf, w.buf[w.r:w.w])
				w.r = 0
			} else {
				w.buf = append(w.buf, make([]byte, len(w.buf))...)
			}
		}
		n, err := c.Read(w.buf[w.w:])
		if n > 0 {
			if fb == 0 {
				fb = j.Since()
			}
			w.w += n
			if w.w == len(w.buf) && len(w.buf) < maxReadBuf {
				w.buf = append(w.buf, make([]byte, len(w.buf))...)
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			done, perr := w.parser.EOF()
			if perr != nil {
				return 0, fb, perr
			}
			if done {
				w.closeConn()
				return w.parser.Status, fb, nil
			}
		}
		if err != nil {
			return 0, fb, err
		}
	}
}

// dialSlots bounds the connections being set up at once, so a large -c
// neither overflows the server's accept backlog (SYN retries cost a second
// each) nor piles up thousands of half-built connections in memory.
var dialSlots = make(chan struct{}, 256)

type dialResult struct {
	c   net.Conn
	tm  transport.Timing
	err error
}

// dial connects on a short-lived goroutine: name resolution and connection
// setup need deep stacks, and a goroutine's stack does not shrink back while
// it sits in Read, so dialing on the worker's own stack would cost every
// connection 8 KiB of stack instead of 4 for the rest of the run.
func (w *worker) dial() (net.Conn, transport.Timing, error) {
	select {
	case dialSlots <- struct{}{}:
	case <-w.ctx.Done():
		return nil, transport.Timing{}, w.ctx.Err()
	}
	defer func() { <-dialSlots }()
	ch := make(chan dialResult, 1)
	go func() {
		c, tm, err := w.j.Dialer.Dial(w.ctx)
		ch <- dialResult{c, tm, err}
	}()
	r := <-ch
	return r.c, r.tm, r.err
}
