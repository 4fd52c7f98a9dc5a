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
)

const readBufSize = 4096

// worker drives one connection: it takes a request, sends it, reads the
// response and records the outcome, reconnecting when the connection ends.
type worker struct {
	j       *engine.Job
	index   int // connection number, for connection stages
	shard   int
	reqs    engine.Requests
	scratch []byte          // request bytes built by reqs
	rec     *stats.Recorder // the current request's step's recorder
	tickets <-chan ticket
	ctx     context.Context
	cancel  context.CancelFunc

	mu      sync.Mutex // guards c against abort; taken per connection, not per request
	c       net.Conn
	aborted bool

	buf    []byte
	r, w   int // unconsumed response bytes are buf[r:w]
	parser http1.Parser
	redir  []byte // scratch for encoding redirected requests
}

func newWorker(j *engine.Job, i int, tickets <-chan ticket) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &worker{j: j, index: i, shard: i % len(j.Recorders[0]), reqs: j.NewRequests(i), tickets: tickets, ctx: ctx, cancel: cancel,
		buf: make([]byte, readBufSize)}
	w.rec = j.Recorders[0][w.shard]
	w.parser.BodyLimit = j.BodyLimit
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
		var hit uint64
		var at time.Duration
		var ok, queued bool
		if w.tickets != nil {
			var t ticket
			select {
			case t, ok = <-w.tickets:
				queued = true
			default:
				select {
				case t, ok = <-w.tickets:
				case <-j.Stop:
				}
			}
			hit, at = t.hit, t.at
		} else {
			if active, wait, never := j.Source.Active(w.index, j.Since()); !active {
				if never {
					return
				}
				w.closeConn() // ramped down: free the server's connection while idle
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-j.Stop:
					t.Stop()
					return
				}
				continue
			}
			hit, at, ok = j.Source.Claim(j.Since())
		}
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
		if w.do(req, head, at, start) {
			w.reqs.Done(step, &w.parser)
		} else {
			w.reqs.Done(step, nil)
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
			return true
		}
		if hops >= j.MaxRedirects {
			w.rec.Error(stats.ErrTooManyRedirects)
			return false
		}
		next, err := u.Parse(string(w.parser.Location))
		if err != nil || (next.Scheme != "http" && next.Scheme != "https") {
			w.rec.Error(stats.ErrRedirect)
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
		w.rec.Error(stats.ErrAborted)
		return
	}
	w.rec.Error(engine.Classify(err, mid))
}

// exchange writes req on the worker's connection (dialing one if needed)
// and reads one response. It returns the status and the first-byte time.
func (w *worker) exchange(req []byte, head bool, start time.Duration) (int, time.Duration, error) {
	j := w.j
	w.parser.Reset(head)
	if w.c == nil {
		c, tm, err := j.Dialer.Dial(w.ctx)
		if err != nil {
			return 0, 0, err
		}
		w.rec.Connected(int64(tm.DNS), int64(tm.Total))
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
