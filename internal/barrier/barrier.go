// Package barrier is a shard's side of the start barrier of a distributed
// run (--start-at barrier, which hail kube gives its shards): the shard
// prepares its run, says it is ready, and waits until a coordinator has
// seen every shard ready and published one start time, a little ahead, for
// all of them. A shard that is never told to start sends nothing.
//
// The coordinator reaches the shard over HTTP — through the Kubernetes API
// server's pod proxy, so the cluster needs no DNS and the shard no
// credentials — on the address the shard already serves its metrics on:
//
//	GET  /ready          200 {"ready":true,...} once prepared (503 before),
//	                     with the shard's wall clock, so the coordinator can
//	                     publish the time in the shards' clock
//	POST /start?at=NS    start at that Unix time in nanoseconds (once; the
//	                     same time again is accepted, another is refused)
//	POST /stop?why=TEXT  before the start: call the run off (nothing is
//	                     sent); after it: stop the run as SIGTERM does
//
// With a token (TokenEnv), /start and /stop need it in the TokenHeader:
// another pod of the cluster cannot start or stop a run it did not make.
//
// It is plain net/http: the protocol is three requests, and the shard image
// holds nothing else.
package barrier

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// TokenEnv is the environment variable that gives a shard its barrier's
// token; TokenHeader carries it in /start and /stop.
const (
	TokenEnv    = "HAIL_BARRIER_TOKEN"
	TokenHeader = "X-Hail-Barrier-Token"
)

// MaxWait bounds how long a shard waits at the barrier for its start time:
// a coordinator that went away must not leave the shard waiting forever.
const MaxWait = time.Hour

// MinLead is how far ahead of a shard's clock a published start time must
// be: less could not reach every shard before it.
const MinLead = 100 * time.Millisecond

// State is what GET /ready answers.
type State struct {
	// Ready is set once the shard is prepared and waits for its start.
	Ready bool `json:"ready"`
	// Shard is the shard, "I/N".
	Shard string `json:"shard"`
	// NowUnixNano is the shard's wall clock when it answered.
	NowUnixNano int64 `json:"now_unix_nano"`
	// StartUnixNano is the published start time (0: none yet).
	StartUnixNano int64 `json:"start_unix_nano,omitempty"`
	// Stopped says the run was called off or stopped, and why.
	Stopped string `json:"stopped,omitempty"`
}

// Gate is one shard's barrier. Serve its Handler, then call Wait once the
// run is prepared.
type Gate struct {
	shard  string
	token  string // what /start and /stop must carry ("": nothing)
	now    func() time.Time
	onStop func() // stops a run that started (as SIGTERM); nil: none

	mu      sync.Mutex
	ready   bool
	at      time.Time     // the published start; zero before
	started chan struct{} // closed when at is set
	stopped string        // why the run was called off or stopped
	stop    chan struct{} // closed when stopped is set
}

// New returns the gate of shard ("I/N"). onStop, if set, is called when a
// stop is asked after the start (hail sends itself SIGTERM, so the stop
// goes through the signal handling every run has).
func New(shard string, onStop func()) *Gate {
	return &Gate{shard: shard, now: time.Now, onStop: onStop, started: make(chan struct{}), stop: make(chan struct{})}
}

// RequireToken makes /start and /stop refuse a request without token.
func (g *Gate) RequireToken(token string) { g.token = token }

// authorized refuses a /start or /stop without the token.
func (g *Gate) authorized(w http.ResponseWriter, r *http.Request) bool {
	if g.token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(g.token)) != 1 {
		http.Error(w, "no or wrong barrier token", http.StatusForbidden)
		return false
	}
	return true
}

// Handler serves /ready, /start and /stop.
func (g *Gate) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ready", g.serveReady)
	mux.HandleFunc("POST /start", g.serveStart)
	mux.HandleFunc("POST /stop", g.serveStop)
	return mux
}

// Paths are the paths Handler serves, for mounting it on another mux.
var Paths = []string{"/ready", "/start", "/stop"}

func (g *Gate) state() State {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := State{Ready: g.ready, Shard: g.shard, NowUnixNano: g.now().UnixNano(), Stopped: g.stopped}
	if !g.at.IsZero() {
		st.StartUnixNano = g.at.UnixNano()
	}
	return st
}

func (g *Gate) serveReady(w http.ResponseWriter, _ *http.Request) {
	st := g.state()
	code := http.StatusOK
	if !st.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, st)
}

func (g *Gate) serveStart(w http.ResponseWriter, r *http.Request) {
	if !g.authorized(w, r) {
		return
	}
	ns, err := strconv.ParseInt(r.URL.Query().Get("at"), 10, 64)
	if err != nil || ns <= 0 {
		http.Error(w, "give the start time as at=UNIX_NANOSECONDS", http.StatusBadRequest)
		return
	}
	if err := g.Start(time.Unix(0, ns)); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	writeJSON(w, http.StatusOK, g.state())
}

func (g *Gate) serveStop(w http.ResponseWriter, r *http.Request) {
	if !g.authorized(w, r) {
		return
	}
	why := r.URL.Query().Get("why")
	if why == "" {
		why = "stopped by the coordinator"
	}
	// The coordinator gets its whole answer before the stop takes effect:
	// once it does, the shard ends (called off, it exits at once) and its
	// connections with it.
	stop := g.stopping(why)
	writeJSON(w, http.StatusOK, g.state())
	stop()
}

// Start publishes the start time. It is refused before the shard is
// ready, after a stop, for a time less than MinLead ahead of the shard's
// clock, and for a time other than the one already published.
func (g *Gate) Start(at time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.stopped != "":
		return fmt.Errorf("shard %s: the run was stopped (%s)", g.shard, g.stopped)
	case !g.at.IsZero() && g.at.Equal(at):
		return nil
	case !g.at.IsZero():
		return fmt.Errorf("shard %s: the start is already set to %s", g.shard, g.at.UTC().Format(time.RFC3339Nano))
	case !g.ready:
		return fmt.Errorf("shard %s is not ready", g.shard)
	}
	if lead := at.Sub(g.now()); lead < MinLead {
		return fmt.Errorf("shard %s: the start %s is %s ahead of its clock, less than %s", g.shard, at.UTC().Format(time.RFC3339Nano), lead.Round(time.Millisecond), MinLead)
	}
	g.at = at
	close(g.started)
	return nil
}

// Stop calls the run off before the start, or stops it after (onStop).
func (g *Gate) Stop(why string) { g.stopping(why)() }

// stopping records a stop (the first one's why; a start is refused from
// now) and returns what carries it out: Wait returns (called off), or
// onStop is called (stopped after the start).
func (g *Gate) stopping(why string) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped != "" {
		return func() {}
	}
	g.stopped = why
	started := !g.at.IsZero()
	return func() {
		close(g.stop)
		if started && g.onStop != nil {
			g.onStop()
		}
	}
}

// ErrStopped is returned by Wait when the run was called off before the start.
var ErrStopped = errors.New("called off")

// Wait says the shard is ready and waits for its start time (it does not
// wait for the time itself: the run does, precisely). It fails when the
// run is called off (/stop), when interrupt is closed or ctx ends, or after
// MaxWait.
func (g *Gate) Wait(ctx context.Context, interrupt <-chan struct{}) (time.Time, error) {
	g.mu.Lock()
	g.ready = true
	g.mu.Unlock()
	t := time.NewTimer(MaxWait)
	defer t.Stop()
	select {
	case <-g.started:
	case <-g.stop:
	case <-interrupt:
		return time.Time{}, errors.New("interrupted while waiting at the start barrier: nothing was sent")
	case <-ctx.Done():
		return time.Time{}, fmt.Errorf("waiting at the start barrier: %w", ctx.Err())
	case <-t.C:
		return time.Time{}, fmt.Errorf("no start time came within %s at the start barrier: nothing was sent", MaxWait)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.at.IsZero() { // started; a stop after it goes through onStop
		return g.at, nil
	}
	return time.Time{}, fmt.Errorf("the run was %w before its start (%s): nothing was sent", ErrStopped, g.stopped)
}

// writeJSON answers v, whole (with its length) and flushed: a stop acts
// right after, and may end the process.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
	_ = http.NewResponseController(w).Flush()
}
