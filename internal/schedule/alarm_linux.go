//go:build linux

package schedule

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// alarmTimer is a CLOCK_MONOTONIC timerfd read through Go's netpoller: the
// alarm's goroutine parks while it waits, and the kernel's hrtimer wakes
// it within microseconds. Without a timerfd it falls back to Go timers.
type alarmTimer struct {
	f        *os.File
	fd       int
	monoBase time.Duration // CLOCK_MONOTONIC at base
	buf      [8]byte
	fallback *goTimer
}

func newAlarmTimer(base time.Time) *alarmTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	var ts unix.Timespec
	if err == nil {
		err = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		if err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		return &alarmTimer{fallback: newGoTimer(base)}
	}
	return &alarmTimer{f: os.NewFile(uintptr(fd), "hail-alarm"), fd: fd, monoBase: time.Duration(ts.Nano()) - time.Since(base)}
}

// arm makes the timer fire at at (since base); 0 or a past time fires now.
func (t *alarmTimer) arm(at time.Duration) {
	if t.fallback != nil {
		t.fallback.arm(at)
		return
	}
	abs := max(t.monoBase+at, 1)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(abs))}
	if unix.TimerfdSettime(t.fd, unix.TFD_TIMER_ABSTIME, &spec, nil) != nil {
		spec.Value = unix.NsecToTimespec(1) // fire now: the alarm looks again
		_ = unix.TimerfdSettime(t.fd, 0, &spec, nil)
	}
}

// wait blocks until the timer fires.
func (t *alarmTimer) wait() {
	if t.fallback != nil {
		t.fallback.wait()
		return
	}
	_, _ = t.f.Read(t.buf[:])
}

// close releases the timerfd, or stops the fallback's Go timer.
func (t *alarmTimer) close() {
	if t.fallback != nil {
		t.fallback.close()
		return
	}
	t.f.Close()
}
