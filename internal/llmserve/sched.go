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
// heap by their next event and sleeps on its timer until the earliest is
// due (at most once per Config.Tick), then sends everything due. Token
// times are each stream's own (from its admission and its draws), so
// streams tick apart; no goroutine or timer exists per stream.
type shard struct {
	s     *Server
	mu    sync.Mutex
	in    []*stream // admitted, not yet in the heap
	spar  []*stream // the other inbox buffer
	timer *shardTimer
	heap  schedule.TimeHeap[*stream]
}

// add hands an admitted stream to the shard, waking it.
func (sh *shard) add(st *stream) {
	sh.mu.Lock()
	sh.in = append(sh.in, st)
	sh.mu.Unlock()
	sh.timer.arm(0)
}

// take moves the inbox into the heap; false when it was empty.
func (sh *shard) take() bool {
	sh.mu.Lock()
	in := sh.in
	sh.in = sh.spar[:0]
	sh.mu.Unlock()
	now := sh.s.since()
	for i, st := range in {
		sh.heap.Push(st.wake(now), st)
		in[i] = nil
	}
	sh.spar = in[:0]
	return len(in) > 0
}

func (sh *shard) run() {
	s := sh.s
	defer s.wg.Done()
	woke := -s.cfg.Tick
	for {
		sh.take()
		now := s.since()
		for sh.heap.Len() > 0 && sh.heap.Next() <= now {
			_, st := sh.heap.Pop()
			if st.fire(now) {
				sh.heap.Push(st.wake(now), st)
			}
		}
		at := never
		if sh.heap.Len() > 0 {
			at = max(sh.heap.Next(), woke+s.cfg.Tick)
		}
		sh.timer.arm(at)
		// An add between take and arm armed the timer first, and arm just
		// replaced that: look again (an add after this sees its own arm).
		if sh.take() {
			continue
		}
		if !sh.timer.wait() {
			return
		}
		woke = s.since()
	}
}

// never is the time of a shard timer with nothing to wait for.
const never = time.Duration(1<<63 - 1)

// closeAll ends (and logs) the shard's streams once the server's
// goroutines have stopped.
func (sh *shard) closeAll() {
	now := sh.s.since()
	for sh.heap.Len() > 0 {
		_, st := sh.heap.Pop()
		st.finish(now, outUnfinished)
	}
	sh.mu.Lock()
	in := sh.in
	sh.in = nil
	sh.mu.Unlock()
	for _, st := range in {
		st.finish(now, outUnfinished)
	}
}
