package stats

import (
	"os"
	"runtime"
	"strings"
)

// Machine identifies the machine this process runs on: the Linux kernel's
// boot id, which every container on one node shares (it is not namespaced)
// and no two boots share. Empty where there is none.
func Machine() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// MachineCPUs is how many CPUs the machine lets this process use (its
// affinity mask), the most that processes sharing it can have between them.
func MachineCPUs() int { return runtime.NumCPU() }
