package stats

import (
	"os"
	"runtime"
	"strings"
)

// BootID identifies the machine this process runs on: the Linux kernel's
// boot id, which every container on one node shares (it is not namespaced)
// and no two boots share. Empty where there is none.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// BootCPUs is how many CPUs the machine lets this process use (its
// affinity mask), the most that processes sharing it can have between them.
func BootCPUs() int { return runtime.NumCPU() }
