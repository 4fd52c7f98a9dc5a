//go:build !linux

package uring

import (
	"errors"
	"fmt"
)

// ErrUnavailable is wrapped by every error meaning "io_uring cannot be used
// here"; on this platform that is always the case.
var ErrUnavailable = errors.New("io_uring unavailable")

// Options mirrors the Linux options so callers compile everywhere.
type Options struct {
	CQEntries uint32
	SQPoll    bool
}

// Ring is a placeholder; New never returns one on this platform.
type Ring struct{}

// New always fails on this platform; the error wraps ErrUnavailable.
func New(entries uint32, opts *Options) (*Ring, error) {
	return nil, fmt.Errorf("uring: io_uring needs Linux (%w): use --engine net", ErrUnavailable)
}

// Close does nothing.
func (r *Ring) Close() error { return nil }
