package h2engine

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// batchConn is a connection whose writes are queued and written by one
// goroutine: frames that many streams write in quick succession (each
// request's HEADERS, WINDOW_UPDATEs) leave in one system call instead of one
// each, as an event-loop client such as h2load sends them. Write returns
// once the bytes are queued; a write error is returned by the next Write.
// It also counts the bytes the connection moves, and remembers the first
// read error (the connection's cause of death).
//
// Write never blocks: what it can queue is bounded by HTTP/2 itself (DATA
// by the server's flow-control windows, HEADERS by its stream limit) and by
// the client, which waits (drain) before it queues more of a large body
// than maxQueued; a writer that waited for room while the server waited for
// the client to read would deadlock both.
type batchConn struct {
	net.Conn
	in, out atomic.Int64
	rerr    atomic.Pointer[error]

	mu       sync.Mutex
	queue    []byte
	spare    []byte
	acks     int // acknowledgements (of the server's PING and SETTINGS) in queue
	writing  int // acknowledgements in the write under way
	werr     error
	closed   bool
	pending  chan struct{} // one token while a flush is due
	writeLen int           // bytes in the write under way
	progress chan struct{} // closed when a write completes; made only while someone waits (wait)
	done     chan struct{}
}

// maxSpare bounds the queue buffer kept for reuse: a larger one (a burst of
// request bodies) is left to the collector.
const maxSpare = 1 << 20

func newBatchConn(c net.Conn) *batchConn {
	b := &batchConn{Conn: c, pending: make(chan struct{}, 1), done: make(chan struct{})}
	go b.writer()
	return b
}

func (b *batchConn) Read(p []byte) (int, error) {
	n, err := b.Conn.Read(p)
	b.in.Add(int64(n))
	if err != nil && b.rerr.Load() == nil {
		b.rerr.CompareAndSwap(nil, &err)
	}
	return n, err
}

func (b *batchConn) cause() error {
	if p := b.rerr.Load(); p != nil {
		return *p
	}
	return nil
}

func (b *batchConn) Write(p []byte) (int, error) { return b.write(p, 0) }

// writeAcks queues p, which holds acks acknowledgements of the server's
// PING or SETTINGS frames. When more than max acknowledgements are waiting
// to be written it waits, up to patience, for the writer to bring them
// under max/2 (the server reads them), and reports false if it did not: a
// server that sends such frames and never reads the answers would
// otherwise grow the queue without end.
func (b *batchConn) writeAcks(p []byte, acks, max int, patience time.Duration) bool {
	b.write(p, acks)
	if b.unsentAcks() <= max {
		return true
	}
	timer := time.NewTimer(patience)
	defer timer.Stop()
	for {
		ch, n := b.wait()
		if n.acks <= max/2 {
			return true
		}
		select {
		case <-ch:
		case <-b.done:
			return true // closed: the reader ends anyway
		case <-timer.C:
			return false
		}
	}
}

// unsentAcks are the acknowledgements queued or being written.
func (b *batchConn) unsentAcks() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.acks + b.writing
}

// backlog is what is queued or being written: bytes and acknowledgements.
type backlog struct{ bytes, acks int }

// wait returns a channel closed when the write under way (or the next)
// completes, and the backlog now.
func (b *batchConn) wait() (<-chan struct{}, backlog) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.progress == nil {
		b.progress = make(chan struct{})
	}
	return b.progress, backlog{len(b.queue) + b.writeLen, b.acks + b.writing}
}

// queued is the bytes queued or being written.
func (b *batchConn) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue) + b.writeLen
}

// drain waits until at most n bytes are queued or being written; it gives
// up when ctx ends (its error) or the connection closes (net.ErrClosed).
func (b *batchConn) drain(ctx context.Context, n int) error {
	for {
		ch, q := b.wait()
		if q.bytes <= n {
			return nil
		}
		select {
		case <-ch:
		case <-b.done:
			return net.ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *batchConn) write(p []byte, acks int) (int, error) {
	b.mu.Lock()
	if b.werr != nil || b.closed {
		err := b.werr
		b.mu.Unlock()
		if err == nil {
			err = net.ErrClosed
		}
		return 0, err
	}
	b.queue = append(b.queue, p...)
	b.acks += acks
	b.mu.Unlock()
	select {
	case b.pending <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (b *batchConn) writer() {
	for {
		select {
		case <-b.pending:
		case <-b.done:
			return
		}
		b.mu.Lock()
		q := b.queue
		b.queue, b.spare = b.spare[:0], nil
		b.writing, b.acks = b.acks, 0
		b.writeLen = len(q)
		b.mu.Unlock()
		if len(q) == 0 {
			continue
		}
		n, err := b.Conn.Write(q)
		b.out.Add(int64(n))
		b.mu.Lock()
		if cap(q) <= maxSpare {
			b.spare = q[:0]
		}
		b.writing, b.writeLen = 0, 0
		if err != nil && b.werr == nil {
			b.werr = err
		}
		if b.progress != nil {
			close(b.progress)
			b.progress = nil
		}
		b.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (b *batchConn) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.done)
	}
	b.mu.Unlock()
	return b.Conn.Close()
}

// NetConn is the connection under the batching (transport.RxTime reads
// receive times through it).
func (b *batchConn) NetConn() net.Conn { return b.Conn }
