package llmserve

import (
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// shardTimer is a shard's wake-up: a CLOCK_MONOTONIC timerfd that the
// shard's goroutine waits on through Go's netpoller.
//
// Why not schedule.Alarm, which hail serve uses: every system call made
// through the Go runtime's entersyscall (an os.File read, unix.Read,
// timerfd_settime) wakes the runtime's sysmon thread when the process was
// idle, and the mock is idle between most chunks: sysmon then takes two
// futex calls and a few nanosleeps per wake-up, which on a small machine
// cost more than the chunk's write. So the timer is armed and read, and
// chunks are written (sys_unix.go), with raw system calls — all of them
// non-blocking, which is what makes raw calls safe — and only the wait
// itself goes through the netpoller.
type shardTimer struct {
	f        *os.File
	rc       syscall.RawConn
	monoBase time.Duration // CLOCK_MONOTONIC at the server's start
	buf      [8]byte
	readFn   func(fd uintptr) bool
	mu       sync.Mutex // arm's, which any goroutine may call
	spec     unix.ItimerSpec
	armFn    func(fd uintptr)
	fallback *goTimer
}

func newShardTimer(start time.Time) *shardTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	var ts unix.Timespec
	if err == nil {
		if err = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			unix.Close(fd)
		}
	}
	var f *os.File
	var rc syscall.RawConn
	if err == nil {
		f = os.NewFile(uintptr(fd), "hail-llmserve-timer")
		if rc, err = f.SyscallConn(); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return &shardTimer{fallback: newGoTimer(start)}
	}
	t := &shardTimer{f: f, rc: rc, monoBase: time.Duration(ts.Nano()) - time.Since(start)}
	t.readFn = func(fd uintptr) bool {
		_, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&t.buf[0])), 8)
		return e != unix.EAGAIN
	}
	t.armFn = func(fd uintptr) {
		unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, unix.TFD_TIMER_ABSTIME, uintptr(unsafe.Pointer(&t.spec)), 0, 0, 0)
	}
	return t
}

// arm makes the timer fire at at (since the server's start); a time
// already past fires at once, never disarms it. It may be called from any
// goroutine; the RawConn keeps the descriptor from being closed (and its
// number reused) under it.
func (t *shardTimer) arm(at time.Duration) {
	if t.fallback != nil {
		t.fallback.arm(at)
		return
	}
	t.mu.Lock()
	t.spec = unix.ItimerSpec{}
	if at < never {
		t.spec.Value = unix.NsecToTimespec(int64(max(t.monoBase+at, 1)))
	}
	t.rc.Control(t.armFn)
	t.mu.Unlock()
}

// wait blocks until the timer fires; false when it has been closed.
func (t *shardTimer) wait() bool {
	if t.fallback != nil {
		return t.fallback.wait()
	}
	return t.rc.Read(t.readFn) == nil
}

// close releases the timer and ends a wait.
func (t *shardTimer) close() {
	if t.fallback != nil {
		t.fallback.close()
		return
	}
	t.f.Close()
}
