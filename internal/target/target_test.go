package target

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

func TestParse(t *testing.T) {
	stat := []byte("1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 4 0 100 1000 300\n")
	cpu, err := parseStat(stat)
	if err != nil || cpu != 3*time.Second {
		t.Errorf("cpu %v, %v; want 3s", cpu, err)
	}
	if rss := parseRSS([]byte("Name:\tx\nVmPeak:\t 9 kB\nVmRSS:\t    2048 kB\n")); rss != 2048*1024 {
		t.Errorf("rss %d", rss)
	}
}

// A fake /proc: the sampler follows the process's CPU and memory and
// summarises them.
func TestSamplerFake(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "42")
	os.MkdirAll(p, 0o755)
	write := func(ticks int, kb int) {
		os.WriteFile(filepath.Join(p, "stat"), []byte("42 (srv) S 1 1 1 0 -1 0 0 0 0 0 "+itoa(ticks)+" 0 0 0 20 0 1 0 1 1 1\n"), 0o644)
		os.WriteFile(filepath.Join(p, "status"), []byte("Name:\tsrv\nVmRSS:\t"+itoa(kb)+" kB\n"), 0o644)
	}
	write(100, 1000)
	os.WriteFile(filepath.Join(p, "comm"), []byte("srv\n"), 0o644)
	s, err := newAt(dir, 42)
	if err != nil {
		t.Fatal(err)
	}
	var sec stats.Second
	write(150, 3000)
	s.Fill(&sec)
	if sec.TargetRSS != 3000*1024 || sec.TargetCPU <= 0 {
		t.Errorf("second: %+v", sec)
	}
	write(200, 2000)
	s.Fill(&sec)
	sum := s.Summary(2 * time.Second)
	if sum.Command != "srv" || sum.PeakRSSBytes != 3000*1024 || sum.MeanRSSBytes != 2500*1024 || sum.CPUSeconds != 1 || sum.MeanCPU != 0.5 || sum.Samples != 2 {
		t.Errorf("summary %+v", sum)
	}
	if _, err := newAt(dir, 43); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("missing pid: %v", err)
	}
}

// The real /proc: this test process itself.
func TestSamplerSelf(t *testing.T) {
	s, err := New(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var sec stats.Second
	s.Fill(&sec)
	if sec.TargetRSS < 1<<20 || s.Summary(time.Second).Command == "" {
		t.Errorf("rss %d", sec.TargetRSS)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
