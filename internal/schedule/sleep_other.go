//go:build !linux

package schedule

import "time"

// PreciseThread is a no-op outside Linux.
func PreciseThread() (done func()) { return func() {} }

// SleepUntil waits until time.Since(start) >= at, or returns false early
// when wake is closed.
func SleepUntil(start time.Time, at time.Duration, wake <-chan struct{}) bool {
	left := at - time.Since(start)
	if left <= 0 {
		return true
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-wake:
		return false
	case <-t.C:
		return true
	}
}
