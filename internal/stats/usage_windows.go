package stats

import (
	"syscall"
	"time"
)

// ReadUsage returns the process's CPU times so far (Windows has no
// context-switch counts or peak RSS in GetProcessTimes).
func ReadUsage() Usage {
	var creation, exit, kernel, user syscall.Filetime
	h, err := syscall.GetCurrentProcess()
	if err != nil || syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user) != nil {
		return Usage{}
	}
	ticks := func(f syscall.Filetime) time.Duration { // 100 ns units
		return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
	}
	return Usage{User: ticks(user), System: ticks(kernel)}
}
