//go:build linux

package uring

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
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

// noopUD is a user_data no request ever has: cancelling it is the cheapest
// operation that completes (with -ENOENT) without touching any descriptor.
const noopUD = 0xdead_beef_0000

// queueNoop queues a cancellation of noopUD with user_data ud.
func queueNoop(t testing.TB, r *Ring, ud uint64) {
	t.Helper()
	sqe := r.GetSQE()
	if sqe == nil {
		t.Fatal("GetSQE: submission queue full")
	}
	sqe.PrepCancel(noopUD, 0)
	sqe.SetUserData(ud)
}

func countFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("read /proc/self/fd: %v", err)
	}
	return len(ents)
}

// ringMappings counts this process's mappings of io_uring rings.
func ringMappings(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "io_uring")
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

// TestLayout checks the structs shared with the kernel field by field
// against include/uapi/linux/io_uring.h.
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
		{"timespec.nsec", unsafe.Offsetof(Timespec{}.Nsec), 8},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// TestRingMapping checks what New mapped: ring sizes and masks (the CQ size
// option included), and heads equal to tails on a fresh ring.
func TestRingMapping(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, &Options{CQEntries: 1024})
	if r.sqEntries != 8 || len(r.sqes) != 8 || r.sqMask != 7 {
		t.Errorf("SQ: %d entries, %d SQEs, mask %#x; want 8, 8, 0x7", r.sqEntries, len(r.sqes), r.sqMask)
	}
	if r.cqEntries != 1024 || len(r.cqes) != 1024 || r.cqMask != 1023 || r.flags&SetupCQSize == 0 {
		t.Errorf("CQ: %d entries, %d CQEs, mask %#x, flags %#x; want 1024 with CQSIZE",
			r.cqEntries, len(r.cqes), r.cqMask, r.flags)
	}
	if *r.sqHead != *r.sqTail || *r.cqHead != *r.cqTail || r.cqReady() != 0 {
		t.Errorf("fresh ring: SQ head %d tail %d, CQ head %d tail %d", *r.sqHead, *r.sqTail, *r.cqHead, *r.cqTail)
	}
	// Defaults: 256 SQ entries and the kernel's CQ of twice that.
	d := newTestRing(t, 0, nil)
	if d.sqEntries != 256 || d.cqEntries != 512 {
		t.Errorf("default ring: SQ %d, CQ %d; want 256, 512", d.sqEntries, d.cqEntries)
	}
}

// TestSetupTeardownNoLeak creates and closes 100 rings, each with a buffer
// ring and a completed operation: no descriptor, ring mapping, buffer ring
// memory or kernel thread may be left behind.
func TestSetupTeardownNoLeak(t *testing.T) {
	lockThread(t)
	// Warm up (the first ring may lazily allocate per-process things).
	newTestRing(t, 8, nil).Close()
	fds, maps, threads := countFDs(t), ringMappings(t), ioThreads()
	for i := range 100 {
		r, err := New(32, nil)
		if err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
		br, err := r.NewBufRing(1, 8, 256)
		if err != nil {
			t.Fatalf("iteration %d: NewBufRing: %v", i, err)
		}
		if ringMappings(t) <= maps {
			t.Fatalf("iteration %d: no io_uring mapping while the ring is open", i)
		}
		queueNoop(t, r, 1)
		if c := waitCQEs(t, r, 1, 2*time.Second)[0]; c.UserData != 1 || c.Res != -int32(unix.ENOENT) {
			t.Fatalf("iteration %d: cqe %+v", i, c)
		}
		if err := r.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		if err := r.Close(); err != nil { // idempotent
			t.Fatalf("second close: %v", err)
		}
		if br.ringMem != nil || br.bufMem != nil {
			t.Fatalf("iteration %d: Ring.Close left the buffer ring mapped", i)
		}
	}
	if after := countFDs(t); after != fds {
		t.Errorf("fd count %d -> %d after 100 setup/teardown cycles", fds, after)
	}
	if after := ringMappings(t); after != maps {
		t.Errorf("io_uring mappings %d -> %d after 100 setup/teardown cycles", maps, after)
	}
	// No kernel threads may be left behind (io-wq workers from earlier tests
	// may still be idling out, so only growth counts).
	for wait := time.Now().Add(3 * time.Second); ioThreads() > threads; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("io_uring threads %d -> %d", threads, ioThreads())
		}
	}
}

// TestProbe checks the opcode probe and the features hail's engine needs.
func TestProbe(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	if !r.Probed() {
		t.Fatal("IORING_REGISTER_PROBE failed")
	}
	for _, op := range []uint8{OpSend, OpRecvmsg, OpRead, OpConnect, OpAsyncCancel, OpClose, OpShutdown} {
		if !r.Supports(op) {
			t.Errorf("op %d not supported", op)
		}
	}
	if r.Supports(255) {
		t.Error("opcode 255 reported as supported")
	}
	if want := FeatExtArg | FeatNoDrop | FeatSingleMmap; r.Features()&want != want {
		t.Errorf("features %#x lack %#x", r.Features(), want)
	}
}

// TestSQFull fills the submission queue until GetSQE refuses, submits, and
// repeats for 20 rounds on an 8-entry ring: the queue refills after every
// Submit, every entry completes exactly once, and the indices wrap around
// both rings many times.
func TestSQFull(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, &Options{CQEntries: 8})
	next := uint64(1)
	for round := range 20 {
		first := next
		for {
			sqe := r.GetSQE()
			if sqe == nil {
				break
			}
			sqe.PrepCancel(noopUD, 0)
			sqe.SetUserData(next)
			next++
			if next-first > 64 {
				t.Fatal("GetSQE never returned nil")
			}
		}
		if n := next - first; n != uint64(r.sqEntries) {
			t.Fatalf("round %d: %d SQEs before the queue was full, want %d", round, n, r.sqEntries)
		}
		if got, err := r.Submit(); err != nil || got != int(r.sqEntries) {
			t.Fatalf("round %d: Submit = %d, %v", round, got, err)
		}
		seen := map[uint64]bool{}
		for _, c := range waitCQEs(t, r, int(r.sqEntries), 2*time.Second) {
			if c.UserData < first || c.UserData >= next || seen[c.UserData] || c.Res != -int32(unix.ENOENT) {
				t.Fatalf("round %d: unexpected cqe %+v (want user_data %d..%d once each)", round, c, first, next-1)
			}
			seen[c.UserData] = true
		}
	}
	if _, err := r.SubmitAndWaitTimeout(1, 10*time.Millisecond); !errors.Is(err, ErrTimeout) || r.cqReady() != 0 {
		t.Fatalf("extra completions: err %v, %d ready", err, r.cqReady())
	}
}

// TestWaitTimeout bounds waits: nothing to wait for times out after about
// the bound; fewer completions than asked for time out but stay in the CQ;
// enough completions return at once.
func TestWaitTimeout(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	start := time.Now()
	_, err := r.SubmitAndWaitTimeout(1, 30*time.Millisecond)
	if el := time.Since(start); !errors.Is(err, ErrTimeout) || el < 25*time.Millisecond || el > 2*time.Second {
		t.Fatalf("empty ring: err %v after %v; want ErrTimeout after 30ms", err, el)
	}
	if _, err := r.SubmitAndWaitTimeout(1, -time.Second); !errors.Is(err, ErrTimeout) {
		t.Fatalf("negative bound: %v", err)
	}

	queueNoop(t, r, 7)
	start = time.Now()
	n, err := r.SubmitAndWaitTimeout(2, 30*time.Millisecond)
	if el := time.Since(start); n != 1 || !errors.Is(err, ErrTimeout) || el < 25*time.Millisecond {
		t.Fatalf("1 of 2: submitted %d, err %v after %v; want 1, ErrTimeout after 30ms", n, err, el)
	}
	var cqes [4]CQE
	if k := r.PeekCQEs(cqes[:]); k != 1 || cqes[0].UserData != 7 {
		t.Fatalf("the completion that did arrive: %d %+v", k, cqes[0])
	}

	queueNoop(t, r, 8)
	start = time.Now()
	if n, err := r.SubmitAndWaitTimeout(1, 5*time.Second); n != 1 || err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("ready completion: submitted %d, err %v after %v", n, err, time.Since(start))
	}
	if k := r.PeekCQEs(cqes[:]); k != 1 || cqes[0].UserData != 8 {
		t.Fatalf("got %d %+v", k, cqes[0])
	}
	if k := r.PeekCQEs(cqes[:0]); k != 0 {
		t.Fatalf("PeekCQEs into an empty slice = %d", k)
	}
}

// TestSQPoll runs a ring with a kernel submission thread: submissions
// complete without waiting in the kernel, an idle thread asks to be woken
// and Submit wakes it, and Close ends the thread.
func TestSQPoll(t *testing.T) {
	lockThread(t)
	if n := sqpollThreads(); n != 0 {
		t.Logf("%d SQPOLL threads from earlier tests still exiting", n)
	}
	r, err := New(16, &Options{SQPoll: true})
	if errors.Is(err, ErrUnavailable) || errors.Is(err, unix.EPERM) {
		t.Skipf("SQPOLL unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.flags&SetupSQPoll == 0 {
		t.Fatalf("flags %#x lack SQPOLL", r.flags)
	}
	// The SQ thread is created by setup; its name may show up a moment later.
	for wait := time.Now().Add(2 * time.Second); sqpollThreads() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatal("no iou-sqp thread found")
		}
	}
	for i := range 4 {
		queueNoop(t, r, uint64(i))
	}
	waitCQEs(t, r, 4, 3*time.Second)

	// The thread goes idle after a second (the kernel's default) and then
	// asks for a wake-up.
	deadline := time.Now().Add(5 * time.Second)
	for atomic.LoadUint32(r.sqFlags)&SQNeedWakeup == 0 {
		if time.Now().After(deadline) {
			t.Fatal("SQPOLL thread never set IORING_SQ_NEED_WAKEUP")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Submit must wake it: the completion then arrives with no further
	// system call (polling the CQ in user space only).
	queueNoop(t, r, 100)
	if n, err := r.Submit(); n != 1 || err != nil {
		t.Fatalf("Submit = %d, %v", n, err)
	}
	var cqes [4]CQE
	for deadline := time.Now().Add(3 * time.Second); r.PeekCQEs(cqes[:1]) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Submit did not wake the SQ thread: no completion in 3s")
		}
	}
	if cqes[0].UserData != 100 {
		t.Fatalf("cqe %+v", cqes[0])
	}

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

// TestWrongThread uses a SINGLE_ISSUER ring from another OS thread: the
// kernel refuses, the error says why, and the owner thread can still submit
// what was queued.
func TestWrongThread(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	if r.flags&SetupSingleIssuer == 0 {
		t.Skipf("ring is not SINGLE_ISSUER (flags %#x)", r.flags)
	}
	errc := make(chan error)
	go func() {
		runtime.LockOSThread() // guaranteed to be another thread: ours is locked to us
		defer runtime.UnlockOSThread()
		sqe := r.GetSQE()
		sqe.PrepCancel(noopUD, 0)
		sqe.SetUserData(77)
		_, err := r.Submit()
		errc <- err
	}()
	if err := <-errc; !errors.Is(err, ErrWrongThread) || !errors.Is(err, unix.EEXIST) {
		t.Fatalf("submit from another thread: %v", err)
	}
	if c := waitCQEs(t, r, 1, 2*time.Second)[0]; c.UserData != 77 {
		t.Fatalf("cqe %+v", c)
	}
}

// TestClosedRing: a closed ring hands out nothing and says so.
func TestClosedRing(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	queueNoop(t, r, 1)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	var cqes [1]CQE
	if r.GetSQE() != nil || r.PeekCQEs(cqes[:]) != 0 || r.cqReady() != 0 {
		t.Fatal("closed ring still hands out entries")
	}
	if _, err := r.Submit(); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit on closed ring: %v", err)
	}
	if _, err := r.SubmitAndWaitTimeout(1, time.Second); !errors.Is(err, ErrClosed) {
		t.Errorf("SubmitAndWaitTimeout on closed ring: %v", err)
	}
	if _, err := r.NewBufRing(1, 8, 64); !errors.Is(err, ErrClosed) {
		t.Errorf("NewBufRing on closed ring: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var nilRing *Ring
	if err := nilRing.Close(); err != nil {
		t.Errorf("Close of a nil ring: %v", err)
	}
}

// TestSetupErrors: each setup errno gets its explanation, and those that
// mean "no io_uring here" wrap ErrUnavailable so callers can fall back.
func TestSetupErrors(t *testing.T) {
	for _, tc := range []struct {
		errno       unix.Errno
		disabled    int
		unavailable bool
		says        string
	}{
		{unix.EPERM, 0, true, "seccomp"},
		{unix.EPERM, 2, true, "io_uring_disabled=2"},
		{unix.EACCES, 1, true, "io_uring_group"},
		{unix.ENOSYS, -1, true, "kernel has no io_uring"},
		{unix.ENOMEM, -1, true, "ulimit -l"},
		{unix.EINVAL, -1, false, "entries must be"},
		{unix.EMFILE, -1, false, "ulimit -n"},
	} {
		e := explainSetupErr("io_uring_setup", tc.errno, tc.disabled)
		if errors.Is(e, ErrUnavailable) != tc.unavailable || !errors.Is(e, tc.errno) ||
			!strings.Contains(e.Error(), tc.says) || !strings.HasPrefix(e.Error(), "uring: io_uring_setup: ") {
			t.Errorf("%v (disabled=%d): %q, unavailable %v; want it to say %q, unavailable %v",
				tc.errno, tc.disabled, e, errors.Is(e, ErrUnavailable), tc.says, tc.unavailable)
		}
		if tc.unavailable && !strings.Contains(e.Error(), "--engine net") {
			t.Errorf("%v: %q does not name the fallback", tc.errno, e)
		}
	}

	old := ioUringDisabledPath
	defer func() { ioUringDisabledPath = old }()
	dir := t.TempDir()
	for content, want := range map[string]int{"0\n": 0, "1\n": 1, "2\n": 2, "7\n": -1, "": -1} {
		p := filepath.Join(dir, "io_uring_disabled")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		ioUringDisabledPath = p
		if v := Disabled(); v != want {
			t.Errorf("sysctl %q: Disabled() = %d, want %d", content, v, want)
		}
	}
	ioUringDisabledPath = filepath.Join(dir, "missing")
	if v := Disabled(); v != -1 {
		t.Errorf("missing sysctl: Disabled() = %d", v)
	}

	// A real EINVAL from the kernel: too many entries, after all fallbacks.
	lockThread(t)
	if _, err := New(1<<20, nil); !errors.Is(err, unix.EINVAL) || errors.Is(err, ErrUnavailable) {
		t.Errorf("huge ring: %v", err)
	}
	// A CQ smaller than the SQ is refused too.
	if _, err := New(64, &Options{CQEntries: 8}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("CQ smaller than SQ: %v", err)
	}
}
