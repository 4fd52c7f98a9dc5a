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
// In the closed model each connection loops claim → send → receive →
// record; latency counts from the moment the request's first operation was
// submitted. In the open model the worker claims requests from the shared,
// lock-free schedule.Source itself and sleeps until the next intended time
// with an absolute CLOCK_MONOTONIC IORING_OP_TIMEOUT. A request whose time has
// come takes an idle connection of the worker (its lateness is recorded as
// schedule lag) or waits in the worker's FIFO until one is free (recorded as
// queued, with its wait); latency counts from its intended time either way.
//
// Request timeouts (-t) and connect timeouts are deadlines in two per-worker
// lists kept in deadline order (every entry of a list has the same duration,
// so appending keeps the order); the loop expires their heads and bounds its
// wait by the earliest deadline. The wait is also bounded by 50 ms, so a
// worker notices the end of the run or an abort promptly; an abort cancels
// every operation, closes every socket and records each in-flight request as
// aborted.
//
// # Limits
//
// Plain HTTP/1.1 (and 1.0) only: TLS, AF_VSOCK and proxies need the net
// engine. Redirects are followed within the same origin; a redirect to
// another origin is recorded as a bad redirect. With --no-pre-lookup a
// worker resolves the name on its own thread when it connects, which blocks
// that worker's other connections for the lookup. See docs/engines.md.
package uringengine
