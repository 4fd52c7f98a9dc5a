//go:build linux

package uring

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by every error meaning "io_uring cannot be used
// on this machine or in this sandbox" (blocked, missing, or out of locked
// memory). Callers test errors.Is(err, ErrUnavailable) to fall back to a
// non-io_uring engine.
var ErrUnavailable = errors.New("io_uring unavailable")

// ErrWrongThread is returned when the kernel rejects a call with EEXIST
// because the ring was created with IORING_SETUP_SINGLE_ISSUER (and
// DEFER_TASKRUN) on a different OS thread.
var ErrWrongThread = errors.New("uring: ring used from an OS thread other than the one that created it " +
	"(SINGLE_ISSUER): call runtime.LockOSThread before New and use the ring only from that goroutine")

// ErrTimeout is returned by SubmitAndWaitTimeout when the
// requested number of completions did not arrive in time.
var ErrTimeout = errors.New("uring: timed out waiting for completions")

// ErrClosed is returned by methods called on a closed Ring.
var ErrClosed = errors.New("uring: ring is closed")

// SetupError describes a failed io_uring_setup (or ring mmap). It wraps the
// errno and, when io_uring is not usable here at all, ErrUnavailable.
type SetupError struct {
	Op          string     // "io_uring_setup", "mmap"
	Errno       unix.Errno // the raw error
	Hint        string     // human explanation
	Unavailable bool       // io_uring cannot be used here; fall back
}

func (e *SetupError) Error() string {
	msg := fmt.Sprintf("uring: %s: %v", e.Op, e.Errno)
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

// Unwrap exposes the errno and, if Unavailable, ErrUnavailable.
func (e *SetupError) Unwrap() []error {
	if e.Unavailable {
		return []error{ErrUnavailable, e.Errno}
	}
	return []error{e.Errno}
}

// ioUringDisabledPath is a variable so tests can point it elsewhere.
var ioUringDisabledPath = "/proc/sys/kernel/io_uring_disabled"

// Disabled returns the kernel.io_uring_disabled sysctl (Linux 6.6+): 0
// allowed, 1 root and kernel.io_uring_group only, 2 disabled; -1 if it
// cannot be read.
func Disabled() int {
	b, err := os.ReadFile(ioUringDisabledPath)
	if err != nil {
		return -1
	}
	switch strings.TrimSpace(string(b)) {
	case "0":
		return 0
	case "1":
		return 1
	case "2":
		return 2
	}
	return -1
}

// explainSetupErr turns an io_uring_setup errno into a SetupError.
func explainSetupErr(op string, errno unix.Errno, disabled int) *SetupError {
	e := &SetupError{Op: op, Errno: errno}
	switch errno {
	case unix.EPERM, unix.EACCES:
		e.Unavailable = true
		switch disabled {
		case 2:
			e.Hint = "io_uring is disabled by sysctl kernel.io_uring_disabled=2: use --engine net"
		case 1:
			e.Hint = "io_uring is restricted by sysctl kernel.io_uring_disabled=1 to CAP_SYS_ADMIN " +
				"or members of kernel.io_uring_group: use --engine net"
		default:
			e.Hint = "io_uring is blocked (kernel.io_uring_disabled=2, or seccomp as in Docker's " +
				"default profile): use --engine net"
		}
	case unix.ENOSYS:
		e.Unavailable = true
		e.Hint = "kernel has no io_uring (CONFIG_IO_URING off, kernel older than 5.1, or a sandbox " +
			"such as gVisor): use --engine net"
	case unix.ENOMEM:
		e.Unavailable = true
		e.Hint = "cannot allocate ring memory; kernels before 5.12 charge rings to RLIMIT_MEMLOCK: " +
			"raise it (ulimit -l) or use fewer/smaller rings, or use --engine net"
	case unix.EINVAL:
		e.Hint = "kernel rejected the ring parameters (entries must be 1..32768, CQ size >= SQ size; " +
			"flags may be unsupported by this kernel)"
	case unix.EMFILE, unix.ENFILE:
		e.Hint = "out of file descriptors (ulimit -n)"
	}
	return e
}

// Setup is the raw io_uring_setup(2) system call. p is read and updated by
// the kernel during the call only.
func Setup(entries uint32, p *Params) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// Options configure New. The zero value (or nil) is a good default for a
// worker-per-thread event loop.
type Options struct {
	// CQEntries, if non-zero, sets the CQ size (IORING_SETUP_CQSIZE); it must
	// be >= the SQ size. The kernel's default is twice the SQ size. With
	// thousands of in-flight requests per ring, size the CQ for all of them.
	CQEntries uint32

	// SQPoll starts a kernel thread that polls the SQ (IORING_SETUP_SQPOLL),
	// so submissions need no system call while it is awake. It sleeps after
	// a second without work (the kernel's default) and Submit wakes it.
	SQPoll bool
}

// Ring is one io_uring instance. It is not safe for concurrent use.
type Ring struct {
	fd       int
	flags    uint32 // setup flags the kernel accepted
	features uint32

	// SQ
	sqHead    *uint32 // kernel-written
	sqTail    *uint32 // we write
	sqFlags   *uint32 // kernel-written
	sqMask    uint32
	sqEntries uint32
	sqes      []SQE
	sqeTail   uint32 // next SQE slot handed out by GetSQE
	sqeHead   uint32 // first SQE not yet published in *sqTail

	// CQ
	cqHead    *uint32 // we write
	cqTail    *uint32 // kernel-written
	cqMask    uint32
	cqEntries uint32
	cqes      []CQE

	sqMem, cqMem, sqeMem []byte

	probed    bool
	supported [4]uint64 // opcode bitmap from IORING_REGISTER_PROBE

	extArg getEventsArg // EXT_ARG wait argument, kept here so waits never allocate
	waitTS Timespec

	bufRings []*BufRing
	closed   bool
}

// New creates a ring with at least entries SQ entries (rounded up to a power
// of two by the kernel). See Options and the package doc for the thread
// rules. The returned error wraps ErrUnavailable when io_uring cannot be used
// here.
func New(entries uint32, opts *Options) (*Ring, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if entries == 0 {
		entries = 256
	}

	// Keep setup, mmap and probe on one thread so SINGLE_ISSUER binds the
	// ring to the caller's (hopefully locked) thread. Nested lock counts are
	// fine: a caller that already locked stays locked.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	base := uint32(0)
	if o.CQEntries != 0 {
		base |= SetupCQSize
	}
	// The best flags first, then what older kernels accept.
	var attempts []uint32
	if o.SQPoll {
		// COOP_TASKRUN/TASKRUN_FLAG/DEFER_TASKRUN are invalid with SQPOLL.
		base |= SetupSQPoll
		attempts = []uint32{base | SetupSingleIssuer | SetupSubmitAll, base | SetupSubmitAll, base}
	} else {
		attempts = []uint32{base | SetupSingleIssuer | SetupDeferTaskrun | SetupTaskrunFlag | SetupSubmitAll,
			base | SetupCoopTaskrun | SetupTaskrunFlag | SetupSubmitAll, base}
	}

	var p Params
	var fd int
	var err error
	for _, fl := range attempts {
		p = Params{Flags: fl, CQEntries: o.CQEntries}
		fd, err = Setup(entries, &p)
		if err != unix.EINVAL {
			break
		}
	}
	if err != nil {
		return nil, explainSetupErr("io_uring_setup", err.(unix.Errno), Disabled())
	}

	r := &Ring{fd: fd, flags: p.Flags, features: p.Features}
	if err := r.mapRings(&p); err != nil {
		r.unmap()
		unix.Close(fd)
		return nil, err
	}
	r.probe()
	return r, nil
}

func (r *Ring) mapRings(p *Params) error {
	sqSize := int(p.SQOff.Array) + int(p.SQEntries)*4
	cqSize := int(p.CQOff.CQEs) + int(p.CQEntries)*int(unsafe.Sizeof(CQE{}))
	single := p.Features&FeatSingleMmap != 0
	if single && cqSize > sqSize {
		sqSize = cqSize
	}
	const prot = unix.PROT_READ | unix.PROT_WRITE
	const flags = unix.MAP_SHARED | unix.MAP_POPULATE
	var err error
	mmapErr := func(err error) error {
		errno, _ := err.(unix.Errno)
		return explainSetupErr("mmap", errno, -1)
	}
	r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, prot, flags)
	if err != nil {
		return mmapErr(err)
	}
	if single {
		r.cqMem = r.sqMem
	} else {
		r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, prot, flags)
		if err != nil {
			return mmapErr(err)
		}
	}
	r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.SQEntries)*int(unsafe.Sizeof(SQE{})), prot, flags)
	if err != nil {
		return mmapErr(err)
	}

	u32 := func(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead = u32(r.sqMem, p.SQOff.Head)
	r.sqTail = u32(r.sqMem, p.SQOff.Tail)
	r.sqFlags = u32(r.sqMem, p.SQOff.Flags)
	r.sqMask = *u32(r.sqMem, p.SQOff.RingMask)
	r.sqEntries = *u32(r.sqMem, p.SQOff.RingEntries)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), r.sqEntries)
	if p.Flags&SetupNoSQArray == 0 {
		// Identity mapping, written once: SQ slot i always holds SQE i.
		array := unsafe.Slice(u32(r.sqMem, p.SQOff.Array), r.sqEntries)
		for i := range array {
			array[i] = uint32(i)
		}
	}
	r.sqeTail = *r.sqTail
	r.sqeHead = r.sqeTail

	r.cqHead = u32(r.cqMem, p.CQOff.Head)
	r.cqTail = u32(r.cqMem, p.CQOff.Tail)
	r.cqMask = *u32(r.cqMem, p.CQOff.RingMask)
	r.cqEntries = *u32(r.cqMem, p.CQOff.RingEntries)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&r.cqMem[p.CQOff.CQEs])), r.cqEntries)
	return nil
}

func (r *Ring) unmap() {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && (r.sqMem == nil || &r.cqMem[0] != &r.sqMem[0]) {
		unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		unix.Munmap(r.sqMem)
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
	r.sqes, r.cqes = nil, nil
}

// Close releases the ring: provided buffer rings created by NewBufRing are
// unmapped, the rings are unmapped and the fd closed. The kernel drops the
// buffer rings when the fd closes; in-flight requests are cancelled. Close is idempotent. Memory the caller
// gave to the kernel (arenas) must outlive Close.
func (r *Ring) Close() error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	var err error
	if cerr := unix.Close(r.fd); cerr != nil {
		err = fmt.Errorf("uring: close ring fd: %w", cerr)
	}
	// The kernel holds its own page references for buffer rings (pinned),
	// so unmapping our view after the fd is closed is safe even though ring
	// teardown in the kernel is asynchronous.
	for _, br := range r.bufRings {
		br.free()
	}
	r.bufRings = nil
	r.unmap()
	r.fd = -1
	return err
}

// Features returns the IORING_FEAT_* bits the kernel reported.
func (r *Ring) Features() uint32 { return r.features }
