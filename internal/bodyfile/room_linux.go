package bodyfile

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// memoryLimits are the limits on what this process may still allocate:
// the machine's MemAvailable, what ulimit -v (RLIMIT_AS) leaves above the
// process's current virtual size, and what its cgroup's limit (v2
// memory.max, v1 memory.limit_in_bytes) leaves above its usage. Those that
// cannot be read (or are unlimited) are left out.
func memoryLimits() []memLimit {
	var out []memLimit
	if v, ok := meminfo("/proc/meminfo", "MemAvailable:"); ok {
		out = append(out, memLimit{name: "MemAvailable (free memory)", room: v})
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur < 1<<62 {
		if vm, ok := meminfo("/proc/self/status", "VmSize:"); ok {
			out = append(out, memLimit{name: "ulimit -v (" + FormatSize(int64(rl.Cur)) + ")", room: int64(rl.Cur) - vm, virtual: true})
		}
	}
	if room, name, ok := cgroupRoom("/proc/self/cgroup", "/sys/fs/cgroup"); ok {
		out = append(out, memLimit{name: name, room: room})
	}
	return out
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

// cgroupRoom is what this process's memory cgroup leaves — memory.max −
// memory.current (v2), or memory.limit_in_bytes − memory.usage_in_bytes
// (v1) — at the tightest of its cgroup and the cgroup's ancestors (their
// limits hold for it too), and that limit's name with its value. self is
// /proc/self/cgroup, root where cgroup file systems are mounted
// (/sys/fs/cgroup).
func cgroupRoom(self, root string) (int64, string, bool) {
	b, err := os.ReadFile(self)
	if err != nil {
		return 0, "", false
	}
	best, name, found := int64(0), "", false
	tightest := func(dir, limit, used, what string) {
		for {
			if l, room, ok := limitLeft(dir, limit, used); ok && (!found || room < best) {
				best, name, found = room, "the cgroup's "+limit+" ("+FormatSize(l)+")", true
			}
			if dir == what || !strings.HasPrefix(dir, what) {
				return
			}
			dir = filepath.Dir(dir)
		}
	}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			tightest(filepath.Join(root, parts[2]), "memory.max", "memory.current", root)
		case parts[1] == "memory": // v1
			tightest(filepath.Join(root, "memory", parts[2]), "memory.limit_in_bytes", "memory.usage_in_bytes", filepath.Join(root, "memory"))
		}
	}
	return best, name, found
}

// limitLeft is the number in dir/limit and it minus the one in dir/used;
// false when either is missing or the limit is "max" (or v1's
// "unlimited", a number near 2⁶³).
func limitLeft(dir, limit, used string) (int64, int64, bool) {
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
	if !ok1 || !ok2 || l >= 1<<62 {
		return 0, 0, false
	}
	return l, l - u, true
}
