//go:build !linux

package uringengine

import (
	"github.com/hail-loadgen/hail/internal/engine"
)

// Engine is the io_uring engine; on this platform it cannot run.
type Engine struct {
	// Workers is the number of event-loop threads (0: GOMAXPROCS).
	Workers int
	// SQPoll asks for a kernel thread that polls each submission ring.
	SQPoll bool
}

var errNeedsLinux = &UnavailableError{Cause: "io_uring needs Linux", Fix: "run hail on Linux 6.0 or newer"}

// Available reports why io_uring cannot be used: it needs Linux.
func Available() error { return errNeedsLinux }

// Name implements engine.Engine.
func (*Engine) Name() string { return "uring" }

// Run implements engine.Engine; it always fails on this platform.
func (*Engine) Run(*engine.Job) error { return errNeedsLinux }
