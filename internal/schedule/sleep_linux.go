//go:build linux

package schedule

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// PreciseThread prepares the calling goroutine to wait precisely with
// SleepUntil: it locks it to its OS thread and sets that thread's timer slack
// to 1 ns (the default 50 µs slack would be added to every wake). Call the
// returned function when done.
func PreciseThread() (done func()) {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	return func() {
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)
		runtime.UnlockOSThread()
	}
}

// SleepUntil waits until time.Since(start) >= at. Go's timers can oversleep
// by up to a millisecond for short waits, so the last stretch is a
// nanosleep(2) on a thread prepared by PreciseThread, accurate to a few
// microseconds; long waits sleep in Go first (and stay interruptible by
// wake). It returns early, with false, when wake is closed.
func SleepUntil(start time.Time, at time.Duration, wake <-chan struct{}) bool {
	const coarse = 2 * time.Millisecond
	for {
		left := at - time.Since(start)
		if left <= 0 {
			return true
		}
		if left > coarse {
			t := time.NewTimer(left - coarse)
			select {
			case <-wake:
				t.Stop()
				return false
			case <-t.C:
			}
			continue
		}
		ts := unix.NsecToTimespec(int64(left))
		_ = unix.Nanosleep(&ts, nil)
	}
}
