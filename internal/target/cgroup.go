package target

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cgroupRoot is where the cgroup hierarchies are mounted, as systemd,
// Docker and Kubernetes mount them.
const cgroupRoot = "/sys/fs/cgroup"

// cgroup is one --target-cgroup: its directories and what it accounts.
// Under cgroup v2 it is one directory of the unified hierarchy; under v1
// the same path in each controller's hierarchy (cpuacct for its CPU,
// memory for its memory; any for its processes).
type cgroup struct {
	name   string // as given
	v2     bool
	procs  string // the directory whose tree lists its processes
	cpu    string // v2: cpu.stat's directory; v1: cpuacct's ("" when unaccounted)
	memory string // v2: memory.current's directory; v1: memory's ("" when unaccounted)
}

// openCgroup resolves path, an absolute directory of a hierarchy under
// root, or a cgroup path as /proc/PID/cgroup writes it
// ("/system.slice/nginx.service"). Its errors name the flag.
func openCgroup(root, path string) (*cgroup, error) {
	c := &cgroup{name: path}
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	c.v2 = err == nil
	rel := path
	if r, ok := strings.CutPrefix(filepath.Clean(path), root+"/"); ok {
		rel = r
		if !c.v2 { // v1: the first part names the controller's hierarchy
			if _, after, found := strings.Cut(r, "/"); found {
				rel = after
			} else {
				rel = ""
			}
		}
	}
	rel = strings.Trim(rel, "/")
	isDir := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.IsDir()
	}
	if c.v2 {
		dir := filepath.Join(root, rel)
		if !isDir(dir) {
			return nil, fmt.Errorf("--target-cgroup %s: no such cgroup: %s is not a directory (cgroup v2)", path, dir)
		}
		c.procs, c.cpu, c.memory = dir, dir, dir
		return c, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("--target-cgroup %s: no cgroup hierarchy at %s: %v", path, root, err)
	}
	for _, e := range ents {
		dir := filepath.Join(root, e.Name(), rel)
		if !isDir(dir) {
			continue
		}
		ctrls := strings.Split(e.Name(), ",")
		has := func(name string) bool {
			for _, x := range ctrls {
				if x == name {
					return true
				}
			}
			return false
		}
		switch {
		case has("cpuacct") && c.cpu == "":
			c.cpu = dir
		case has("memory") && c.memory == "":
			c.memory = dir
		}
		if c.procs == "" || has("memory") {
			c.procs = dir
		}
	}
	if c.procs == "" {
		return nil, fmt.Errorf("--target-cgroup %s: no such cgroup in any hierarchy under %s (cgroup v1)", path, root)
	}
	return c, nil
}

// members lists the processes of the cgroup and of the cgroups beneath.
func (c *cgroup) members() map[int]bool {
	out := map[int]bool{}
	_ = filepath.WalkDir(c.procs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for f := range strings.FieldsSeq(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out[pid] = true
			}
		}
		return nil
	})
	return out
}

// cpuUsage is the CPU time its processes have used, dead ones included:
// cpu.stat's usage_usec (v2), cpuacct.usage (v1). ok is false when it is
// not accounted.
func (c *cgroup) cpuUsage() (time.Duration, bool) {
	if c.cpu == "" {
		return 0, false
	}
	if c.v2 {
		f, err := os.Open(filepath.Join(c.cpu, "cpu.stat"))
		if err != nil {
			return 0, false
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("usage_usec ")); ok {
				us, err := strconv.ParseInt(string(v), 10, 64)
				return time.Duration(us) * time.Microsecond, err == nil
			}
		}
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(c.cpu, "cpuacct.usage"))
	if err != nil {
		return 0, false
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return time.Duration(ns), err == nil
}

// memoryUsage is the memory the cgroup is charged (its processes' and
// their page cache): memory.current (v2), memory.usage_in_bytes (v1).
func (c *cgroup) memoryUsage() (int64, bool) {
	if c.memory == "" {
		return 0, false
	}
	file := "memory.usage_in_bytes"
	if c.v2 {
		file = "memory.current"
	}
	b, err := os.ReadFile(filepath.Join(c.memory, file))
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}
