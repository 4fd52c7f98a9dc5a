package serve

import (
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/listen"
	"github.com/hail-loadgen/hail/internal/schedule"
)

// Defaults used when the corresponding Config field is zero.
const (
	// DefaultAddr is the default listen address (loopback only).
	DefaultAddr = "127.0.0.1:8080"
	// DefaultReadBufferSize is the default per-connection read buffer size.
	DefaultReadBufferSize = 4 << 10
	// DefaultMaxHeaderBytes is the default cap on a request head.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxBodyBytes is the default cap on a request body.
	DefaultMaxBodyBytes = 8 << 20
)

// ErrServerClosed is returned by Listen when the server has been closed.
var ErrServerClosed = errors.New("serve: server closed")

// Config configures a Server. The zero value is usable.
type Config struct {
	// Addr is the listen address, default "127.0.0.1:8080". "unix:/path"
	// listens on a unix socket at /path (a stale socket file left by a dead
	// server is removed first).
	Addr string

	// ReadBufferSize is the size of each connection's read buffer, default
	// 4 KiB (minimum 64). The buffer grows temporarily, to a little over
	// MaxHeaderBytes, only while a larger request head is being read.
	ReadBufferSize int

	// MaxHeaderBytes caps the request head (request line and header fields),
	// default 64 KiB. Larger heads are answered with 431 and a close.
	MaxHeaderBytes int

	// MaxBodyBytes caps request bodies, default 8 MiB. Larger bodies are
	// answered with 413 and a close.
	MaxBodyBytes int64

	// IdleTimeout, when positive, closes a connection on which no bytes
	// arrive for that long while the server waits to read. Zero means no
	// timeout (accepted TCP connections still use OS keep-alive probes).
	IdleTimeout time.Duration

	// Seed seeds the per-connection random generators used by fault
	// injection; connection i gets a generator derived from Seed and i, and
	// item ids are derived from it too. Zero picks a random seed.
	Seed uint64
}

// Server is the built-in HTTP target. Create it with New, then call Listen
// (optional) and Serve; Close stops it. All methods are safe for concurrent
// use.
type Server struct {
	addr      string
	bufSize   int
	maxHeader int
	maxBody   int64
	idle      time.Duration
	seed      uint64
	start     time.Time

	ls   *listen.Server  // the listener and the connections being served
	done <-chan struct{} // ls.Done(): closed when Close begins

	connSeq atomic.Uint64

	stallMu sync.Mutex
	stalls  map[string]*stallState

	c     counters
	items itemStore

	// noSleep makes delay and stall faults return at once (fuzzing).
	noSleep bool

	clock *schedule.Alarm // precise wake-ups for delay and stall faults
}

// counters holds the live statistics. All fields are updated atomically.
type counters struct {
	requests atomic.Uint64
	accepted atomic.Uint64
	open     atomic.Int64
	bytesIn  atomic.Uint64
	bytesOut atomic.Uint64
	status   [600]atomic.Uint64

	created      atomic.Uint64
	deleted      atomic.Uint64
	live         atomic.Int64
	getHits      atomic.Uint64
	getMisses    atomic.Uint64
	deleteMisses atomic.Uint64
	unknownIDs   atomic.Uint64

	holds     atomic.Uint64
	holdAsked atomic.Int64
	holdTaken atomic.Int64
}

// Stats is a snapshot of the server's counters; it is also the JSON served
// by GET /stats.
type Stats struct {
	// Requests counts responses sent, excluding /healthz and /stats*.
	Requests uint64 `json:"requests"`
	// ConnectionsAccepted counts accepted connections.
	ConnectionsAccepted uint64 `json:"connections_accepted"`
	// ConnectionsOpen is the number of connections currently open.
	ConnectionsOpen int64 `json:"connections_open"`
	// BytesIn counts bytes read from all connections (at the socket, so
	// including /stats and /healthz traffic).
	BytesIn uint64 `json:"bytes_in"`
	// BytesOut counts bytes written to all connections (at the socket).
	BytesOut uint64 `json:"bytes_out"`
	// ByStatus counts the responses in Requests by status code; codes never
	// sent are absent.
	ByStatus map[int]uint64 `json:"by_status"`
	// Items describes the /items resource store.
	Items ItemStats `json:"items"`
	// Holds describes the responses held by delay and stall faults.
	Holds HoldStats `json:"holds"`
}

// HoldStats are the responses held by delay and stall faults: how long the
// server was asked to hold them and how long it did. A busy machine wakes
// its timers late, so Taken exceeds Asked: that difference is the server's
// lateness, which a client measures as latency too.
type HoldStats struct {
	// Count counts the holds (a request with both a delay and a stall
	// counts twice).
	Count uint64 `json:"count"`
	// Asked is the holds' total asked length (JSON: nanoseconds).
	Asked time.Duration `json:"asked_ns"`
	// Taken is their total length as held (JSON: nanoseconds).
	Taken time.Duration `json:"taken_ns"`
}

// ItemStats are the counters of the /items resource store.
type ItemStats struct {
	// Created counts items created by POST /items.
	Created uint64 `json:"created"`
	// Deleted counts items deleted by DELETE /items/{id}.
	Deleted uint64 `json:"deleted"`
	// Live is the number of items currently stored.
	Live int64 `json:"live"`
	// GetHits counts GET (and HEAD) /items/{id} that found the item.
	GetHits uint64 `json:"get_hits"`
	// GetMisses counts GET (and HEAD) /items/{id} answered 404, whether the
	// id was deleted or never issued.
	GetMisses uint64 `json:"get_misses"`
	// DeleteMisses counts DELETE /items/{id} answered 404.
	DeleteMisses uint64 `json:"delete_misses"`
	// UnknownIDRequests counts GET, HEAD and DELETE on /items/{id} whose id
	// this server never issued (including malformed ids).
	UnknownIDRequests uint64 `json:"unknown_id_requests"`
}

// New returns a Server for cfg, filling in defaults. It does not bind.
func New(cfg Config) *Server {
	s := &Server{
		addr:      cfg.Addr,
		bufSize:   cfg.ReadBufferSize,
		maxHeader: cfg.MaxHeaderBytes,
		maxBody:   cfg.MaxBodyBytes,
		idle:      cfg.IdleTimeout,
		seed:      cfg.Seed,
		start:     time.Now(),
		stalls:    make(map[string]*stallState),
	}
	s.clock = schedule.NewAlarm(s.start, 0)
	if s.addr == "" {
		s.addr = DefaultAddr
	}
	s.ls = listen.NewServer(listen.Config{Name: "serve", Addr: s.addr, ErrClosed: ErrServerClosed, Handle: s.serveConn})
	s.done = s.ls.Done()
	if s.bufSize <= 0 {
		s.bufSize = DefaultReadBufferSize
	}
	if s.bufSize < 64 {
		s.bufSize = 64
	}
	if s.maxHeader <= 0 {
		s.maxHeader = DefaultMaxHeaderBytes
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.seed == 0 {
		s.seed = rand.Uint64() | 1
	}
	s.items.init(s.seed)
	return s
}

// Listen binds the configured address and returns the bound address (useful
// with port 0). Calling it more than once is an error; Serve calls it when it
// has not been called.
func (s *Server) Listen() (net.Addr, error) { return s.ls.Listen() }

// Serve accepts and serves connections until Close is called, then returns
// nil. It binds first if Listen has not been called. It returns an error if
// binding or accepting fails for a reason other than Close.
func (s *Server) Serve() error { return s.ls.Serve() }

// serveConn serves one accepted connection (listen.Server's Handle).
func (s *Server) serveConn(nc net.Conn) {
	s.c.accepted.Add(1)
	s.c.open.Add(1)
	defer s.c.open.Add(-1)
	newConn(s, nc).serve()
}

// Close stops listening, closes all connections (interrupting injected delays
// and stalls) and waits for every goroutine the server started, including a
// running Serve, to return. It returns the listener's close error, if any.
func (s *Server) Close() error {
	err := s.ls.Close()
	s.ls.Wait()
	s.clock.Close()
	return err
}

// Stats returns a snapshot of the counters. It only reads atomics (and
// allocates the ByStatus map).
func (s *Server) Stats() Stats {
	c := &s.c
	st := Stats{
		Requests:            c.requests.Load(),
		ConnectionsAccepted: c.accepted.Load(),
		ConnectionsOpen:     c.open.Load(),
		BytesIn:             c.bytesIn.Load(),
		BytesOut:            c.bytesOut.Load(),
		ByStatus:            make(map[int]uint64),
		Items: ItemStats{
			Created:           c.created.Load(),
			Deleted:           c.deleted.Load(),
			Live:              c.live.Load(),
			GetHits:           c.getHits.Load(),
			GetMisses:         c.getMisses.Load(),
			DeleteMisses:      c.deleteMisses.Load(),
			UnknownIDRequests: c.unknownIDs.Load(),
		},
		Holds: HoldStats{Count: c.holds.Load(), Asked: time.Duration(c.holdAsked.Load()), Taken: time.Duration(c.holdTaken.Load())},
	}
	for code := range c.status {
		if n := c.status[code].Load(); n > 0 {
			st.ByStatus[code] = n
		}
	}
	return st
}

// ResetStats zeroes all counters except the gauges (open connections,
// live items), as POST /stats/reset does.
func (s *Server) ResetStats() { s.resetStats() }

// resetStats zeroes all counters except the gauges (open connections, live
// items).
func (s *Server) resetStats() {
	c := &s.c
	c.requests.Store(0)
	c.accepted.Store(0)
	c.bytesIn.Store(0)
	c.bytesOut.Store(0)
	for i := range c.status {
		c.status[i].Store(0)
	}
	c.holds.Store(0)
	c.holdAsked.Store(0)
	c.holdTaken.Store(0)
	c.created.Store(0)
	c.deleted.Store(0)
	c.getHits.Store(0)
	c.getMisses.Store(0)
	c.deleteMisses.Store(0)
	c.unknownIDs.Store(0)
}

// since returns the monotonic time since the server was created.
func (s *Server) since() time.Duration { return time.Since(s.start) }

// IsLoopback reports whether a listen address only accepts local
// connections: a loopback IP, "localhost", or a "unix:" socket. An empty host
// (":8080", all interfaces) and other host names are not loopback.
func IsLoopback(addr string) bool {
	if strings.HasPrefix(addr, "unix:") {
		return true
	}
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return ip.Unmap().IsLoopback()
}
