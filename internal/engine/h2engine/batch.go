package h2engine

import (
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
// by the server's flow-control windows, HEADERS by its stream limit), and a
// writer that waited for room while the server waited for the client to
// read would deadlock both.
type batchConn struct {
	net.Conn
	in, out atomic.Int64
	rerr    atomic.Pointer[error]

	mu      sync.Mutex
	queue   []byte
	spare   []byte
	acks    int // acknowledgements (of the server's PING and SETTINGS) in queue
	writing int // acknowledgements in the write under way
	werr    error
	closed  bool
	pending chan struct{} // one token while a flush is due
	wrote   chan struct{} // one token after a write completed
	done    chan struct{}
}

func newBatchConn(c net.Conn) *batchConn {
	b := &batchConn{Conn: c, pending: make(chan struct{}, 1), wrote: make(chan struct{}, 1), done: make(chan struct{})}
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
	for b.unsentAcks() > max/2 {
		select {
		case <-b.wrote:
		case <-b.done:
			return true // closed: the reader ends anyway
		case <-timer.C:
			return false
		}
	}
	return true
}

// unsentAcks are the acknowledgements queued or being written.
func (b *batchConn) unsentAcks() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.acks + b.writing
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
		b.mu.Unlock()
		if len(q) == 0 {
			continue
		}
		n, err := b.Conn.Write(q)
		b.out.Add(int64(n))
		b.mu.Lock()
		b.spare = q[:0]
		b.writing = 0
		if err != nil && b.werr == nil {
			b.werr = err
		}
		b.mu.Unlock()
		select {
		case b.wrote <- struct{}{}:
		default:
		}
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
