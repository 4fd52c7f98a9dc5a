//go:build linux

package uring

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lockThread pins the test goroutine to its OS thread for the whole test, as
// SINGLE_ISSUER/DEFER_TASKRUN rings require.
func lockThread(t testing.TB) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}

// newTestRing creates a ring closed at cleanup; it skips the test only when
// io_uring is unavailable in this environment.
func newTestRing(t testing.TB, entries uint32, o *Options) *Ring {
	t.Helper()
	r, err := New(entries, o)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("io_uring unavailable: %v", err)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func countFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("read /proc/self/fd: %v", err)
	}
	return len(ents)
}

// waitCQEs collects exactly n completions, failing after d.
func waitCQEs(t testing.TB, r *Ring, n int, d time.Duration) []CQE {
	t.Helper()
	out := make([]CQE, 0, n)
	buf := make([]CQE, 64)
	deadline := time.Now().Add(d)
	for len(out) < n {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("timed out with %d/%d completions: %+v", len(out), n, out)
		}
		if _, err := r.SubmitAndWaitTimeout(1, left); err != nil && !errors.Is(err, ErrTimeout) {
			t.Fatalf("SubmitAndWaitTimeout: %v", err)
		}
		k := r.PeekCQEs(buf[:min(len(buf), n-len(out))])
		out = append(out, buf[:k]...)
	}
	return out
}

func TestLayout(t *testing.T) {
	var s SQE
	checks := []struct {
		name      string
		got, want uintptr
	}{
		{"sqe size", unsafe.Sizeof(s), 64},
		{"sqe.flags", unsafe.Offsetof(s.Flags), 1},
		{"sqe.ioprio", unsafe.Offsetof(s.IoPrio), 2},
		{"sqe.fd", unsafe.Offsetof(s.Fd), 4},
		{"sqe.off", unsafe.Offsetof(s.Off), 8},
		{"sqe.addr", unsafe.Offsetof(s.Addr), 16},
		{"sqe.len", unsafe.Offsetof(s.Len), 24},
		{"sqe.op_flags", unsafe.Offsetof(s.OpFlags), 28},
		{"sqe.user_data", unsafe.Offsetof(s.UserData), 32},
		{"sqe.buf_index", unsafe.Offsetof(s.BufIndex), 40},
		{"sqe.personality", unsafe.Offsetof(s.Personality), 42},
		{"sqe.file_index", unsafe.Offsetof(s.FileIndex), 44},
		{"sqe.addr3", unsafe.Offsetof(s.Addr3), 48},
		{"cqe size", unsafe.Sizeof(CQE{}), 16},
		{"cqe.res", unsafe.Offsetof(CQE{}.Res), 8},
		{"cqe.flags", unsafe.Offsetof(CQE{}.Flags), 12},
		{"params size", unsafe.Sizeof(Params{}), 120},
		{"params.features", unsafe.Offsetof(Params{}.Features), 20},
		{"params.sq_off", unsafe.Offsetof(Params{}.SQOff), 40},
		{"params.cq_off", unsafe.Offsetof(Params{}.CQOff), 80},
		{"sq_off.array", unsafe.Offsetof(SQRingOffsets{}.Array), 24},
		{"sq_off.user_addr", unsafe.Offsetof(SQRingOffsets{}.UserAddr), 32},
		{"cq_off.cqes", unsafe.Offsetof(CQRingOffsets{}.CQEs), 20},
		{"getevents.ts", unsafe.Offsetof(getEventsArg{}.ts), 16},
		{"buf_reg.bgid", unsafe.Offsetof(bufReg{}.bgid), 12},
		{"buf.bid", unsafe.Offsetof(bufEntry{}.bid), 12},
		{"files_update.fds", unsafe.Offsetof(filesUpdate{}.fds), 8},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestSetupTeardownNoLeak(t *testing.T) {
	lockThread(t)
	// Warm up (the first ring may lazily allocate per-process things).
	r := newTestRing(t, 8, nil)
	r.Close()
	before := countFDs(t)
	threadsBefore := ioThreads()
	for i := 0; i < 100; i++ {
		r, err := New(32, nil)
		if err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
		if i%10 == 0 {
			sqe := r.GetSQE()
			sqe.PrepNop()
			if _, err := r.SubmitAndWait(1); err != nil {
				t.Fatalf("nop: %v", err)
			}
			r.AdvanceCQ(1)
		}
		if err := r.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		if err := r.Close(); err != nil { // idempotent
			t.Fatalf("second close: %v", err)
		}
	}
	if after := countFDs(t); after != before {
		t.Fatalf("fd count %d -> %d after 100 setup/teardown cycles", before, after)
	}
	// No kernel threads may be left behind (io-wq workers from earlier tests
	// may still be idling out, so only growth counts).
	for wait := time.Now().Add(3 * time.Second); ioThreads() > threadsBefore; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("io_uring threads %d -> %d", threadsBefore, ioThreads())
		}
	}
}

func TestProbeAndFlags(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 64, nil)
	if !r.Probed() {
		t.Fatal("IORING_REGISTER_PROBE failed")
	}
	for _, op := range []uint8{OpNop, OpSend, OpRecv, OpConnect, OpTimeout, OpLinkTimeout, OpAsyncCancel, OpClose} {
		if !r.Supports(op) {
			t.Errorf("op %d not supported", op)
		}
	}
	t.Logf("setup flags: %s; features %#x; SQ %d CQ %d; socket op: %v", FlagNames(r.Flags()),
		r.Features(), r.SQEntries(), r.CQEntries(), r.Supports(OpSocket))
	if r.Features()&FeatExtArg == 0 {
		t.Error("no IORING_FEAT_EXT_ARG")
	}
}

func TestCQSizeOption(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, &Options{CQEntries: 1024})
	if r.CQEntries() != 1024 || r.Flags()&SetupCQSize == 0 {
		t.Fatalf("CQ entries %d flags %s", r.CQEntries(), FlagNames(r.Flags()))
	}
	if r.SQEntries() != 8 {
		t.Fatalf("SQ entries %d", r.SQEntries())
	}
}

func TestNopRoundTrip(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 32, nil)
	for round := 0; round < 3; round++ {
		const n = 20
		for i := 0; i < n; i++ {
			sqe := r.GetSQE()
			sqe.PrepNop()
			sqe.SetUserData(uint64(round*1000 + i + 1))
		}
		if got, err := r.SubmitAndWait(n); err != nil || got != n {
			t.Fatalf("SubmitAndWait = %d, %v", got, err)
		}
		var cqes [n]CQE
		if k := r.PeekCQEs(cqes[:]); k != n {
			t.Fatalf("PeekCQEs = %d", k)
		}
		seen := map[uint64]bool{}
		for _, c := range cqes {
			if c.Res != 0 {
				t.Fatalf("nop res %d", c.Res)
			}
			seen[c.UserData] = true
		}
		for i := 0; i < n; i++ {
			if !seen[uint64(round*1000+i+1)] {
				t.Fatalf("missing user_data %d", round*1000+i+1)
			}
		}
		if r.CQReady() != 0 {
			t.Fatalf("CQ not drained: %d", r.CQReady())
		}
	}
	// WaitCQE / PeekCQE / AdvanceCQ path.
	sqe := r.GetSQE()
	sqe.PrepNop()
	sqe.SetUserData(42)
	cqe, err := r.WaitCQE()
	if err != nil || cqe.UserData != 42 {
		t.Fatalf("WaitCQE = %+v, %v", cqe, err)
	}
	r.AdvanceCQ(1)
	if r.PeekCQE() != nil {
		t.Fatal("CQ should be empty")
	}
}

func TestCQESkipSuccess(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	sqe := r.GetSQE()
	sqe.PrepNop()
	sqe.SetFlags(SQECQESkipSuccess)
	sqe.SetUserData(1)
	sqe = r.GetSQE()
	sqe.PrepNop()
	sqe.SetUserData(2)
	c := waitCQEs(t, r, 1, 2*time.Second)
	if c[0].UserData != 2 {
		t.Fatalf("got %+v", c[0])
	}
	if _, err := r.SubmitAndWaitTimeout(1, 20*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("skipped CQE posted anyway? err=%v ready=%d", err, r.CQReady())
	}
}

func TestSQFull(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	n := 0
	for r.GetSQE() != nil {
		n++
		if n > 64 {
			t.Fatal("GetSQE never returned nil")
		}
	}
	if uint32(n) != r.SQEntries() || r.SQSpace() != 0 || r.SQReady() != r.SQEntries() {
		t.Fatalf("got %d SQEs, entries %d, space %d, ready %d", n, r.SQEntries(), r.SQSpace(), r.SQReady())
	}
	// The zeroed SQEs are NOPs (opcode 0); fd 0 is fine for a NOP.
	got, err := r.Submit()
	if err != nil || got != n {
		t.Fatalf("Submit = %d, %v", got, err)
	}
	if r.SQSpace() != r.SQEntries() {
		t.Fatalf("space after submit %d", r.SQSpace())
	}
	sqe := r.GetSQE()
	if sqe == nil {
		t.Fatal("GetSQE nil after submit")
	}
	sqe.PrepNop()
	waitCQEs(t, r, n+1, 2*time.Second)
}

func TestWaitTimeout(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	start := time.Now()
	_, err := r.SubmitAndWaitTimeout(1, 30*time.Millisecond)
	el := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if el < 25*time.Millisecond || el > time.Second {
		t.Fatalf("waited %v for a 30ms timeout", el)
	}
	if c, err := r.WaitCQETimeout(5 * time.Millisecond); c != nil || !errors.Is(err, ErrTimeout) {
		t.Fatalf("WaitCQETimeout = %v, %v", c, err)
	}
	sqe := r.GetSQE()
	sqe.PrepNop()
	sqe.SetUserData(9)
	c, err := r.WaitCQETimeout(time.Second)
	if err != nil || c.UserData != 9 {
		t.Fatalf("WaitCQETimeout = %+v, %v", c, err)
	}
	r.AdvanceCQ(1)
}

func TestTimeoutOp(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	arena, err := NewArena(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer arena.Close()

	// Relative.
	ts := arena.Timespec(50 * time.Millisecond)
	start := time.Now()
	sqe := r.GetSQE()
	sqe.PrepTimeout(ts, 0, 0)
	sqe.SetUserData(1)
	c := waitCQEs(t, r, 1, 3*time.Second)[0]
	el := time.Since(start)
	if c.UserData != 1 || c.Res != -int32(unix.ETIME) {
		t.Fatalf("relative timeout cqe %+v", c)
	}
	if el < 45*time.Millisecond || el > 800*time.Millisecond {
		t.Fatalf("50ms timeout fired after %v", el)
	}

	// Absolute (CLOCK_MONOTONIC).
	abs := arena.Timespec(0)
	if err := abs.SetMonotonicDeadline(30 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	sqe = r.GetSQE()
	sqe.PrepTimeout(abs, 0, TimeoutAbs)
	sqe.SetUserData(2)
	c = waitCQEs(t, r, 1, 3*time.Second)[0]
	el = time.Since(start)
	if c.UserData != 2 || c.Res != -int32(unix.ETIME) {
		t.Fatalf("absolute timeout cqe %+v", c)
	}
	if el < 20*time.Millisecond || el > 800*time.Millisecond {
		t.Fatalf("30ms absolute timeout fired after %v", el)
	}

	// Count-based: completes with 0 once one other CQE was posted.
	long := arena.Timespec(10 * time.Second)
	sqe = r.GetSQE()
	sqe.PrepTimeout(long, 1, 0)
	sqe.SetUserData(3)
	sqe = r.GetSQE()
	sqe.PrepNop()
	sqe.SetUserData(4)
	got := map[uint64]int32{}
	for _, c := range waitCQEs(t, r, 2, 3*time.Second) {
		got[c.UserData] = c.Res
	}
	if res, ok := got[3]; !ok || res != 0 {
		t.Fatalf("count timeout: %v", got)
	}
}

func TestLinkTimeoutAndCancel(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 16, nil)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	arena, err := NewArena(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	defer arena.Close()
	buf := arena.Alloc(128)

	// 1. A recv that never completes, cancelled by its linked timeout.
	ts := arena.Timespec(30 * time.Millisecond)
	start := time.Now()
	sqe := r.GetSQE()
	sqe.PrepRecv(int32(fds[0]), unsafe.Pointer(&buf[0]), uint32(len(buf)), 0)
	sqe.SetFlags(SQEIOLink)
	sqe.SetUserData(1)
	sqe = r.GetSQE()
	sqe.PrepLinkTimeout(ts, 0)
	sqe.SetUserData(2)
	var canceled, timedOut int
	for _, c := range waitCQEs(t, r, 2, 3*time.Second) {
		switch {
		case c.UserData == 1 && c.Res == -int32(unix.ECANCELED):
			canceled++
		case c.UserData == 2 && c.Res == -int32(unix.ETIME):
			timedOut++
		default:
			t.Errorf("unexpected cqe %+v", c)
		}
	}
	if canceled != 1 || timedOut != 1 {
		t.Fatalf("canceled=%d timedOut=%d", canceled, timedOut)
	}
	if el := time.Since(start); el < 25*time.Millisecond || el > time.Second {
		t.Fatalf("link timeout took %v", el)
	}

	// 2. The recv wins: the link timeout is cancelled instead.
	if _, err := unix.Write(fds[1], []byte("hello")); err != nil {
		t.Fatal(err)
	}
	ts2 := arena.Timespec(5 * time.Second)
	sqe = r.GetSQE()
	sqe.PrepRecv(int32(fds[0]), unsafe.Pointer(&buf[0]), uint32(len(buf)), 0)
	sqe.SetFlags(SQEIOLink)
	sqe.SetUserData(3)
	sqe = r.GetSQE()
	sqe.PrepLinkTimeout(ts2, 0)
	sqe.SetUserData(4)
	for _, c := range waitCQEs(t, r, 2, 3*time.Second) {
		switch {
		case c.UserData == 3 && c.Res == 5 && string(buf[:5]) == "hello":
		case c.UserData == 4 && c.Res == -int32(unix.ECANCELED):
		default:
			t.Errorf("unexpected cqe %+v", c)
		}
	}

	// 3. Explicit cancel by user_data.
	sqe = r.GetSQE()
	sqe.PrepRecv(int32(fds[0]), unsafe.Pointer(&buf[0]), uint32(len(buf)), 0)
	sqe.SetUserData(5)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	sqe = r.GetSQE()
	sqe.PrepCancel(5, 0)
	sqe.SetUserData(6)
	for _, c := range waitCQEs(t, r, 2, 3*time.Second) {
		switch {
		case c.UserData == 5 && c.Res == -int32(unix.ECANCELED):
		case c.UserData == 6 && c.Res == 0:
		default:
			t.Errorf("unexpected cqe %+v", c)
		}
	}
	// Cancelling something that does not exist.
	sqe = r.GetSQE()
	sqe.PrepCancel(12345, 0)
	sqe.SetUserData(7)
	if c := waitCQEs(t, r, 1, 3*time.Second)[0]; c.Res != -int32(unix.ENOENT) {
		t.Fatalf("cancel of unknown = %+v", c)
	}
}

func TestSQPoll(t *testing.T) {
	lockThread(t)
	if n := sqpollThreads(); n != 0 {
		t.Logf("%d SQPOLL threads from earlier tests still exiting", n)
	}
	r, err := New(16, &Options{SQPoll: true, SQThreadIdle: 10 * time.Millisecond})
	if errors.Is(err, ErrUnavailable) || errors.Is(err, unix.EPERM) {
		t.Skipf("SQPOLL unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Flags()&SetupSQPoll == 0 {
		t.Fatalf("flags %s", FlagNames(r.Flags()))
	}
	t.Logf("SQPOLL ring flags: %s", FlagNames(r.Flags()))
	// The SQ thread is created by setup; its name may show up a moment later.
	for wait := time.Now().Add(2 * time.Second); sqpollThreads() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatal("no iou-sqp thread found")
		}
	}
	for i := 0; i < 4; i++ {
		sqe := r.GetSQE()
		sqe.PrepNop()
		sqe.SetUserData(uint64(i))
	}
	waitCQEs(t, r, 4, 3*time.Second)

	// Let the SQ thread go idle; it must then ask for a wakeup.
	deadline := time.Now().Add(2 * time.Second)
	for r.SQFlags()&SQNeedWakeup == 0 {
		if time.Now().After(deadline) {
			t.Fatal("SQPOLL thread never set IORING_SQ_NEED_WAKEUP")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, w0 := r.Stats()
	sqe := r.GetSQE()
	sqe.PrepNop()
	sqe.SetUserData(100)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	if _, w1 := r.Stats(); w1 <= w0 {
		t.Fatalf("Submit did not wake the SQ thread (wakeups %d -> %d)", w0, w1)
	}
	if c := waitCQEs(t, r, 1, 3*time.Second)[0]; c.UserData != 100 {
		t.Fatalf("cqe %+v", c)
	}

	// While it is awake, submissions need no system call.
	for i := 0; i < 3; i++ {
		sqe := r.GetSQE()
		sqe.PrepNop()
	}
	waitCQEs(t, r, 3, 3*time.Second)

	r.Close()
	deadline = time.Now().Add(3 * time.Second)
	for sqpollThreads() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("SQPOLL thread still alive 3s after Close")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sqpollThreads counts this process's io_uring SQPOLL kernel threads.
func sqpollThreads() int { return countThreads("iou-sqp") }

// ioThreads counts all io_uring kernel threads (SQPOLL and io-wq workers).
func ioThreads() int { return countThreads("iou-") }

func countThreads(prefix string) int {
	comms, _ := filepath.Glob("/proc/self/task/*/comm")
	n := 0
	for _, p := range comms {
		b, err := os.ReadFile(p)
		if err == nil && strings.HasPrefix(string(b), prefix) {
			n++
		}
	}
	return n
}

func TestWrongThread(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	if r.Flags()&SetupDeferTaskrun == 0 {
		t.Skipf("ring is not DEFER_TASKRUN (%s)", FlagNames(r.Flags()))
	}
	errc := make(chan error)
	go func() {
		runtime.LockOSThread() // guaranteed to be another thread: ours is locked to us
		defer runtime.UnlockOSThread()
		sqe := r.GetSQE()
		sqe.PrepNop()
		sqe.SetUserData(77)
		_, err := r.Submit()
		errc <- err
	}()
	if err := <-errc; !errors.Is(err, ErrWrongThread) || !errors.Is(err, unix.EEXIST) {
		t.Fatalf("submit from another thread: %v", err)
	}
	// The owner thread can still submit the queued NOP.
	if c := waitCQEs(t, r, 1, 2*time.Second)[0]; c.UserData != 77 {
		t.Fatalf("cqe %+v", c)
	}
}

func TestAnyThread(t *testing.T) {
	r := newTestRing(t, 8, &Options{AnyThread: true})
	if r.Flags()&(SetupSingleIssuer|SetupDeferTaskrun) != 0 {
		t.Fatalf("flags %s", FlagNames(r.Flags()))
	}
	for i := 0; i < 3; i++ {
		done := make(chan error)
		go func() {
			sqe := r.GetSQE()
			sqe.PrepNop()
			_, err := r.SubmitAndWait(1)
			r.AdvanceCQ(1)
			done <- err
		}()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestClosedRing(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	r.Close()
	if r.GetSQE() != nil || r.PeekCQE() != nil || r.CQReady() != 0 {
		t.Fatal("closed ring still hands out entries")
	}
	if _, err := r.Submit(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit on closed ring: %v", err)
	}
	if err := r.RegisterFiles([]int32{-1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("RegisterFiles on closed ring: %v", err)
	}
}

func TestSetupErrors(t *testing.T) {
	e := explainSetupErr("io_uring_setup", unix.EPERM, 0)
	if !errors.Is(e, ErrUnavailable) || !errors.Is(e, unix.EPERM) ||
		!strings.Contains(e.Error(), "seccomp") || !strings.Contains(e.Error(), "--engine net") {
		t.Errorf("EPERM: %v", e)
	}
	if e := explainSetupErr("io_uring_setup", unix.EPERM, 2); !strings.Contains(e.Error(), "io_uring_disabled=2") {
		t.Errorf("EPERM/2: %v", e)
	}
	if e := explainSetupErr("io_uring_setup", unix.ENOSYS, -1); !errors.Is(e, ErrUnavailable) ||
		!strings.Contains(e.Error(), "kernel has no io_uring") {
		t.Errorf("ENOSYS: %v", e)
	}
	if e := explainSetupErr("io_uring_setup", unix.ENOMEM, -1); !errors.Is(e, ErrUnavailable) ||
		!strings.Contains(e.Error(), "ulimit -l") {
		t.Errorf("ENOMEM: %v", e)
	}
	if e := explainSetupErr("io_uring_setup", unix.EINVAL, -1); errors.Is(e, ErrUnavailable) {
		t.Errorf("EINVAL must not count as unavailable: %v", e)
	}

	old := ioUringDisabledPath
	defer func() { ioUringDisabledPath = old }()
	p := filepath.Join(t.TempDir(), "io_uring_disabled")
	os.WriteFile(p, []byte("2\n"), 0o644)
	ioUringDisabledPath = p
	if v := Disabled(); v != 2 {
		t.Errorf("readIOUringDisabled = %d", v)
	}
	ioUringDisabledPath = filepath.Join(t.TempDir(), "missing")
	if v := Disabled(); v != -1 {
		t.Errorf("missing sysctl = %d", v)
	}

	// A real EINVAL from the kernel: too many entries, after all fallbacks.
	lockThread(t)
	if _, err := New(1<<20, nil); !errors.Is(err, unix.EINVAL) || errors.Is(err, ErrUnavailable) {
		t.Errorf("huge ring: %v", err)
	}
}

func TestArena(t *testing.T) {
	a, err := NewArena(100)
	if err != nil {
		t.Fatal(err)
	}
	if a.Cap() != os.Getpagesize() {
		t.Fatalf("cap %d", a.Cap())
	}
	b1 := a.Alloc(3)
	b2 := a.Alloc(5)
	if len(b1) != 3 || cap(b1) != 3 || uintptr(unsafe.Pointer(&b2[0]))%16 != 0 {
		t.Fatal("bad alignment or capacity")
	}
	if a.Alloc(a.Cap()) != nil {
		t.Fatal("over-allocation succeeded")
	}
	p, n, err := a.Sockaddr(mustAddrPort("127.0.0.1:8080"))
	if err != nil || n != unix.SizeofSockaddrInet4 {
		t.Fatal(n, err)
	}
	raw := unsafe.Slice((*byte)(p), n)
	if *(*uint16)(p) != unix.AF_INET || raw[2] != 0x1f || raw[3] != 0x90 || raw[4] != 127 || raw[7] != 1 {
		t.Fatalf("sockaddr_in bytes %v", raw)
	}
	p, n, err = a.Sockaddr(mustAddrPort("[::1]:443"))
	if err != nil || n != unix.SizeofSockaddrInet6 {
		t.Fatal(n, err)
	}
	raw = unsafe.Slice((*byte)(p), n)
	if *(*uint16)(p) != unix.AF_INET6 || raw[2] != 1 || raw[3] != 0xbb || raw[23] != 1 {
		t.Fatalf("sockaddr_in6 bytes %v", raw)
	}
	a.Reset()
	if a.Used() != 0 {
		t.Fatal("reset")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil || a.Alloc(1) != nil {
		t.Fatal("closed arena")
	}
}

func TestRegisterBuffers(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	a, err := NewArena(2 * 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b0, b1 := a.Alloc(4096), a.Alloc(4096)
	if err := r.RegisterBuffers([][]byte{b0, b1}); err != nil {
		t.Fatal(err)
	}

	// A loopback TCP pair: zero-copy send needs a real TCP socket.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	port := ln.Addr().(*net.TCPAddr).Port
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()

	if !r.Supports(OpSendZC) {
		t.Skip("no IORING_OP_SEND_ZC")
	}
	copy(b1[100:], "fixed buffer")
	sqe := r.GetSQE()
	sqe.PrepSendZCFixed(int32(fd), unsafe.Pointer(&b1[100]), 12, 0, 1)
	sqe.SetUserData(5)
	first := waitCQEs(t, r, 1, 2*time.Second)[0]
	if first.Res != 12 {
		t.Fatalf("send_zc from registered buffer: %+v", first)
	}
	if first.More() {
		if n := waitCQEs(t, r, 1, 2*time.Second)[0]; n.Flags&CQEFNotif == 0 || n.UserData != 5 {
			t.Fatalf("expected notification CQE, got %+v", n)
		}
	}
	got := make([]byte, 32)
	peer.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := io.ReadAtLeast(peer, got, 12)
	if err != nil || string(got[:n]) != "fixed buffer" {
		t.Fatalf("peer read %q, %v", got[:n], err)
	}

	// Plain send with a registered buffer: kernel-version dependent.
	sqe = r.GetSQE()
	sqe.PrepSendFixed(int32(fd), unsafe.Pointer(&b0[0]), 4, 0, 0)
	if c := waitCQEs(t, r, 1, 2*time.Second)[0]; c.Res != 4 {
		t.Logf("IORING_OP_SEND with a registered buffer: res %d (unsupported by this kernel)", c.Res)
	}
	if err := r.UnregisterBuffers(); err != nil {
		t.Fatal(err)
	}
}

func TestBufRingRecycle(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	br, err := r.NewBufRing(3, 4, 64)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	// 10 messages through a 4-buffer group: only works if recycling works.
	for i := 0; i < 10; i++ {
		msg := []byte{byte(i), 'x', 'y'}
		if _, err := unix.Write(fds[1], msg); err != nil {
			t.Fatal(err)
		}
		sqe := r.GetSQE()
		sqe.PrepRecvSelect(int32(fds[0]), br.Group(), 64, 0)
		sqe.SetUserData(uint64(i))
		c := waitCQEs(t, r, 1, 2*time.Second)[0]
		if c.Res != 3 || !c.HasBuffer() {
			t.Fatalf("recv %d: %+v", i, c)
		}
		if got := br.Buf(c.BufferID())[:3]; got[0] != byte(i) || string(got[1:]) != "xy" {
			t.Fatalf("buffer %d holds %v", c.BufferID(), got)
		}
		br.Recycle(c.BufferID())
	}
	if _, err := r.NewBufRing(3, 4, 64); err == nil {
		t.Fatal("duplicate buffer group accepted")
	}
	if _, err := r.NewBufRing(4, 3, 64); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("non power of two: %v", err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAllocsPerCycle(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 16, nil)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	a, err := NewArena(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sbuf, rbuf := a.Alloc(64), a.Alloc(64)
	var cqes [8]CQE
	bad := 0
	cycle := func() {
		s := r.GetSQE()
		s.PrepSend(int32(fds[0]), unsafe.Pointer(&sbuf[0]), 64, 0)
		s.SetUserData(1)
		s = r.GetSQE()
		s.PrepRecv(int32(fds[1]), unsafe.Pointer(&rbuf[0]), 64, 0)
		s.SetUserData(2)
		if _, err := r.SubmitAndWait(2); err != nil {
			bad++
			return
		}
		got := r.PeekCQEs(cqes[:])
		if got != 2 || cqes[0].Res != 64 || cqes[1].Res != 64 {
			bad++
		}
	}
	if n := testing.AllocsPerRun(200, cycle); n != 0 {
		t.Errorf("send/recv/complete cycle allocates %v times", n)
	}
	timed := func() {
		s := r.GetSQE()
		s.PrepNop()
		if _, err := r.SubmitAndWaitTimeout(1, time.Second); err != nil {
			bad++
		}
		r.ForEachCQE(checkNop)
	}
	if n := testing.AllocsPerRun(200, timed); n != 0 {
		t.Errorf("timed nop cycle allocates %v times", n)
	}
	if bad != 0 {
		t.Fatalf("%d bad cycles", bad)
	}
}

func checkNop(c *CQE) {
	if c.Res != 0 {
		panic("nop failed")
	}
}

func BenchmarkNopRoundTrip(b *testing.B) {
	lockThread(b)
	r := newTestRing(b, 64, nil)
	var cqes [16]CQE
	b.ReportAllocs()
	for b.Loop() {
		s := r.GetSQE()
		s.PrepNop()
		if _, err := r.SubmitAndWait(1); err != nil {
			b.Fatal(err)
		}
		r.PeekCQEs(cqes[:])
	}
}
