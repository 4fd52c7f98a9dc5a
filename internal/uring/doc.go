//go:build linux

// Package uring is a small io_uring layer written directly on the raw
// io_uring_setup(2), io_uring_enter(2) and io_uring_register(2) system calls.
//
// No Go io_uring module is available to this project, so this package is
// hand-written against the kernel UAPI (include/uapi/linux/io_uring.h). It
// covers what hail's uring engine uses and nothing more: connect, send,
// multishot receive into a provided buffer ring, read, shutdown, close,
// cancellation, bounded waits, and an opcode probe.
//
// # Usage model
//
// One Ring belongs to one goroutine, which should be locked to its OS thread
// (runtime.LockOSThread) before New and for the whole life of the ring. A
// Ring is not safe for concurrent use. By default New asks the kernel for
// IORING_SETUP_SINGLE_ISSUER|IORING_SETUP_DEFER_TASKRUN: with those flags the
// kernel only accepts io_uring_enter and io_uring_register from the thread
// that created the ring (other threads get EEXIST, reported as
// ErrWrongThread), and completions are only posted while that thread calls
// io_uring_enter with IORING_ENTER_GETEVENTS, which Submit and
// SubmitAndWaitTimeout both do. (Kernels without those flags get
// COOP_TASKRUN, or a plain ring; the ring is still single-goroutine.)
//
// A typical event loop:
//
//	for {
//		// queue work: sqe := r.GetSQE(); sqe.PrepSend(...); sqe.SetUserData(...)
//		r.SubmitAndWaitTimeout(1, d) // one io_uring_enter per batch
//		n := r.PeekCQEs(cqes[:])     // copy out and release completions
//		for i := range cqes[:n] { handle(&cqes[i]) }
//	}
//
// # Memory ordering
//
// The SQ and CQ rings are shared with the kernel through mmap(2). The rules
// followed here are the ones liburing follows:
//
//   - SQ: the application is the only producer. It fills SQEs (and the SQ
//     index array, which is initialised once to the identity mapping) with
//     plain stores, then publishes them by storing the SQ tail with release
//     semantics. The kernel stores the SQ head when it has consumed entries;
//     the application loads it with acquire semantics before reusing slots.
//   - CQ: the kernel is the only producer. It writes CQEs and store-releases
//     the CQ tail; the application load-acquires the tail, reads the CQEs,
//     then store-releases the CQ head to hand the slots back.
//   - Flags (IORING_SQ_NEED_WAKEUP, IORING_SQ_CQ_OVERFLOW, IORING_SQ_TASKRUN)
//     are read with atomic loads. Under SQPOLL the tail store and the
//     following NEED_WAKEUP load must not be reordered (store->load needs a
//     full barrier).
//   - Provided buffer rings: the application is the producer; buffer entries
//     are written plainly and the 16-bit tail is published with a 32-bit
//     atomic store of the word that contains it (Go has no 16-bit atomics).
//
// All of these use sync/atomic on *uint32 pointing into the mmapped memory.
// Go's atomics are sequentially consistent, which is at least as strong as
// acquire/release and also provides the store->load ordering SQPOLL needs
// (XCHG on amd64, STLR/LDAR on arm64).
//
// # Memory the kernel reads or writes later
//
// Anything the kernel touches after the submitting system call returns (send
// and read buffers, sockaddrs for connect, provided buffers) must neither
// move nor be freed until the corresponding completion has been reaped. The
// SQE only carries the address as an integer, so the Go garbage collector
// does not see the reference: Go's collector does not move heap objects
// today, but an object whose only remaining reference is held by the kernel
// can be collected and its memory reused while the kernel still writes to
// it. The safe choice is memory that the Go runtime does not manage at all:
// use Arena (anonymous mmap) for request bytes, read buffers and sockaddrs,
// and BufRing for provided buffers. If Go heap memory is used anyway, the
// caller must keep it reachable (and runtime.KeepAlive it) until the
// completion arrives.
//
// Arguments that the kernel only reads during the system call itself
// (io_uring_params, the probe, the buffer ring registration, the wait
// timeout) may be ordinary Go memory.
//
// # Resources
//
// Close unmaps the rings and closes the ring fd; the kernel then drops the
// ring's provided buffer rings (asynchronously, in its ring-exit work),
// cancels what is in flight, and stops the SQPOLL thread. BufRing memory is
// unmapped by Ring.Close; Arena memory, a plain mmap too, by Arena.Close,
// which must come after the ring's Close.
package uring
