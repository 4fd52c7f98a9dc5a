package stats

import (
	"syscall"
	"time"
)

// Usage is the generator process's own resource use, from getrusage(2).
type Usage struct {
	User   time.Duration // CPU time in user mode
	System time.Duration // CPU time in the kernel
	// Voluntary and Involuntary count context switches.
	Voluntary, Involuntary int64
	// MaxRSS is the peak resident set size in bytes.
	MaxRSS int64
}

// ReadUsage returns the process's resource use so far.
func ReadUsage() Usage {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return Usage{}
	}
	return Usage{
		User:        time.Duration(ru.Utime.Nano()),
		System:      time.Duration(ru.Stime.Nano()),
		Voluntary:   int64(ru.Nvcsw),
		Involuntary: int64(ru.Nivcsw),
		MaxRSS:      int64(ru.Maxrss) * 1024,
	}
}

// Sub returns the use between o and u (MaxRSS is u's).
func (u Usage) Sub(o Usage) Usage {
	return Usage{User: u.User - o.User, System: u.System - o.System,
		Voluntary: u.Voluntary - o.Voluntary, Involuntary: u.Involuntary - o.Involuntary, MaxRSS: u.MaxRSS}
}

// CPU is user + system time.
func (u Usage) CPU() time.Duration { return u.User + u.System }
