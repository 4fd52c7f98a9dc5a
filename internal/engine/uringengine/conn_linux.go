//go:build linux

package uringengine

import (
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
)

// conn is one connection slot of a worker: its socket (if any) and the
// request in progress on it.
type conn struct {
	reqs engine.Requests   // the worker's builder, or this connection's own (Job.PerConnection)
	sb   engine.SharedBody // reqs' shared bodies; nil: every request holds its own
	idx  int32
	gen  uint32 // bumped at every close; stale completions carry an older one
	fd   int32  // -1 when there is no socket

	connecting  bool // a connect is in flight
	handshaking bool // hybrid vsock: connected, the CONNECT reply not read yet
	connected   bool
	recvArmed   bool // the multishot receive is armed
	sending     bool // a send is in flight; req must not change
	eof         bool // the peer closed its side
	inFree      bool // in the worker's idle queue
	stamp       bool // the call starts (and its deadline begins) at the next submission
	head        bool // the current hop is HEAD
	away        bool // a helper goroutine follows the request's redirects to another origin
	draining    bool // aborting: waits for its send's completion to know whether the request was sent

	served  int   // responses this socket carried (a stale keep-alive connection is retried)
	sendErr error // the send failed: waiting for a response the server may have sent first

	call  engine.Call  // the request in progress (call.Live())
	chain engine.Chain // its redirect chain

	connStart  time.Duration
	dns        time.Duration
	thinkUntil time.Duration // closed model: when its ended request's think time is over (think_linux.go)
	// readyAt is when the slot was ready for its next request: its last
	// request's end (the response's kernel receive time), plus that
	// request's think time; -1 before its first request or after it was
	// parked.
	readyAt time.Duration

	req     []byte // the current hop's request: stable memory
	body    []byte // the current hop's shared body, sent after req from where it is (nil: none)
	out     []byte // the bytes being sent (req, its body, or the vsock CONNECT line)
	inBody  bool   // out is body: req was sent
	sent    int
	sendBuf []byte // arena memory for copied requests
	sa      []byte // arena memory for the connect sockaddr

	parser http1.Parser
	carry  []byte // unconsumed bytes: a split line, or bytes that came early

	dl [numLists]link // its places in the worker's deadline lists
}

// active reports whether a request is in progress on c.
func (c *conn) active() bool { return c.call.Live() }
