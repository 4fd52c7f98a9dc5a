package schedule

import "time"

// goTimer is the alarm's timer on Go's own timers (systems without a
// timerfd): as precise as the runtime's timers, about a millisecond.
type goTimer struct {
	base time.Time
	t    *time.Timer
	c    chan struct{}
}

func newGoTimer(base time.Time) *goTimer {
	g := &goTimer{base: base, c: make(chan struct{}, 1)}
	g.t = time.AfterFunc(time.Hour, func() { notify(g.c) })
	g.t.Stop()
	return g
}

func (g *goTimer) arm(at time.Duration) { g.t.Reset(max(at-time.Since(g.base), 0)) }
func (g *goTimer) wait()                { <-g.c }
func (g *goTimer) close()               { g.t.Stop() }
