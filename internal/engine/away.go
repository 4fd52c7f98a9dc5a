package engine

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/redirect"
)

// ErrTooManyRedirects is a redirect chain longer than Job.MaxRedirects.
var ErrTooManyRedirects = errors.New("too many redirects")

// ErrOtherOrigin is a redirect to another origin in a job that cannot
// dial one (it has no RedirectDialer).
var ErrOtherOrigin = errors.New("redirect to another origin: no dialer for it")

// Chain is the state of one request's redirect chain: the URL of the hop
// in progress, its request bytes and how many redirects were followed.
type Chain struct {
	// URL is the current hop's URL: the job's (the origin's) before the
	// first redirect, the hop's own after one.
	URL *url.URL
	// Req is the current hop's request (wire bytes).
	Req []byte
	// Body, when not nil, is the current hop's body, sent after Req, which
	// is then the head alone (SharedBody): a hop that keeps the body (307,
	// 308) and a retry send the same shared bytes, never a copy.
	Body []byte
	// Hops is how many redirects were followed so far.
	Hops int
	buf  [2][]byte // the rewritten requests, alternating so that Req never aliases the next one
}

// Reset starts a chain for req (followed by the shared body, if not nil),
// sent to the job's origin.
func (ch *Chain) Reset(j *Job, req, body []byte) {
	ch.URL, ch.Req, ch.Body, ch.Hops = j.URL, req, body, 0
}

// Follow decides what a response with p's status asks for. follow is false
// when the response is the request's result (not a redirect, redirects are
// off, or it has no Location). Otherwise Follow moves the chain to the next
// hop (ch.Req, ch.URL) and reports whether it stays on the origin of the
// connection it came from (same is true: the connection may be reused). An
// error (ErrTooManyRedirects, a bad Location) ends the request.
func (ch *Chain) Follow(j *Job, p *http1.Parser) (follow, same bool, err error) {
	if j.MaxRedirects == 0 || !redirect.Is(p.Status) || len(p.Location) == 0 {
		return false, false, nil
	}
	if ch.Hops >= j.MaxRedirects {
		return true, false, ErrTooManyRedirects
	}
	cur := ch.URL // after a hop, the URL the hop's request was written for
	if ch.Hops == 0 {
		cur = redirect.URLOf(ch.URL, ch.Req) // the request's own target, against the job's origin
	}
	hop, err := redirect.Next(cur, p.Status, redirect.Method(ch.Req), p.Location)
	if err != nil {
		return true, false, err
	}
	i := ch.Hops & 1
	b, err := redirect.Rewrite(ch.buf[i][:0], ch.Req, hop)
	if err != nil {
		return true, false, err
	}
	ch.buf[i] = b
	ch.URL, ch.Req = hop.URL, b
	if !hop.KeepBody {
		ch.Body = nil // a 303 (or a 301/302 after POST) goes on as a GET without it
	}
	ch.Hops++
	return true, hop.SameOrigin, nil
}

// Head reports whether the current hop is a HEAD request.
func (ch *Chain) Head() bool { return redirect.Method(ch.Req) == "HEAD" }

// FollowAway runs the rest of a redirect chain that has left the origin of
// the request's connection, on the calling goroutine: each hop over a
// blocking connection of its own (kept for the next hop when that goes to
// the same origin, closed at the end), with the same rules as every other
// hop. It returns with the final response in p, or the error that ended
// the request. deadline (zero: none) bounds the whole chain; closing abort
// (the job's Abort, or an engine's own) ends it at once.
//
// Engines call it for the first hop that leaves the origin: the net engine
// on the connection's goroutine, the uring engine on a helper goroutine.
func (j *Job) FollowAway(call *Call, ch *Chain, p *http1.Parser, deadline time.Time, abort <-chan struct{}) error {
	if j.RedirectDialer == nil {
		return ErrOtherOrigin
	}
	var g Guard
	x := Wire{Guard: &g}
	defer func() { g.Set(nil); x.Close() }()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-abort:
			g.Abort()
		case <-stop:
		}
	}()
	var origin *url.URL
	for {
		if x.Conn == nil || !redirect.SameOrigin(origin, ch.URL) {
			g.Set(nil)
			x.Close()
			d, err := j.RedirectDialer(ch.URL)
			if err != nil {
				return err
			}
			c, _, err := d.Dial(g.Ctx())
			if err != nil {
				return err
			}
			if !deadline.IsZero() {
				_ = c.SetDeadline(deadline)
			}
			x.Attach(c)
			g.Set(c)
			origin = ch.URL
		}
		p.Reset(ch.Head())
		keep, _, err := x.RoundTrip(call, ch.Req, ch.Body, p, j.Since, deadline, g.Aborted)
		if err != nil {
			return err
		}
		if !keep || !j.KeepAlive {
			g.Set(nil)
			x.Close()
		}
		follow, _, err := ch.Follow(j, p)
		if err != nil || !follow {
			return err
		}
	}
}

// Guard lets the run's abort end a blocking connection owned by another
// goroutine: a dial in progress through its context, a read or write by a
// deadline in the past — also on a connection set after the abort came.
// The net engine's connections and FollowAway's are guarded by one each.
// The zero Guard is ready to use; it must not be copied after first use.
type Guard struct {
	mu      sync.Mutex
	c       net.Conn
	aborted bool
	cctx    context.Context
	cancel  context.CancelFunc
}

// Ctx is the context dials run under; it ends at the abort (it is ended
// already when the abort came first).
func (g *Guard) Ctx() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cctx == nil {
		g.cctx, g.cancel = context.WithCancel(context.Background())
		if g.aborted {
			g.cancel()
		}
	}
	return g.cctx
}

// Set makes c the connection the abort ends (nil: none); after the abort,
// c gets its past deadline at once.
func (g *Guard) Set(c net.Conn) {
	g.mu.Lock()
	g.c = c
	if g.aborted && c != nil {
		_ = c.SetDeadline(time.Unix(1, 0))
	}
	g.mu.Unlock()
}

// SetDeadline sets d on the guarded connection, unless the abort came
// first: its past deadline then stays (a request's deadline set after it
// would let a blocked read outlive the run).
func (g *Guard) SetDeadline(d time.Time) {
	g.mu.Lock()
	if g.c != nil && !g.aborted {
		_ = g.c.SetDeadline(d)
	}
	g.mu.Unlock()
}

// Aborted reports whether Abort was called.
func (g *Guard) Aborted() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.aborted
}

// Abort ends the guarded connection now: a blocked read or write on it
// fails at once (a deadline in the past), and the dials under Ctx are
// cancelled.
func (g *Guard) Abort() {
	g.mu.Lock()
	g.aborted = true
	if g.c != nil {
		_ = g.c.SetDeadline(time.Unix(1, 0))
	}
	if g.cancel != nil {
		g.cancel()
	}
	g.mu.Unlock()
}
