//go:build unix

package stats

import (
	"syscall"
	"time"
)

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
