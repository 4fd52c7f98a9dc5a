package scenario

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hail-loadgen/hail/internal/scenario/values"
)

// feedEnd stops the activities whose first step needs a used-up unique
// feed — they are no longer chosen, rather than chosen and yielding for
// the rest of the run — and ends a run when every activity is stopped.
type feedEnd struct {
	once  sync.Once
	ch    chan struct{}
	mu    sync.Mutex
	why   string
	needs [][]*values.Feed // per activity of the mix: the unique feeds its first step needs
	steps []*Step          // per activity: its first step
	dead  []atomic.Bool    // per activity: stopped (a feed it needs is used up)
	any   atomic.Bool      // some activity is stopped
}

// newFeedEnd watches the unique feeds of s: when the first steps of all its
// activities need one that is used up, the run ends (nil without unique feeds).
func newFeedEnd(s *Scenario) *feedEnd {
	e := &feedEnd{ch: make(chan struct{}), dead: make([]atomic.Bool, len(s.mix.acts))}
	unique := false
	for _, a := range s.mix.acts {
		st := a.step
		if a.flow >= 0 {
			st = s.Flows[a.flow].steps[0]
		}
		e.steps = append(e.steps, s.Steps[st])
		var fs []*values.Feed
		for _, i := range s.Steps[st].feeds {
			if f := s.Feeds[i]; f.Order == values.FeedUnique {
				fs = append(fs, f)
				unique = true
			}
		}
		e.needs = append(e.needs, fs)
	}
	if !unique {
		return nil
	}
	for _, f := range s.Feeds {
		if f.Order == values.FeedUnique {
			f.OnUsedUp(func() { e.check(f) })
		}
	}
	return e
}

// check stops the activities that need f, now used up, and closes the
// channel when no activity can run any more.
func (e *feedEnd) check(f *values.Feed) {
	why := fmt.Sprintf("feed `%s` used up (order: unique, %d rows)", f.Name, f.Rows())
	for i, fs := range e.needs {
		for _, x := range fs {
			if x == f && !e.dead[i].Swap(true) {
				e.steps[i].stopped.CompareAndSwap(nil, &why)
				e.any.Store(true)
			}
		}
	}
	for i := range e.needs {
		if !e.dead[i].Load() {
			return
		}
	}
	e.once.Do(func() {
		e.mu.Lock()
		e.why = why
		e.mu.Unlock()
		close(e.ch)
	})
}

// exclude marks in excl the activities that are stopped, and reports
// whether a is one of them (it then has to be chosen again).
func (e *feedEnd) exclude(a int, excl []bool) bool {
	if e == nil || !e.any.Load() || !e.dead[a].Load() {
		return false
	}
	for i := range e.dead {
		excl[i] = e.dead[i].Load()
	}
	return true
}

// reason is why the run ended early, or "".
func (e *feedEnd) reason() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.why
}
