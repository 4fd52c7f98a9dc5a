//go:build linux

package uringengine

import "time"

// Think time (closed model): a connection whose request asked for a pause
// (engine.Verdict.Think) is not put back in the idle queue when the request
// ends; it waits in the worker's think heap, ordered by the end of its
// pause, and goes back when the pause is over. The worker's thread never
// sleeps for it: the loop's wait is bounded by the earliest pause's end, as
// by a deadline. Think times vary per request (50ms..150ms), so the order is
// a binary heap, not a deadline list.

// thinker is one connection slot thinking until until.
type thinker struct {
	until time.Duration
	idx   int32
}

// thinkHeap is a min-heap of thinkers by until.
type thinkHeap []thinker

func (h *thinkHeap) push(t thinker) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].until <= s[i].until {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *thinkHeap) pop() thinker {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l].until < s[m].until {
			m = l
		}
		if r := l + 1; r < n && s[r].until < s[m].until {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// thinks reports whether c, becoming idle, must first think: then it is
// put in the think heap instead of the idle queue.
func (w *worker) thinks(c *conn) bool {
	if c.thinkUntil <= w.now || w.stopped || w.aborted {
		c.thinkUntil = 0
		return false
	}
	w.thinking.push(thinker{until: c.thinkUntil, idx: c.idx})
	c.thinkUntil = 0
	return true
}

// wakeThinkers returns the connections whose pause is over to the idle
// queue.
func (w *worker) wakeThinkers() {
	for len(w.thinking) > 0 && w.thinking[0].until <= w.now {
		w.release(&w.conns[w.thinking.pop().idx])
	}
}

// thinkEnd is the end of the earliest pause, or -1.
func (w *worker) thinkEnd() time.Duration {
	if len(w.thinking) == 0 {
		return -1
	}
	return w.thinking[0].until
}
