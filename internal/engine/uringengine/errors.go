package uringengine

import "github.com/hail-loadgen/hail/internal/uring"

// UnavailableError says why the io_uring engine cannot run here and how to
// fix it. It wraps uring.ErrUnavailable.
type UnavailableError struct {
	// Cause is what is missing or blocked, e.g. "io_uring_setup is blocked
	// by a seccomp filter (Docker's default profile blocks it)".
	Cause string
	// Fix is how to make io_uring usable, e.g. "run the container with
	// --security-opt seccomp=unconfined".
	Fix string
	// Err is the underlying error, if any.
	Err error
}

func (e *UnavailableError) Error() string {
	return "io_uring unavailable: " + e.Cause + " (" + e.Fix + ")"
}

// Unwrap exposes uring.ErrUnavailable and the underlying error.
func (e *UnavailableError) Unwrap() []error {
	if e.Err == nil {
		return []error{uring.ErrUnavailable}
	}
	return []error{uring.ErrUnavailable, e.Err}
}
