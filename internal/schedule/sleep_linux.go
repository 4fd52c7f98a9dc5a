//go:build linux

package schedule

import (
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Sleeper waits for intended send times precisely. Go's timers can
// oversleep short waits by up to a millisecond (the netpoller's wait is in
// whole milliseconds), and a nanosleep(2) would hold the goroutine's P for
// as long as it sleeps, starving the connections on a one-core generator.
// So the last stretch of a wait is a timerfd read through Go's netpoller:
// the goroutine parks (its P runs other goroutines) and the kernel's
// hrtimer wakes it within microseconds. A Sleeper belongs to one goroutine.
type Sleeper struct {
	f   *os.File
	fd  int
	buf [8]byte
}

// NewSleeper returns a Sleeper; it falls back to Go timers if the kernel
// refuses a timerfd.
func NewSleeper() *Sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &Sleeper{fd: -1}
	}
	return &Sleeper{f: os.NewFile(uintptr(fd), "hail-timerfd"), fd: fd}
}

// Close releases the Sleeper's timerfd.
func (s *Sleeper) Close() {
	if s.f != nil {
		s.f.Close()
	}
}

// Until waits until time.Since(start) >= at. It returns early, with false,
// when wake is closed (or receives) during a long wait.
func (s *Sleeper) Until(start time.Time, at time.Duration, wake <-chan struct{}) bool {
	const (
		coarse = 2 * time.Millisecond  // longer waits sleep on a Go timer first
		spin   = 20 * time.Microsecond // shorter ones yield until due
	)
	for {
		left := at - time.Since(start)
		switch {
		case left <= 0:
			return true
		case left > coarse:
			t := time.NewTimer(left - coarse)
			select {
			case <-wake:
				t.Stop()
				return false
			case <-t.C:
			}
		case left <= spin || s.f == nil:
			runtime.Gosched()
		default:
			spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(left))}
			if unix.TimerfdSettime(s.fd, 0, &spec, nil) != nil {
				runtime.Gosched()
				continue
			}
			_, _ = s.f.Read(s.buf[:]) // parks in the netpoller until the timer fires
		}
	}
}
