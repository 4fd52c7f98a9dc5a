package target

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// cgroup v2, on a hierarchy of the test's making: the processes of the
// cgroup and of those beneath it, its CPU counter (which counts processes
// already gone) and its memory.
func TestCgroupV2(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory\n"), 0o644)
	app := filepath.Join(root, "system.slice", "app.service")
	os.MkdirAll(filepath.Join(app, "worker"), 0o755)
	os.WriteFile(filepath.Join(app, "cgroup.procs"), []byte(""), 0o644)
	os.WriteFile(filepath.Join(app, "worker", "cgroup.procs"), fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644)
	usage := func(us int) {
		os.WriteFile(filepath.Join(app, "cpu.stat"), fmt.Appendf(nil, "usage_usec %d\nuser_usec 1\nsystem_usec 1\n", us), 0o644)
	}
	usage(1_000_000)
	os.WriteFile(filepath.Join(app, "memory.current"), []byte("123456789\n"), 0o644)
	for _, path := range []string{"/system.slice/app.service", app} {
		s, err := newSetAt("/proc", root, Spec{Cgroups: []string{path}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		usage(1_000_000 + 250_000)
		var sec stats.Second
		s.Fill(&sec)
		usage(1_000_000)
		sum := s.Summary(time.Second)
		if sum.CPU.Seconds() != 0.25 || sec.TargetProcs != 1 || sec.TargetRSS < 1<<20 || sum.PeakCgroupMemoryBytes != 123456789 || sum.PID != os.Getpid() {
			t.Errorf("%s: CPU %v s, %d processes, RSS %d, cgroup memory %d, pid %d", path, sum.CPU.Seconds(), sec.TargetProcs, sec.TargetRSS, sum.PeakCgroupMemoryBytes, sum.PID)
		}
		if !strings.Contains(sum.Follows, "(v2)") {
			t.Errorf("follows %q", sum.Follows)
		}
	}
	if _, err := newSetAt("/proc", root, Spec{Cgroups: []string{"/nope"}}, 0); err == nil || !strings.Contains(err.Error(), "--target-cgroup /nope: no such cgroup") {
		t.Errorf("missing cgroup: %v", err)
	}
}

// cgroup v1, as on this host, for real (as root): a cgroup made beneath
// this test's own in the memory hierarchy (and the cpuacct one, at the
// same path, when the test's cgroups allow it) holds a master whose
// workers come and go; its processes are found by the cgroup, their memory
// and CPU counted.
func TestCgroupV1(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a cgroup")
	}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		t.Skip("this host has cgroup v2")
	}
	own := map[string]string{}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip(err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 {
			for ctrl := range strings.SplitSeq(f[1], ",") {
				own[ctrl] = f[2]
			}
		}
	}
	name := fmt.Sprintf("hail-target-test-%d", os.Getpid())
	var made []string
	t.Cleanup(func() {
		for _, d := range made {
			os.Remove(d)
		}
	})
	parent, ok := own["memory"]
	if !ok {
		t.Skip("no memory hierarchy")
	}
	for _, ctrl := range []string{"memory", "cpuacct"} {
		if own[ctrl] != parent {
			continue // a path of its own there: the cgroup is not made where this test's is not
		}
		dir := filepath.Join(cgroupRoot, ctrl, parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("cannot make a cgroup: %v", err)
		}
		made = append(made, dir)
	}
	dir := t.TempDir()
	self, _ := os.Executable()
	goFile, doneFile := filepath.Join(dir, "go"), filepath.Join(dir, "done")
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "HAIL_TARGET_HELPER=master", "HAIL_GO="+goFile, "HAIL_DONE="+doneFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for _, d := range made {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), fmt.Appendf(nil, "%d", cmd.Process.Pid), 0o644); err != nil {
			t.Skipf("cannot move a process into %s: %v", d, err)
		}
	}
	// By the memory hierarchy's directory: a cpuacct one at the same path
	// is found beside it.
	s, err := NewSet(Spec{Cgroups: []string{made[0]}})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(goFile, nil, 0o644)
	var sec stats.Second
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		s.Fill(&sec)
		if _, err := os.Stat(doneFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the workers never finished")
		}
	}
	s.Fill(&sec)
	sum := s.Summary(time.Second)
	want := (workers * workerCPU).Seconds()
	if sum.CPU.Seconds() < 0.95*want || sum.CPU.Seconds() > want+1 || sum.PeakCgroupMemoryBytes == 0 || !strings.Contains(sum.Follows, "(v1)") {
		t.Errorf("CPU %.3f s (want about %.2f), cgroup memory %d, follows %q", sum.CPU.Seconds(), want, sum.PeakCgroupMemoryBytes, sum.Follows)
	}
	t.Logf("cgroup v1: %.3f s of CPU, %d processes seen, memory peak %d", sum.CPU.Seconds(), sum.ProcessesSeen, sum.PeakCgroupMemoryBytes)
	// Cleanup runs last-in first-out: the master is killed before its
	// cgroups are removed.
}

// cgroup v1 on a hierarchy of the test's making: the same path in each
// controller's hierarchy, cpuacct's counter (under a joint cpu,cpuacct
// mount) and memory's usage.
func TestCgroupV1Fake(t *testing.T) {
	root := t.TempDir()
	for _, ctrl := range []string{"cpu,cpuacct", "memory", "pids"} {
		os.MkdirAll(filepath.Join(root, ctrl, "docker", "abc"), 0o755)
		os.WriteFile(filepath.Join(root, ctrl, "docker", "abc", "cgroup.procs"), fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644)
	}
	acct := filepath.Join(root, "cpu,cpuacct", "docker", "abc", "cpuacct.usage")
	os.WriteFile(acct, []byte("5000000000\n"), 0o644)
	os.WriteFile(filepath.Join(root, "memory", "docker", "abc", "memory.usage_in_bytes"), []byte("4096\n"), 0o644)
	for _, path := range []string{"/docker/abc", filepath.Join(root, "pids", "docker", "abc")} {
		s, err := newSetAt("/proc", root, Spec{Cgroups: []string{path}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(acct, []byte("5500000000\n"), 0o644)
		var sec stats.Second
		s.Fill(&sec)
		os.WriteFile(acct, []byte("5000000000\n"), 0o644)
		sum := s.Summary(time.Second)
		if sum.CPU.Seconds() != 0.5 || sum.PeakCgroupMemoryBytes != 4096 || sec.TargetProcs != 1 || !strings.Contains(sum.Follows, "(v1)") {
			t.Errorf("%s: CPU %v s, memory %d, %d processes, follows %q", path, sum.CPU.Seconds(), sum.PeakCgroupMemoryBytes, sec.TargetProcs, sum.Follows)
		}
	}
}
