// Package target samples a local process's resident memory and CPU time from
// /proc (--target-pid), once per second of the run, so a report can say how
// the target's memory and CPU moved under load without any other tool.
package target

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/stats"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// Sample is one reading of the process.
type Sample struct {
	RSS int64         // resident set size, bytes
	CPU time.Duration // user + system CPU time since the process started
}

// Sampler reads one process. Its methods are safe for concurrent use.
type Sampler struct {
	pid  int
	proc string // /proc
	cmd  string

	mu      sync.Mutex
	last    Sample
	lastAt  time.Time
	first   Sample
	n       int
	rssSum  int64
	peakRSS int64
	endRSS  int64
	peakCPU float64
	exited  bool
	cpuEnd  time.Duration
}

// New checks that pid exists and takes a first reading.
func New(pid int) (*Sampler, error) { return newAt("/proc", pid) }

func newAt(proc string, pid int) (*Sampler, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("--target-pid %d: give the process id of the target (e.g. $(pgrep -n nginx))", pid)
	}
	s := &Sampler{pid: pid, proc: proc}
	first, err := s.read()
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("--target-pid %d: no such process", pid)
		}
		return nil, fmt.Errorf("--target-pid %d: %v", pid, err)
	}
	if b, err := os.ReadFile(fmt.Sprintf("%s/%d/comm", proc, pid)); err == nil {
		s.cmd = strings.TrimSpace(string(b))
	}
	s.first, s.last, s.lastAt, s.cpuEnd = first, first, time.Now(), first.CPU
	return s, nil
}

// read returns the process's RSS and CPU time now.
func (s *Sampler) read() (Sample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", s.proc, s.pid))
	if err != nil {
		return Sample{}, err
	}
	cpu, err := parseStat(stat)
	if err != nil {
		return Sample{}, err
	}
	status, err := os.ReadFile(fmt.Sprintf("%s/%d/status", s.proc, s.pid))
	if err != nil {
		return Sample{}, err
	}
	return Sample{RSS: parseRSS(status), CPU: cpu}, nil
}

// parseStat returns utime + stime from /proc/PID/stat. The command name (in
// parentheses) may itself hold spaces and parentheses, so fields are counted
// after its last ')'.
func parseStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("unreadable /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable /proc stat")
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// parseRSS returns VmRSS from /proc/PID/status, in bytes (0 for a zombie).
func parseRSS(b []byte) int64 {
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := strings.Fields(string(rest))
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// Fill takes a reading and puts it into one second of the series: it is
// the collector's OnSecond hook, called once a second off the hot path.
func (s *Sampler) Fill(sec *stats.Second) {
	now := time.Now()
	cur, err := s.read()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.exited = true
		return
	}
	dt := now.Sub(s.lastAt).Seconds()
	cpu := 0.0
	if dt > 0 {
		cpu = (cur.CPU - s.last.CPU).Seconds() / dt
	}
	s.last, s.lastAt, s.cpuEnd = cur, now, cur.CPU
	s.n++
	s.rssSum += cur.RSS
	s.peakRSS = max(s.peakRSS, cur.RSS)
	s.endRSS = cur.RSS
	s.peakCPU = max(s.peakCPU, cpu)
	sec.TargetRSS, sec.TargetCPU = cur.RSS, cpu
}

// Summary is the target's use over the run (elapsed long).
func (s *Sampler) Summary(elapsed time.Duration) *report.Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &report.Target{PID: s.pid, Command: s.cmd, Samples: s.n, StartRSSBytes: s.first.RSS, Exited: s.exited}
	if s.n == 0 {
		// A run shorter than a second: one reading at the end.
		if cur, err := s.read(); err == nil {
			s.cpuEnd = cur.CPU
			t.PeakRSSBytes, t.MeanRSSBytes, t.EndRSSBytes = cur.RSS, cur.RSS, cur.RSS
		}
	} else {
		t.PeakRSSBytes, t.MeanRSSBytes, t.EndRSSBytes = s.peakRSS, s.rssSum/int64(s.n), s.endRSS
	}
	t.PeakRSSBytes = max(t.PeakRSSBytes, s.first.RSS)
	t.CPUSeconds = (s.cpuEnd - s.first.CPU).Seconds()
	if elapsed > 0 {
		t.MeanCPU = t.CPUSeconds / elapsed.Seconds()
	}
	t.PeakCPU = max(s.peakCPU, t.MeanCPU)
	return t
}
