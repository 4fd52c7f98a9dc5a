//go:build linux

package run

import (
	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/stats"
)

// cpuOverlap is the share of pid's allowed CPUs that hail may run on too:
// 1 when both may use every CPU, 0 when they are pinned apart (taskset).
func cpuOverlap(pid int) float64 {
	var mine, its unix.CPUSet
	if unix.SchedGetaffinity(0, &mine) != nil || unix.SchedGetaffinity(pid, &its) != nil || its.Count() == 0 {
		return 1
	}
	both := 0
	for i := range 1024 {
		if mine.IsSet(i) && its.IsSet(i) {
			both++
		}
	}
	return float64(both) / float64(its.Count())
}

// hailCPUs is how many CPUs hail may run on.
func hailCPUs() int {
	var mine unix.CPUSet
	if unix.SchedGetaffinity(0, &mine) != nil || mine.Count() == 0 {
		return stats.Cores()
	}
	return mine.Count()
}
