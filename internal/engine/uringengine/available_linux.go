//go:build linux

package uringengine

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/uring"
)

var (
	availOnce sync.Once
	availErr  error
)

// Available reports whether the io_uring engine can run on this machine: it
// sets up a ring once (per process) and checks every operation and feature
// the engine uses. The error, an *UnavailableError wrapping
// uring.ErrUnavailable, names the cause and the fix in one line.
func Available() error {
	availOnce.Do(func() { availErr = probe() })
	return availErr
}

// requiredOps are the operations the engine submits.
var requiredOps = []struct {
	op    uint8
	name  string
	since string
}{
	{uring.OpSend, "SEND", "5.6"},
	{uring.OpRecvmsg, "RECVMSG", "5.3"},
	{uring.OpConnect, "CONNECT", "5.5"},
	{uring.OpRead, "READ", "5.6"}, // the eventfd of redirects to other origins
	{uring.OpAsyncCancel, "ASYNC_CANCEL", "5.5"},
	{uring.OpClose, "CLOSE", "5.6"},
	{uring.OpShutdown, "SHUTDOWN", "5.11"},
}

const upgrade = "upgrade to Linux 6.0 or newer"

// probe runs the checks on one locked thread (the ring is SINGLE_ISSUER).
func probe() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := uring.New(8, nil)
	if err != nil {
		return explainSetup(err, uring.Disabled())
	}
	defer r.Close()
	if !r.Probed() {
		return &UnavailableError{Cause: "the kernel cannot list its io_uring operations (IORING_REGISTER_PROBE needs Linux 5.6)", Fix: upgrade}
	}
	for _, o := range requiredOps {
		if !r.Supports(o.op) {
			return &UnavailableError{Cause: fmt.Sprintf("the kernel lacks IORING_OP_%s (Linux %s)", o.name, o.since), Fix: upgrade}
		}
	}
	if r.Features()&uring.FeatExtArg == 0 {
		return &UnavailableError{Cause: "the kernel lacks bounded io_uring waits (IORING_FEAT_EXT_ARG, Linux 5.11)", Fix: upgrade}
	}
	if r.Features()&uring.FeatNoDrop == 0 {
		return &UnavailableError{Cause: "the kernel may drop io_uring completions (no IORING_FEAT_NODROP, Linux 5.5)", Fix: upgrade}
	}
	br, err := r.NewBufRing(0, 8, 64)
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return &UnavailableError{Cause: "the kernel lacks provided buffer rings (Linux 5.19)", Fix: upgrade, Err: err}
		}
		if errors.Is(err, unix.ENOMEM) {
			return &UnavailableError{Cause: "cannot register an io_uring buffer ring: out of locked memory (RLIMIT_MEMLOCK)",
				Fix: "raise it with ulimit -l unlimited", Err: err}
		}
		return &UnavailableError{Cause: "cannot register an io_uring buffer ring: " + err.Error(), Fix: upgrade, Err: err}
	}
	if err := probeMultishot(r, br); err != nil {
		return err
	}
	return nil
}

// probeMultishot checks that a multishot recvmsg works (Linux 6.0): it arms
// one on a socket pair, writes a byte and expects a completion that says the
// receive stays armed and carries the byte.
func probeMultishot(r *uring.Ring, br *uring.BufRing) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return &UnavailableError{Cause: "socketpair for the io_uring probe: " + err.Error(), Fix: "check the file descriptor limit (ulimit -n)", Err: err}
	}
	defer unix.Close(fds[1])
	defer unix.Close(fds[0])
	var msg unix.Msghdr // read by the kernel when the request is issued, within Submit below
	sqe := r.GetSQE()
	sqe.PrepRecvmsgMultishot(int32(fds[0]), &msg, br.Group())
	sqe.SetUserData(1)
	if _, err := unix.Write(fds[1], []byte{'x'}); err != nil {
		return &UnavailableError{Cause: "write for the io_uring probe: " + err.Error(), Fix: upgrade, Err: err}
	}
	if _, err := r.SubmitAndWaitTimeout(1, time.Second); err != nil {
		return &UnavailableError{Cause: "io_uring multishot receive did not complete: " + err.Error(), Fix: upgrade, Err: err}
	}
	var cqes [4]uring.CQE
	n := r.PeekCQEs(cqes[:])
	ok := n > 0 && cqes[0].More() && cqes[0].HasBuffer() && cqes[0].Res > 0
	if ok {
		_, payload, split := uring.Recvmsg(br.Buf(cqes[0].BufferID())[:cqes[0].Res], &msg)
		ok = split && len(payload) == 1
	}
	if !ok {
		res := int32(0)
		if n > 0 {
			res = cqes[0].Res
		}
		return &UnavailableError{Cause: fmt.Sprintf("the kernel lacks multishot receives (Linux 6.0; got result %d)", res), Fix: upgrade}
	}
	// Disarm it before the descriptors close.
	sqe = r.GetSQE()
	sqe.PrepCancel(1, 0)
	sqe.SetUserData(2)
	deadline := time.Now().Add(time.Second)
	for got := 0; got < 2 && time.Now().Before(deadline); {
		if _, err := r.SubmitAndWaitTimeout(1, time.Until(deadline)); err != nil {
			break
		}
		got += r.PeekCQEs(cqes[:])
	}
	return nil
}

// explainSetup turns a failed ring setup into the one-line cause and fix.
// disabled is the kernel.io_uring_disabled sysctl (-1 if unknown).
func explainSetup(err error, disabled int) *UnavailableError {
	var errno unix.Errno
	var se *uring.SetupError
	if errors.As(err, &se) {
		errno = se.Errno
	} else {
		errors.As(err, &errno)
	}
	switch errno {
	case unix.EPERM, unix.EACCES:
		switch disabled {
		case 2:
			return &UnavailableError{Cause: "io_uring is disabled by sysctl kernel.io_uring_disabled=2",
				Fix: "enable it with sysctl -w kernel.io_uring_disabled=0", Err: err}
		case 1:
			return &UnavailableError{Cause: "io_uring is restricted by sysctl kernel.io_uring_disabled=1 to root and kernel.io_uring_group",
				Fix: "run as root, join kernel.io_uring_group, or sysctl -w kernel.io_uring_disabled=0", Err: err}
		}
		return &UnavailableError{Cause: "io_uring_setup is blocked by a seccomp filter (Docker's default profile blocks it)",
			Fix: "run the container with --security-opt seccomp=unconfined or a profile that allows io_uring_setup, io_uring_enter and io_uring_register", Err: err}
	case unix.ENOSYS:
		return &UnavailableError{Cause: "this kernel has no io_uring (older than 5.1, built without CONFIG_IO_URING, or a sandbox such as gVisor)",
			Fix: upgrade, Err: err}
	case unix.ENOMEM:
		return &UnavailableError{Cause: "cannot allocate the ring: kernels before 5.12 charge io_uring rings to RLIMIT_MEMLOCK",
			Fix: "raise it with ulimit -l unlimited", Err: err}
	case unix.EMFILE, unix.ENFILE:
		return &UnavailableError{Cause: "out of file descriptors for the ring", Fix: "raise ulimit -n", Err: err}
	}
	return &UnavailableError{Cause: "io_uring_setup failed: " + err.Error(), Fix: upgrade, Err: err}
}
