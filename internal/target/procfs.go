package target

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// pageSize is the unit of the rss field of /proc/PID/stat.
var pageSize = int64(os.Getpagesize())

// procStat is what one process's /proc/PID/stat says.
type procStat struct {
	pid, ppid int
	comm      string
	cpu       time.Duration // utime + stime
	ccpu      time.Duration // cutime + cstime: its children's, once it waited for them
	start     uint64        // starttime, clock ticks since boot
	rss       int64         // resident set size, bytes (0 for a zombie)
}

// readStat reads /proc/PID/stat.
func readStat(proc string, pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

// parseProcStat parses /proc/PID/stat. The command name (in parentheses)
// may itself hold spaces and parentheses, so fields are counted after its
// last ')'.
func parseProcStat(b []byte) (procStat, error) {
	open, i := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || i < open {
		return procStat{}, fmt.Errorf("unreadable /proc stat")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return procStat{}, fmt.Errorf("unreadable /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); ppid is field 4, utime 14, stime 15,
	// cutime 16, cstime 17, starttime 22, rss 24 (pages: the second
	// field of statm, so one read gives both).
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("unreadable /proc stat")
	}
	var n [7]int64
	for k, field := range []int{1, 11, 12, 13, 14, 19, 21} {
		if n[k], err = strconv.ParseInt(f[field], 10, 64); err != nil {
			return procStat{}, fmt.Errorf("unreadable /proc stat")
		}
	}
	tick := func(t int64) time.Duration { return time.Duration(t) * time.Second / clockTicks }
	return procStat{pid: pid, ppid: int(n[0]), comm: string(b[open+1 : i]), cpu: tick(n[1] + n[2]), ccpu: tick(n[3] + n[4]), start: uint64(n[5]),
		rss: max(n[6], 0) * pageSize}, nil
}

// parseRSS returns VmRSS from /proc/PID/status, in bytes (0 for a zombie).
func parseRSS(b []byte) int64 { return kbField(b, "VmRSS:") }

// readPSS reads a process's proportional set size, bytes, from
// /proc/PID/smaps_rollup: its resident pages, each shared one divided by
// the processes that share it. ok is false when it cannot be read (another
// user's process, or a kernel older than 4.14).
func readPSS(proc string, pid int) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "smaps_rollup"))
	if err != nil || !bytes.Contains(b, []byte("\nPss:")) {
		return 0, false
	}
	return kbField(b, "Pss:"), true
}

// kbField is the value of a "Name:   123 kB" line, in bytes.
func kbField(b []byte, name string) int64 {
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if rest, ok := bytes.CutPrefix(line, []byte(name)); ok {
			f := strings.Fields(string(rest))
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// readCmdline reads a process's command line: its arguments.
func readCmdline(proc string, pid int) []string {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// pids lists the processes of /proc.
func pids(proc string) ([]int, error) {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// bootTicks is the time since boot in clock ticks, from /proc/uptime (0
// when it cannot be read).
func bootTicks(proc string) uint64 {
	b, err := os.ReadFile(filepath.Join(proc, "uptime"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return uint64(up * clockTicks)
}

// hasChildFiles reports whether proc lists each task's children
// (/proc/PID/task/TID/children: Linux with CONFIG_PROC_CHILDREN).
func hasChildFiles(proc string) bool {
	m, _ := filepath.Glob(filepath.Join(proc, "self", "task", "*", "children"))
	return len(m) > 0
}

// appendChildren appends to out the children of process pid that its
// tasks' children files list.
func appendChildren(out []int, proc string, pid int) []int {
	dir := filepath.Join(proc, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if kid, err := strconv.Atoi(f); err == nil && kid > 0 {
				out = append(out, kid)
			}
		}
	}
	return out
}

// PSS costs the kernel a walk of every mapping and page table of the
// process (about 2 ms for a Go server), where RSS is a counter: a scan
// during the run reads a process's PSS when it first sees it, then again
// once pssEvery has passed or its RSS has moved by more than 1/pssMoved
// since, and at the end of the run (Summary) unless read within pssFresh;
// between reads its last reading stands. The scan before the load reads
// none.
const (
	pssEvery = 10 * time.Second
	pssMoved = 10 // RSS moved by more than a tenth
	pssFresh = time.Second
)

// pssReading is one read of a process's PSS.
type pssReading struct {
	bytes int64
	ok    bool      // smaps_rollup could be read
	at    time.Time // when (zero: never read)
	rss   int64     // its RSS then, bytes
}

// due reports whether a process whose RSS is rss now needs its PSS read
// again.
func (r pssReading) due(now time.Time, rss int64) bool {
	if r.at.IsZero() || now.Sub(r.at) >= pssEvery {
		return true
	}
	moved := rss - r.rss
	return moved*pssMoved > r.rss || -moved*pssMoved > r.rss
}

// readPSSAt reads a process's PSS now, when its RSS is rss.
func readPSSAt(proc string, pid int, now time.Time, rss int64) pssReading {
	b, ok := readPSS(proc, pid)
	return pssReading{bytes: b, ok: ok, at: now, rss: rss}
}
