package target

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// The helper processes of the tests: this test binary run again, as a
// master that forks workers (HAIL_TARGET_HELPER=master), as a worker
// that burns a fixed amount of CPU and ends (=worker), or as one that
// burns it once told to and then waits to be killed (=spinner).
func TestMain(m *testing.M) {
	switch os.Getenv("HAIL_TARGET_HELPER") {
	case "master":
		master()
		return
	case "worker":
		burn(workerCPU)
		return
	case "spinner":
		spinner()
		return
	}
	os.Exit(m.Run())
}

const (
	workers   = 8                     // the master runs this many, two at a time
	workerCPU = 80 * time.Millisecond // each burns this much CPU (8 clock ticks: /proc counts in 10 ms)
	// A spinner burns this much: /proc may show one tick less of each, and
	// TestCountOnWeighsEachProcess waits for 90% of it.
	spinnerCPU = 150 * time.Millisecond
)

// master waits for the file $HAIL_GO, runs the workers two at a time
// (reaping each), writes $HAIL_DONE, and waits to be killed.
func master() {
	for {
		if _, err := os.Stat(os.Getenv("HAIL_GO")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	self, _ := os.Executable()
	running := 0
	done := make(chan struct{}, workers)
	for i := 0; i < workers; i++ {
		if running == 2 {
			<-done
			running--
		}
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), "HAIL_TARGET_HELPER=worker")
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		running++
		go func() { cmd.Wait(); done <- struct{}{} }() // Wait reaps it
	}
	for ; running > 0; running-- {
		<-done
	}
	os.WriteFile(os.Getenv("HAIL_DONE"), nil, 0o644)
	time.Sleep(time.Hour) // until killed (select {} would end it: all goroutines asleep)
}

// burn spins until the process has used d of CPU.
func burn(d time.Duration) {
	var ru syscall.Rusage
	x := 0
	for {
		for i := 0; i < 100000; i++ {
			x += i
		}
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= d {
			break
		}
	}
	_ = x
}

// --target-cmd follows a server whose workers come and go: each is seen
// while it lives and its CPU is counted (the last moments of each through
// its master's cutime once reaped); the master alone would show almost
// none of it.
func TestTargetCmdFollowsWorkers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A copy under a name of its own: the name --target-cmd looks for.
	bin := filepath.Join(dir, "hailtgtmaster")
	if err := os.Link(self, bin); err != nil {
		b, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goFile, doneFile := filepath.Join(dir, "go"), filepath.Join(dir, "done")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "HAIL_TARGET_HELPER=master", "HAIL_GO="+goFile, "HAIL_DONE="+doneFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var s *Sampler
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if s, err = NewSet(Spec{Cmds: []string{"hailtgtmaster"}}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the master never showed: %v", err)
		}
	}
	master, err := New(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(goFile, nil, 0o644)
	var sec stats.Second
	maxAtOnce := 0
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) { // a worker may live and end between two samples
		s.Fill(&sec)
		maxAtOnce = max(maxAtOnce, sec.TargetProcs)
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
	if sum.CPU.Seconds() < 0.9*want || sum.CPU.Seconds() > want+1 {
		t.Errorf("CPU %.3f s, want about %.2f s (%d workers × %v, and the master's own)", sum.CPU.Seconds(), want, workers, workerCPU)
	}
	if sum.ProcessesSeen < 3 || maxAtOnce < 2 || sum.PeakProcesses != maxAtOnce {
		t.Errorf("%d processes seen, at most %d at once (%d in the summary): the workers were not followed", sum.ProcessesSeen, maxAtOnce, sum.PeakProcesses)
	}
	exited := 0
	for _, p := range sum.Processes {
		if p.Exited {
			exited++
		}
	}
	if exited == 0 || sum.Exited {
		t.Errorf("no worker seen ending (%d processes listed), or the target called gone: %v", len(sum.Processes), sum.Exited)
	}
	// --target-pid follows the master's children too.
	master.Fill(&sec)
	if m := master.Summary(time.Second); m.CPU.Seconds() < 0.9*want {
		t.Errorf("--target-pid %d: %.3f s of CPU, want its workers' %.2f s too", cmd.Process.Pid, m.CPU.Seconds(), want)
	}
	t.Logf("%.3f s of CPU over %d processes (at most %d at once); %d workers × %v", sum.CPU.Seconds(), sum.ProcessesSeen, maxAtOnce, workers, workerCPU)
}

// spinner waits for the file $HAIL_GO, burns spinnerCPU, and waits to be
// killed.
func spinner() {
	for {
		if _, err := os.Stat(os.Getenv("HAIL_GO")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	burn(spinnerCPU)
	time.Sleep(time.Hour)
}

// CountOn counts apart the part of the target's CPU spent on some CPUs
// (hail's), process by process: of two processes that burn as much, one
// allowed on those CPUs only (overlap 1) and one never there (0), the
// part is exactly the first one's CPU, and the target's CPU both's.
func TestCountOnWeighsEachProcess(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(t.TempDir(), "go")
	var pids []int
	for range 2 {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), "HAIL_TARGET_HELPER=spinner", "HAIL_GO="+goFile)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	s, err := NewSet(Spec{PIDs: pids})
	if err != nil {
		t.Fatal(err)
	}
	s.CountOn(func(pid int) float64 {
		if pid == pids[0] {
			return 1
		}
		return 0
	})
	os.WriteFile(goFile, nil, 0o644)
	var sec stats.Second
	cpu := map[int]float64{}
	for deadline := time.Now().Add(30 * time.Second); cpu[pids[0]] < 0.9*spinnerCPU.Seconds() || cpu[pids[1]] < 0.9*spinnerCPU.Seconds(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the spinners used %v s of CPU, want %v each", cpu, spinnerCPU.Seconds())
		}
		s.Fill(&sec)
		for _, p := range s.Summary(time.Second).Processes {
			cpu[p.PID] = p.CPU.Seconds()
		}
	}
	sum := s.Summary(time.Second)
	_, shared := s.Shared()
	if d := shared.Seconds() - cpu[pids[0]]; d < -0.001 || d > 0.001 || sum.CPU.Seconds() < shared.Seconds()+0.9*spinnerCPU.Seconds() {
		t.Errorf("on the CPUs counted apart: %.4f s; want the first spinner's %.4f s of the target's %.4f s", shared.Seconds(), cpu[pids[0]], sum.CPU.Seconds())
	}
}
