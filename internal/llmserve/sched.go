package llmserve

import (
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
)

// slots are the batch slots: at most Slots requests generate at once, the
// others wait in arrival order.
type slots struct {
	mu    sync.Mutex
	free  int
	queue []*stream
	head  int
}

// submit gives st a slot now, or queues it.
func (s *Server) submit(st *stream) {
	q := &s.slots
	q.mu.Lock()
	if q.free > 0 {
		q.free--
		q.mu.Unlock()
		s.c.running.Add(1)
		st.admit(s.since())
		return
	}
	q.queue = append(q.queue, st)
	q.mu.Unlock()
	s.c.queued.Add(1)
}

// release frees a slot at at: the first queued request whose client is
// still there takes it.
func (s *Server) release(at time.Duration) {
	q := &s.slots
	for {
		q.mu.Lock()
		if q.head == len(q.queue) {
			q.free++
			q.mu.Unlock()
			s.c.running.Add(-1)
			return
		}
		st := q.queue[q.head]
		q.queue[q.head] = nil
		q.head++
		switch {
		case q.head == len(q.queue):
			q.queue, q.head = q.queue[:0], 0
		case q.head >= 1024 && q.head > len(q.queue)/2:
			n := copy(q.queue, q.queue[q.head:])
			clear(q.queue[n:])
			q.queue, q.head = q.queue[:n], 0
		}
		q.mu.Unlock()
		s.c.queued.Add(-1)
		if st.gone() {
			st.finish(at, outClientGone)
			continue
		}
		st.admit(at)
		return
	}
}

// shard advances its streams: one goroutine per CPU keeps its streams in a
// heap by their next event and sleeps on the server's Alarm until the
// earliest is due, then sends everything due. Token times are each
// stream's own (from its admission and its draws), so streams tick apart;
// no goroutine or timer exists per stream.
type shard struct {
	s    *Server
	mu   sync.Mutex
	in   []*stream // admitted, not yet in the heap
	spar []*stream // the other inbox buffer
	wake chan struct{}
	heap schedule.TimeHeap[*stream]
}

// add hands an admitted stream to the shard.
func (sh *shard) add(st *stream) {
	sh.mu.Lock()
	sh.in = append(sh.in, st)
	sh.mu.Unlock()
	notify(sh.wake)
}

func (sh *shard) run() {
	s := sh.s
	defer s.wg.Done()
	armed := time.Duration(-1) // the wake-up asked of the alarm; -1: none
	for {
		sh.mu.Lock()
		in := sh.in
		sh.in = sh.spar[:0]
		sh.mu.Unlock()
		for i, st := range in {
			sh.heap.Push(st.next, st)
			in[i] = nil
		}
		sh.spar = in[:0]
		now := s.since()
		for sh.heap.Len() > 0 && sh.heap.Next() <= now {
			_, st := sh.heap.Pop()
			if st.fire() {
				sh.heap.Push(st.next, st)
			}
		}
		if sh.heap.Len() > 0 {
			next := sh.heap.Next()
			if next <= s.since() {
				continue
			}
			if armed < 0 || armed <= now || next < armed {
				s.alarm.At(next, sh.wake)
				armed = next
			}
		}
		select {
		case <-sh.wake:
		case <-s.done:
			return
		}
	}
}

// closeAll ends (and logs) the shard's streams once the server's
// goroutines have stopped.
func (sh *shard) closeAll() {
	now := sh.s.since()
	for sh.heap.Len() > 0 {
		_, st := sh.heap.Pop()
		st.admitted = false // no slot to hand on
		st.finish(now, outUnfinished)
	}
	sh.mu.Lock()
	in := sh.in
	sh.in = nil
	sh.mu.Unlock()
	for _, st := range in {
		st.admitted = false
		st.finish(now, outUnfinished)
	}
}
