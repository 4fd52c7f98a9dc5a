package bodyfile

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// memoryRoom is how many more bytes this process may allocate, the least
// of: the machine's MemAvailable, what ulimit -v (RLIMIT_AS) leaves above the
// process's current virtual size, and what its cgroup v2 memory.max leaves
// above memory.current. known is false when none of them could be read.
func memoryRoom() (room int64, known bool) {
	consider := func(v int64, ok bool) {
		if ok && (!known || v < room) {
			room, known = max(v, 0), true
		}
	}
	consider(meminfo("/proc/meminfo", "MemAvailable:"))
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur < 1<<62 {
		if vm, ok := meminfo("/proc/self/status", "VmSize:"); ok {
			consider(int64(rl.Cur)-vm, true)
		}
	}
	consider(cgroupRoom())
	return room, known
}

// meminfo reads a "Key: N kB" line of a /proc file, in bytes.
func meminfo(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(key))
		if !ok {
			continue
		}
		fields := strings.Fields(string(rest))
		if len(fields) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n <<= 10
		}
		return n, true
	}
	return 0, false
}

// cgroupRoom is what this process's memory cgroup leaves: memory.max −
// memory.current (v2), or memory.limit_in_bytes − memory.usage_in_bytes (v1).
func cgroupRoom() (int64, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			if room, ok := limitLeft("/sys/fs/cgroup"+parts[2], "memory.max", "memory.current"); ok {
				return room, true
			}
		}
		if parts[1] == "memory" {
			return limitLeft("/sys/fs/cgroup/memory"+parts[2], "memory.limit_in_bytes", "memory.usage_in_bytes")
		}
	}
	return 0, false
}

// limitLeft is the number in dir/limit minus the one in dir/used; false when
// either is missing or the limit is "max".
func limitLeft(dir, limit, used string) (int64, bool) {
	read := func(name string) (int64, bool) {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n, err == nil
	}
	l, ok1 := read(limit)
	u, ok2 := read(used)
	return l - u, ok1 && ok2
}
