//go:build !linux

package schedule

import (
	"runtime"
	"time"
)

// Sleeper waits for intended send times (Go timers, then yielding).
type Sleeper struct{}

// NewSleeper returns a Sleeper.
func NewSleeper() *Sleeper { return &Sleeper{} }

// Close does nothing.
func (s *Sleeper) Close() {}

// Until waits until time.Since(start) >= at, or returns false early when
// wake is closed.
func (s *Sleeper) Until(start time.Time, at time.Duration, wake <-chan struct{}) bool {
	for {
		left := at - time.Since(start)
		if left <= 0 {
			return true
		}
		if left > time.Millisecond {
			t := time.NewTimer(left - time.Millisecond)
			select {
			case <-wake:
				t.Stop()
				return false
			case <-t.C:
			}
			continue
		}
		runtime.Gosched()
	}
}
