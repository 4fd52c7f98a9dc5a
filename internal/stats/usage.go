package stats

import "time"

// Usage is the generator process's own resource use, from getrusage(2)
// (GetProcessTimes on Windows: CPU times only).
type Usage struct {
	User   time.Duration // CPU time in user mode
	System time.Duration // CPU time in the kernel
	// Voluntary and Involuntary count context switches.
	Voluntary, Involuntary int64
	// MaxRSS is the peak resident set size in bytes.
	MaxRSS int64
}

// Sub returns the use between o and u (MaxRSS is u's).
func (u Usage) Sub(o Usage) Usage {
	return Usage{User: u.User - o.User, System: u.System - o.System,
		Voluntary: u.Voluntary - o.Voluntary, Involuntary: u.Involuntary - o.Involuntary, MaxRSS: u.MaxRSS}
}

// CPU is user + system time.
func (u Usage) CPU() time.Duration { return u.User + u.System }
