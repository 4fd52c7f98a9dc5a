package llmserve

import (
	"encoding/json"
	"errors"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/listen"
)

// ErrServerClosed is returned by Listen after Close.
var ErrServerClosed = errors.New("llmserve: server closed")

// Server is the mock inference server. Create it with New, then Listen
// (optional) and Serve; Close stops it and flushes its log.
type Server struct {
	cfg      Config
	start    time.Time
	wallBase int64        // Unix ns at start
	prefix   *prefixCache // nil: no prefix cache

	ls   *listen.Server  // the listener and the connections being served
	done <-chan struct{} // ls.Done(): closed when Close begins
	wg   sync.WaitGroup  // the scheduler's goroutines and the HTTP/2 server's

	connSeq atomic.Uint64
	reqSeq  atomic.Uint64

	slots  slots
	shards []*shard

	h2   *http.Server
	h2ln *chanListener

	log        *reqLog
	modelsJSON []byte
	closeOnce  sync.Once
	closeErr   error
	c          counters
}

// counters are the live statistics, updated atomically.
type counters struct {
	requests    atomic.Uint64
	badRequests atomic.Uint64
	tokens      atomic.Uint64
	chunks      atomic.Uint64
	running     atomic.Int64
	queued      atomic.Int64
	accepted    atomic.Uint64
	outcomes    [len(outcomeNames)]atomic.Uint64

	prefixQueried, prefixHits atomic.Uint64
}

// Stats is a snapshot of the counters, also served as JSON by GET /stats.
type Stats struct {
	// Requests counts generation requests received (both endpoints).
	Requests uint64 `json:"requests"`
	// BadRequests counts generation requests answered 400.
	BadRequests uint64 `json:"bad_requests"`
	// Completed counts requests whose every token was sent.
	Completed uint64 `json:"completed"`
	// Rejected counts 429 and 503 faults.
	Rejected uint64 `json:"rejected"`
	// ErrorEvents counts error faults (error events, or 500s when not streaming).
	ErrorEvents uint64 `json:"error_events"`
	// Dropped counts drop faults.
	Dropped uint64 `json:"dropped"`
	// ClientGone counts requests whose client went away first.
	ClientGone uint64 `json:"client_gone"`
	// Running is the number of requests holding a batch slot.
	Running int64 `json:"running"`
	// Queued is the number of requests waiting for a slot.
	Queued int64 `json:"queued"`
	// Tokens counts output tokens sent.
	Tokens uint64 `json:"tokens"`
	// Chunks counts streamed chunks that carried tokens (the events a
	// client reads per token, or per k tokens).
	Chunks uint64 `json:"chunks"`
	// Connections counts accepted connections.
	Connections uint64 `json:"connections"`
	// PrefixQueriedTokens counts the prompt tokens of the requests that
	// took a slot, with a prefix cache; PrefixHitTokens those of them
	// found in the cache (not prefilled again).
	PrefixQueriedTokens uint64 `json:"prefix_cache_queried_tokens"`
	PrefixHitTokens     uint64 `json:"prefix_cache_hit_tokens"`
}

// New returns a Server for cfg, filling in defaults, or the configuration's
// error. It starts the scheduler goroutines; Close stops them.
func New(cfg Config) (*Server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64() | 1
	}
	s := &Server{cfg: cfg, start: time.Now()}
	lc := listen.Config{Name: "llmserve", Addr: cfg.Addr, ErrClosed: ErrServerClosed, Handle: s.serveConn}
	if cfg.Log != nil {
		s.log = newReqLog(cfg.Log)
		lc.Bound = enableListenerRx // arrival times from the first byte
	}
	s.ls = listen.NewServer(lc)
	s.done = s.ls.Done()
	s.wallBase = s.start.UnixNano()
	s.slots.free = cfg.Slots
	if cfg.PrefixCacheTokens > 0 {
		s.prefix = newPrefixCache(cfg.PrefixCacheTokens)
	}
	models, _ := json.Marshal(map[string]any{"object": "list", "data": []map[string]any{
		{"id": cfg.Model, "object": "model", "created": s.wallBase / 1e9, "owned_by": "hail", "max_model_len": maxOutputTokens},
	}})
	s.modelsJSON = append(models, '\n')
	for range runtime.GOMAXPROCS(0) {
		sh := &shard{s: s, timer: newShardTimer(s.start)}
		s.shards = append(s.shards, sh)
		s.wg.Add(1)
		go sh.run()
	}
	s.h2ln = &chanListener{conns: make(chan net.Conn), done: s.done, addr: s.ls.Addr}
	s.h2 = &http.Server{Handler: h2Handler{s}, Protocols: new(http.Protocols), ErrorLog: log.New(io.Discard, "", 0)}
	s.h2.Protocols.SetUnencryptedHTTP2(true)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.h2.Serve(s.h2ln)
	}()
	return s, nil
}

// Listen binds the configured address ("host:port", or "unix:/path") and
// returns the bound address.
func (s *Server) Listen() (net.Addr, error) { return s.ls.Listen() }

// Serve accepts connections until Close, then returns nil (binding first if
// Listen was not called).
func (s *Server) Serve() error { return s.ls.Serve() }

// serveConn serves one accepted connection (listen.Server's Handle),
// closing it unless the HTTP/2 server took it.
func (s *Server) serveConn(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	s.c.accepted.Add(1)
	if !newConn(s, nc, s.connSeq.Add(1)).serve() {
		nc.Close()
	}
}

// handH2 gives a connection that opened with the HTTP/2 preface to the
// HTTP/2 server.
func (s *Server) handH2(c net.Conn) {
	select {
	case s.h2ln.conns <- c:
	case <-s.done:
		c.Close()
	}
}

// Close stops listening, closes every connection, stops the scheduler, logs
// the requests still queued or generating as unfinished and flushes the
// log. It returns the first error of closing the listener or writing the
// log; later calls wait for the first and return the same.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	err := s.ls.Close()
	s.h2.Close()
	for _, sh := range s.shards {
		sh.timer.close()
	}
	s.ls.Wait()
	s.wg.Wait()
	now := s.since()
	s.slots.mu.Lock()
	queued := s.slots.queue[s.slots.head:]
	s.slots.queue, s.slots.head = nil, 0
	s.slots.mu.Unlock()
	for _, st := range queued {
		st.finish(now, outUnfinished)
	}
	for _, sh := range s.shards {
		sh.closeAll()
	}
	if s.log != nil {
		if lerr := s.log.close(); err == nil {
			err = lerr
		}
	}
	return err
}

// closing reports whether Close has begun.
func (s *Server) closing() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	c := &s.c
	return Stats{
		Requests:    c.requests.Load(),
		BadRequests: c.badRequests.Load(),
		Completed:   c.outcomes[outComplete].Load(),
		Rejected:    c.outcomes[outRejected].Load(),
		ErrorEvents: c.outcomes[outErrorEvent].Load(),
		Dropped:     c.outcomes[outDropped].Load(),
		ClientGone:  c.outcomes[outClientGone].Load(),
		Running:     c.running.Load(),
		Queued:      c.queued.Load(),
		Tokens:      c.tokens.Load(),
		Chunks:      c.chunks.Load(),
		Connections: c.accepted.Load(),

		PrefixQueriedTokens: c.prefixQueried.Load(),
		PrefixHitTokens:     c.prefixHits.Load(),
	}
}

func (s *Server) statsJSON() []byte {
	b, _ := json.Marshal(s.Stats())
	return append(b, '\n')
}

// since is the monotonic time since the server started.
func (s *Server) since() time.Duration { return time.Since(s.start) }

// unixNow is the current Unix time in ns, on the monotonic clock's count
// since the start.
func (s *Server) unixNow() int64 { return s.wallBase + int64(time.Since(s.start)) }

// route is an endpoint.
type route uint8

const (
	routeNotFound route = iota
	routeCompletions
	routeChat
	routeModels
	routeHealth
	routeStats
)

func routeOf(path []byte) route {
	switch string(path) {
	case "/v1/completions":
		return routeCompletions
	case "/v1/chat/completions":
		return routeChat
	case "/v1/models":
		return routeModels
	case "/health":
		return routeHealth
	case "/stats":
		return routeStats
	}
	return routeNotFound
}

// allows returns the methods the route takes and whether method is one.
func (rt route) allows(method string) (string, bool) {
	switch rt {
	case routeNotFound:
		return "", true
	case routeCompletions, routeChat:
		return "POST", method == "POST"
	}
	return "GET, HEAD", method == "GET" || method == "HEAD"
}

func (rt route) api() apiKind {
	if rt == routeChat {
		return apiChat
	}
	return apiCompletions
}

// chanListener hands connections to the HTTP/2 server.
type chanListener struct {
	conns chan net.Conn
	done  <-chan struct{}
	addr  func() net.Addr // the server's bound address
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error { return nil }

func (l *chanListener) Addr() net.Addr { return l.addr() }
