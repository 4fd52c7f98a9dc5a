package llmserve

import (
	"sync"
	"time"
)

// goTimer is a shardTimer on a Go timer: the fallback where there is no
// timerfd.
type goTimer struct {
	start  time.Time
	t      *time.Timer
	c      chan struct{}
	once   sync.Once
	closed chan struct{}
}

func newGoTimer(start time.Time) *goTimer {
	g := &goTimer{start: start, c: make(chan struct{}, 1), closed: make(chan struct{})}
	g.t = time.AfterFunc(time.Hour, func() { notify(g.c) })
	g.t.Stop()
	return g
}

func (g *goTimer) arm(at time.Duration) {
	if at >= never {
		g.t.Stop()
		return
	}
	g.t.Reset(max(at-time.Since(g.start), 0))
}

func (g *goTimer) wait() bool {
	select {
	case <-g.c:
		return true
	case <-g.closed:
		return false
	}
}

func (g *goTimer) close() { g.once.Do(func() { g.t.Stop(); close(g.closed) }) }
