//go:build linux

package uringengine

import "time"

// Think time (closed model): a connection whose request asked for a pause
// (engine.Verdict.Think) is not put back in the idle queue when the request
// ends; it waits in the worker's think heap, ordered by the end of its
// pause, and goes back when the pause is over. The worker's thread never
// sleeps for it: the loop's wait is bounded by the earliest pause's end, as
// by a deadline. Think times vary per request (50ms..150ms), so the order is
// a binary heap (schedule.TimeHeap), not a deadline list.

// thinks reports whether c, becoming idle, must first think: then it is
// put in the think heap instead of the idle queue.
func (w *worker) thinks(c *conn) bool {
	if c.thinkUntil <= w.now || w.sched.stopped || w.sched.aborted {
		c.thinkUntil = 0
		return false
	}
	w.thinking.Push(c.thinkUntil, c.idx)
	c.thinkUntil = 0
	return true
}

// wakeThinkers returns the connections whose pause is over to the idle
// queue.
func (w *worker) wakeThinkers() {
	for w.thinking.Len() > 0 && w.thinking.Next() <= w.now {
		_, idx := w.thinking.Pop()
		w.release(&w.conns[idx])
	}
}

// thinkEnd is the end of the earliest pause, or -1.
func (w *worker) thinkEnd() time.Duration {
	if w.thinking.Len() == 0 {
		return -1
	}
	return w.thinking.Next()
}
