package scenario

import (
	"fmt"
	"sync"

	"github.com/hail-loadgen/hail/internal/scenario/values"
)

// feedEnd ends a run whose every activity needs a used-up unique feed.
type feedEnd struct {
	once  sync.Once
	ch    chan struct{}
	mu    sync.Mutex
	why   string
	needs [][]*values.Feed // per activity of the mix: the unique feeds its first step needs
}

// newFeedEnd watches the unique feeds of s: when the first steps of all its
// activities need one that is used up, the run ends (nil without unique feeds).
func newFeedEnd(s *Scenario) *feedEnd {
	e := &feedEnd{ch: make(chan struct{})}
	unique := false
	for _, a := range s.mix.acts {
		st := a.step
		if a.flow >= 0 {
			st = s.Flows[a.flow].steps[0]
		}
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

// check closes the channel when no activity can run any more.
func (e *feedEnd) check(f *values.Feed) {
	for _, fs := range e.needs {
		out := false
		for _, x := range fs {
			out = out || x.UsedUp()
		}
		if !out {
			return
		}
	}
	e.once.Do(func() {
		e.mu.Lock()
		e.why = fmt.Sprintf("feed `%s` used up (order: unique, %d rows)", f.Name, f.Rows())
		e.mu.Unlock()
		close(e.ch)
	})
}

// reason is why the run ended early, or "".
func (e *feedEnd) reason() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.why
}
