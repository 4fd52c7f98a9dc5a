//go:build linux

package uring

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// GetSQE returns the next free submission entry, zeroed, or nil when the SQ
// is full (call Submit and try again; under SQPOLL the
// kernel thread frees slots asynchronously). The entry is owned by the
// caller until the next Submit* call publishes it to the kernel.
func (r *Ring) GetSQE() *SQE {
	if r.closed {
		return nil
	}
	head := atomic.LoadUint32(r.sqHead) // acquire: the kernel is done with slots before head
	if r.sqeTail-head >= r.sqEntries {
		return nil
	}
	sqe := &r.sqes[r.sqeTail&r.sqMask]
	r.sqeTail++
	*sqe = SQE{}
	return sqe
}

// flushSQ publishes the locally queued SQEs by storing the SQ tail
// (release) and returns how many published SQEs the kernel has not consumed.
func (r *Ring) flushSQ() uint32 {
	if r.sqeHead != r.sqeTail {
		r.sqeHead = r.sqeTail
		atomic.StoreUint32(r.sqTail, r.sqeTail)
	}
	return r.sqeTail - atomic.LoadUint32(r.sqHead)
}

// needsFlush reports completions stuck in the kernel: CQ overflow backlog,
// or (with TASKRUN_FLAG) deferred task work that only an enter will run.
func (r *Ring) needsFlush() bool {
	return atomic.LoadUint32(r.sqFlags)&(SQCQOverflow|SQTaskrun) != 0
}

func (r *Ring) sqpoll() bool { return r.flags&SetupSQPoll != 0 }

// enter calls io_uring_enter as a raw system call: the Go scheduler does not
// see it. A ring belongs to one locked thread that waits in it between
// batches; through unix.Syscall the scheduler's monitor would hand that
// thread's P to another thread after 20 µs of waiting, and every return
// would then wait to get one back — a context switch per wait (at 50,000
// requests/s: 56,000 switches and 11.0 µs/request instead of 22,000 and
// 9.5). A raw call keeps the P (engines give the rest of the program a P of
// its own), and the signals the runtime uses to preempt (a GC, a goroutine
// running for 10 ms) interrupt the wait with EINTR, which every caller
// retries: nothing waits on it.
func (r *Ring) enter(toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSize uintptr) (int, unix.Errno) {
	n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit),
		uintptr(minComplete), uintptr(flags), uintptr(arg), argSize)
	return int(n), errno
}

func enterErr(errno unix.Errno) error {
	if errno == unix.EEXIST {
		return fmt.Errorf("%w (%w)", ErrWrongThread, errno)
	}
	return fmt.Errorf("uring: io_uring_enter: %w", errno)
}

// Submit publishes queued SQEs and tells the kernel about them with one
// io_uring_enter (none at all under SQPOLL unless the SQ thread sleeps or
// completions are stuck in the kernel). It does not wait. It returns the
// number of SQEs submitted.
//
// EINTR is retried. EAGAIN/EBUSY (kernel short of request memory, or CQ
// overflow backlog) return (0, nil) when completions are ready to be reaped
// — reap them and submit again; the SQEs stay queued — and the error
// otherwise. On DEFER_TASKRUN rings Submit also runs deferred completions.
func (r *Ring) Submit() (int, error) {
	return r.submitWait(0, -1)
}

// submitWait is the common loop of Submit and SubmitAndWaitTimeout. d < 0
// waits without a timeout; otherwise the wait is bounded with
// IORING_ENTER_EXT_ARG.
//
// It stays whole, past ~80 lines: it is one retry loop around
// io_uring_enter, run for every batch the engine submits. Each pass
// decides the enter's flags (SQPOLL or not), enters, and reads the result
// against the counts and the deadline that pass computed; split, those
// would travel between functions on the hot path, and the retry rules
// (partial submission, EINTR, ETIME, EAGAIN) would no longer read beside
// the state they test.
func (r *Ring) submitWait(n uint32, d time.Duration) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	if n > r.cqEntries {
		n = r.cqEntries
	}
	var deadline time.Time
	if d >= 0 {
		deadline = time.Now().Add(d)
	}
	submitted := 0
	for {
		published := r.sqeTail - r.sqeHead
		pending := r.flushSQ()
		wait := n
		if r.cqReady() >= n {
			wait = 0
		}
		var flags uint32
		if r.sqpoll() {
			// The SQ thread consumes SQEs on its own: only enter to wake it,
			// to wait, or to flush completions stuck in the kernel.
			submitted += int(published)
			sqf := atomic.LoadUint32(r.sqFlags) // ordered after the tail store (seq-cst atomics)
			if sqf&SQNeedWakeup != 0 {
				flags |= EnterSQWakeup
			}
			if wait > 0 || sqf&(SQCQOverflow|SQTaskrun) != 0 {
				flags |= EnterGetEvents
			}
			if flags == 0 {
				return submitted, nil
			}
		} else {
			if pending == 0 && wait == 0 && !r.needsFlush() {
				return submitted, nil
			}
			// GETEVENTS even when not waiting: DEFER_TASKRUN rings only post
			// completions from inside GETEVENTS, and it flushes overflow.
			flags = EnterGetEvents
		}
		var ret int
		var errno unix.Errno
		if d < 0 || flags&EnterGetEvents == 0 {
			ret, errno = r.enter(pending, wait, flags, nil, 0)
		} else {
			remaining := time.Until(deadline)
			if remaining < 0 {
				remaining = 0
			}
			r.waitTS.SetDuration(remaining)
			r.extArg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.waitTS)))}
			ret, errno = r.enter(pending, wait, flags|EnterExtArg, unsafe.Pointer(&r.extArg), unsafe.Sizeof(r.extArg))
		}
		switch errno {
		case 0:
			if !r.sqpoll() {
				submitted += ret
			}
			if r.cqReady() >= n && (r.sqpoll() || uint32(ret) >= pending) {
				return submitted, nil
			}
			if ret == 0 && wait == 0 {
				return submitted, nil // nothing consumed, nothing to wait for: do not spin
			}
			// Partial submission, or the wait was cut short (a signal, or the
			// timeout, hidden because some SQEs were submitted): go again.
			if d >= 0 && wait > 0 && !time.Now().Before(deadline) && r.cqReady() < n {
				return submitted, ErrTimeout
			}
			continue
		case unix.EINTR:
			continue
		case unix.ETIME:
			if r.cqReady() >= n {
				return submitted, nil
			}
			return submitted, ErrTimeout
		case unix.EAGAIN, unix.EBUSY:
			if r.cqReady() > 0 {
				return submitted, nil
			}
		}
		return submitted, enterErr(errno)
	}
}

// SubmitAndWaitTimeout publishes queued SQEs and waits until at least n
// completions are ready in the CQ (n is capped at the CQ size), or d has
// passed: then it returns ErrTimeout (completions that did arrive stay in
// the CQ). The common case is one io_uring_enter with
// IORING_ENTER_GETEVENTS; signals (Go's preemption uses SIGURG) are absorbed
// by re-entering. It returns the number of SQEs submitted. The bound uses
// IORING_ENTER_EXT_ARG (Linux 5.11+), so no timeout SQE or CQE is involved.
func (r *Ring) SubmitAndWaitTimeout(n uint32, d time.Duration) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	if r.features&FeatExtArg == 0 {
		return 0, fmt.Errorf("uring: wait timeout needs IORING_FEAT_EXT_ARG (Linux 5.11+): %w", unix.ENOTSUP)
	}
	if d < 0 {
		d = 0
	}
	return r.submitWait(n, d)
}

// cqReady returns the number of completions waiting in the CQ.
func (r *Ring) cqReady() uint32 {
	if r.closed {
		return 0
	}
	return atomic.LoadUint32(r.cqTail) - atomic.LoadUint32(r.cqHead)
}

// PeekCQEs copies up to len(dst) ready completions into dst, releases their
// slots to the kernel and returns how many were copied. It never allocates
// and never enters the kernel.
func (r *Ring) PeekCQEs(dst []CQE) int {
	if r.closed || len(dst) == 0 {
		return 0
	}
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail) // acquire
	n := tail - head
	if n > uint32(len(dst)) {
		n = uint32(len(dst))
	}
	for i := uint32(0); i < n; i++ {
		dst[i] = r.cqes[(head+i)&r.cqMask]
	}
	atomic.StoreUint32(r.cqHead, head+n) // release: slots may be reused
	return int(n)
}
