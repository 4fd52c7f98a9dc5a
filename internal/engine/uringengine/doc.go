// Package uringengine is hail's io_uring engine for plain HTTP/1.1 over TCP
// and unix sockets (Linux only). It speaks through the same codec as the net
// engine (internal/http1) and records the same statistics, but drives its
// sockets through io_uring instead of one goroutine per connection.
//
// # Workers
//
// The connections are spread evenly over Workers goroutines (GOMAXPROCS by
// default). Each worker is locked to its OS thread and owns one ring, created
// on that thread (SINGLE_ISSUER|DEFER_TASKRUN bind the ring to it), one
// provided-buffer ring for receives, its own request builder and its own
// recorder shard. A worker is an event loop: it reaps every completion that
// is ready, reacts to each (parse bytes, record a response, claim and queue
// the next request), queues all the new submissions and then makes exactly
// one io_uring_enter that submits them and waits for the next completion.
// The cost of a system call is shared by every request in the batch.
//
// # Connections
//
// Sockets are opened with socket(2) (blocking: io_uring polls them), get
// TCP_NODELAY, and connect with IORING_OP_CONNECT, so thousands of
// connections are set up in a few batches. Once connected, a connection keeps
// one multishot receive armed that picks buffers from the worker's provided
// buffer ring, so an idle connection holds no receive buffer of its own; the
// bytes are fed to the connection's http1.Parser straight from the kernel's
// buffer, which is handed back at once. Only when a line of the response
// (status, header, chunk size) is split between two buffers are its bytes
// copied, into a small per-connection carry buffer grown on demand. Requests
// are sent with IORING_OP_SEND from stable memory: the pre-encoded bytes of
// an engine.Static builder as they are, any other builder's bytes (and
// redirected requests) copied into per-connection buffers in mmapped arena
// memory. Short sends are resumed.
//
// A connection is closed by an IORING_OP_SHUTDOWN, which wakes whatever is
// pending on the socket (the receive ends, a send or connect fails), hard-
// linked to an IORING_OP_CLOSE: both cost O(1), where a cancellation by
// descriptor scans every request of the ring. Completions that arrive for a
// closed connection carry an older generation number in their user data and
// are only used to recycle their buffers. At the end of the run every socket
// is shut down and closed the same way and every completion is drained
// before the ring is closed, so no operation outlives the memory it uses.
//
// The hybrid vsock transport (--vsock-uds: a Firecracker or Cloud Hypervisor
// unix socket) is a unix socket connection followed by a "CONNECT <port>\n"
// handshake, sent and answered through the ring like any other bytes; the
// connect timeout spans the handshake.
//
// # Timing
//
// Every request is an engine.Call, driven as on every engine. In the closed
// model each connection loops claim → send → receive → end; latency counts
// from the moment the request's first operation was submitted. In the open
// model the worker claims requests from the shared, lock-free
// schedule.Source itself; the next intended time is the timeout of the same
// io_uring_enter that submits the batch's sends. Every due request starts in
// the batch that finds it due while a connection is idle; one that finds
// them all busy waits, and that wait is recorded as connection wait, the
// rest of its lateness as hail's own.
//
// Request timeouts (-t, the whole request with its redirects) and connect
// timeouts are deadlines in two per-worker lists kept in deadline order; a
// connection can be in both. The loop expires their heads and bounds its
// wait by the earliest deadline, and by 50 ms, so a worker notices the end
// of the run or an abort promptly. At an abort, a request whose send is in
// flight waits for the send's completion to know whether it was sent.
//
// # Redirects
//
// A hop on the same origin goes over the connection; the first hop to
// another origin hands the rest of the chain to a helper goroutine
// (engine.Job.FollowAway, as the net engine follows it), which wakes the
// ring through an eventfd when done (away_linux.go).
//
// # Limits
//
// Plain HTTP/1.1 (and 1.0) only: TLS, AF_VSOCK and proxies need the net
// engine (other origins met in a redirect are the helper's). With
// --no-pre-lookup a worker resolves the name on its own thread when it
// connects, which blocks that worker's other connections for the lookup.
// See docs/engines.md.
package uringengine
