//go:build !linux

package run

import "github.com/hail-loadgen/hail/internal/stats"

// cpuOverlap is the share of pid's CPUs that hail may run on too: unknown
// here, so all of them.
func cpuOverlap(int) float64 { return 1 }

// hailCPUs is how many CPUs hail may run on.
func hailCPUs() int { return stats.Cores() }
