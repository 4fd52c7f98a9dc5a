package serve

import (
	"container/heap"
	"sync"
	"time"

	"hail/internal/schedule"
)

// clock wakes delayed responses on time. Go's timers oversleep short waits
// by up to a millisecond, which would show in every delay= measurement; the
// clock instead keeps the pending wake-ups in a heap and waits for the
// earliest with a schedule.Sleeper (a timerfd in Go's netpoller), so a
// delay is accurate to tens of microseconds at the cost of one goroutine.
type clock struct {
	mu      sync.Mutex
	pending wakeHeap
	kick    chan struct{} // an earlier wake-up was added
	base    time.Time
	once    sync.Once
	done    <-chan struct{}
	exited  chan struct{} // closed when run returns
	started bool          // guarded by mu
}

type wake struct {
	at time.Duration // since base
	ch chan struct{} // buffered(1), owned by one connection
}

type wakeHeap []wake

func (h wakeHeap) Len() int           { return len(h) }
func (h wakeHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h wakeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wakeHeap) Push(x any)        { *h = append(*h, x.(wake)) }
func (h *wakeHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}

func newClock(done <-chan struct{}) *clock {
	return &clock{kick: make(chan struct{}, 1), base: time.Now(), done: done, exited: make(chan struct{})}
}

// after arranges for ch to receive a value once d has passed.
func (c *clock) after(d time.Duration, ch chan struct{}) {
	c.once.Do(func() {
		c.mu.Lock()
		c.started = true
		c.mu.Unlock()
		go c.run()
	})
	at := time.Since(c.base) + d
	c.mu.Lock()
	earliest := len(c.pending) == 0 || at < c.pending[0].at
	heap.Push(&c.pending, wake{at, ch})
	c.mu.Unlock()
	if earliest {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// stop ends the clock's goroutine (after done is closed) and waits for it.
func (c *clock) stop() {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if !started {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
	<-c.exited
}

func (c *clock) run() {
	defer close(c.exited)
	sleeper := schedule.NewSleeper()
	defer sleeper.Close()
	for {
		select {
		case <-c.done:
			return
		default:
		}
		c.mu.Lock()
		now := time.Since(c.base)
		for len(c.pending) > 0 && c.pending[0].at <= now {
			w := heap.Pop(&c.pending).(wake)
			select {
			case w.ch <- struct{}{}:
			default:
			}
		}
		next := time.Duration(-1)
		if len(c.pending) > 0 {
			next = c.pending[0].at
		}
		c.mu.Unlock()
		if next < 0 {
			select {
			case <-c.kick:
			case <-c.done:
				return
			}
			continue
		}
		select {
		case <-c.done:
			return
		default:
		}
		sleeper.Until(c.base, next, c.kick)
	}
}
