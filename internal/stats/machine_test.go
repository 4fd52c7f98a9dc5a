package stats

import (
	"runtime"
	"testing"
	"time"
)

// The machine's CPUs are read once a second without garbage, and a busy
// loop of this process shows as its own CPU, not as others'.
func TestMachineReader(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	var r MachineReader
	defer r.Close()
	before := r.Read()
	if !before.ok || before.cpus < 1 {
		t.Fatalf("no reading: %+v", before)
	}
	if n := testing.AllocsPerRun(20, func() { r.Read() }); n > 0 {
		t.Errorf("a reading allocates %v times", n)
	}
	u0 := ReadUsage()
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	after := r.Read()
	use := after.Use(before, ReadUsage().Sub(u0).CPU(), 300*time.Millisecond)
	if !use.Known || use.CPUs != before.cpus {
		t.Fatalf("use %+v", use)
	}
	if use.Others < 0 || use.Others > 1 || use.Steal < 0 || use.Steal > 1 {
		t.Errorf("shares out of range: %+v", use)
	}
}
