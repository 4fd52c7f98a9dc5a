// Package target samples the target's processes on this machine once a
// second of the run, from /proc and the cgroup hierarchies, so a report can
// say how the target's memory and CPU moved under load without any other
// tool. The target is one or more processes and their descendants
// (--target-pid), every process of a name and its descendants
// (--target-cmd), the processes of a cgroup and the cgroups beneath it
// (--target-cgroup), or any mix: the set is looked for again at every
// sample, so workers that come and go (a pre-forking server, a VMM's
// helpers) are counted while they live.
//
// Memory is the sum of the processes' resident sets (RSS; shared pages
// count once per process) with the sum of their proportional sets beside
// it (PSS, from smaps_rollup: each shared page divided among its sharers;
// a costly read, so taken when a scan of the run first sees a process,
// every 10 s, when its RSS moved by more than a tenth, and at the end:
// pssEvery), and a cgroup's charged memory. CPU is the processes' user +
// system time over the run: a process's from its first sample (or its
// start, when it started during the run), plus the time of children that
// ended between two samples, which their parent's cutime and cstime
// account once it has reaped them; a cgroup's from its own counter
// (cpu.stat or cpuacct.usage), which counts its dead processes exactly.
// hail's own process, and what it started, are never the target's when a
// tree or a name takes them in (Sampler.self).
package target

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// Spec says which processes are the target.
type Spec struct {
	// PIDs are processes followed with their descendants (--target-pid).
	PIDs []int
	// Cmds are process names: every process whose name (comm), program
	// (its command line's first word) or script (its second, for an
	// interpreter) has one of these base names, with its descendants
	// (--target-cmd).
	Cmds []string
	// Cgroups are cgroups whose processes, and those of the cgroups
	// beneath, are followed (--target-cgroup).
	Cgroups []string
}

// Empty reports whether spec names no process.
func (spec Spec) Empty() bool { return len(spec.PIDs)+len(spec.Cmds)+len(spec.Cgroups) == 0 }

// Flags names the flags that gave spec ("--target-pid, --target-cmd"),
// for the report's words on how hail knew the target.
func (spec Spec) Flags() string {
	var flags []string
	for _, f := range []struct {
		name string
		n    int
	}{{"--target-pid", len(spec.PIDs)}, {"--target-cmd", len(spec.Cmds)}, {"--target-cgroup", len(spec.Cgroups)}} {
		if f.n > 0 {
			flags = append(flags, f.name)
		}
	}
	return strings.Join(flags, ", ")
}

// Sampler follows the target's processes. Its methods are safe for
// concurrent use.
type Sampler struct {
	spec    Spec
	proc    string // /proc
	cgroups []*cgroup
	born    time.Time

	mu        sync.Mutex
	procs     map[procKey]*process // every process followed so far
	live      map[int]procKey      // those of the last scan, by pid
	lastAt    time.Time
	lastTicks uint64          // clock ticks since boot at the last scan
	cgCPU     []time.Duration // each cgroup's CPU counter at the last scan (-1: unaccounted)

	first                    reading
	n                        int
	rssSum, pssSum           int64
	peakRSS, peakPSS, peakCG int64
	end                      reading
	pssKnown, cgKnown        bool
	cpu                      time.Duration // over the samples
	peakCPU                  float64
	peakProcs                int
	exited                   bool
	// overlap, if set (CountOn), is the share of a process's CPU time
	// spent on the CPUs counted apart; shared is the CPU the target spent
	// there over the samples, lastShared in cores at the last one.
	overlap    func(pid int) float64
	shared     time.Duration
	lastShared float64
	pid        int // the first process followed, for the report's pid and command
	// childFiles: the kernel lists each task's children
	// (/proc/PID/task/TID/children), so a scan need not read every process.
	childFiles bool
	cmd        string
	// self is hail's own process (0 when the proc root is not this
	// machine's): never the target's, nor is anything it started, when a
	// target's tree or name takes it in (a target that started hail, or
	// --target-cmd hail), unless named itself (the library's
	// WithTargetPID(os.Getpid()): a program that serves and loads itself).
	self int
}

// isSelf reports whether pid is hail's own process, reached through a
// target's tree or name rather than named.
func (s *Sampler) isSelf(pid int) bool {
	return s.self != 0 && pid == s.self && !slices.Contains(s.spec.PIDs, pid)
}

// reading is what one scan of the target found.
type reading struct {
	rss, pss, cgMemory int64
	pssOK, cgOK        bool
	cpu                time.Duration // used since the previous scan
	shared             time.Duration // of cpu, the part on the CPUs counted apart (CountOn)
	procs              int
}

type procKey struct {
	pid   int
	start uint64
}

// process is one process followed.
type process struct {
	pid, ppid        int
	comm             string
	cpu, ccpu        time.Duration // its totals at its last scan
	used             time.Duration // CPU used over the run
	first, last      time.Duration // when it was first and last seen, since the sampler began
	peakRSS, peakPSS int64
	pss              pssReading // its last PSS reading
	cg               bool       // a member of a --target-cgroup whose counter gives its CPU
	overlap          float64    // the share of its CPU time on the CPUs counted apart (CountOn)
	gone             bool
}

// New follows pid and its descendants, and takes a first reading.
func New(pid int) (*Sampler, error) { return NewSet(Spec{PIDs: []int{pid}}) }

// NewSet follows the processes spec names, and takes a first reading. A
// pid that does not exist, a name no process has, or a cgroup that is not
// there is an error naming its flag.
func NewSet(spec Spec) (*Sampler, error) { return newSetAt("/proc", cgroupRoot, spec, os.Getpid()) }

func newSetAt(proc, cgRoot string, spec Spec, self int) (*Sampler, error) {
	s := &Sampler{spec: spec, proc: proc, born: time.Now(), procs: map[procKey]*process{}, live: map[int]procKey{},
		childFiles: hasChildFiles(proc), self: self}
	for _, pid := range spec.PIDs {
		if pid <= 0 {
			return nil, fmt.Errorf("--target-pid %d: give the process id of the target (e.g. $(pgrep -n nginx))", pid)
		}
		if _, err := readStat(proc, pid); err != nil {
			return nil, fmt.Errorf("--target-pid %d: no such process", pid)
		}
	}
	for _, name := range spec.Cmds {
		if name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("--target-cmd %q: give a process name such as nginx or gunicorn (no path)", name)
		}
	}
	for _, path := range spec.Cgroups {
		c, err := openCgroup(cgRoot, path)
		if err != nil {
			return nil, err
		}
		s.cgroups = append(s.cgroups, c)
	}
	first, err := s.scan(s.born, false)
	if err != nil {
		return nil, err
	}
	for _, name := range spec.Cmds {
		found := false
		for _, p := range s.procs {
			found = found || p.matched(s.proc, name)
		}
		if !found {
			return nil, fmt.Errorf("--target-cmd %s: no process of that name (pgrep -l %s finds none either, or give --target-pid)", name, name)
		}
	}
	s.first, s.end = first, first
	return s, nil
}

// matched reports whether p is called name.
func (p *process) matched(proc, name string) bool { return nameMatches(proc, p.pid, p.comm, name) }

// nameMatches reports whether the process is called name: its comm (which
// the kernel cuts to 15 bytes), or the base name of its command line's
// first or second word (a program run by an interpreter: python app.py).
func nameMatches(proc string, pid int, comm, name string) bool {
	if comm == name || len(name) > 15 && comm == name[:15] {
		return true
	}
	args := readCmdline(proc, pid)
	for i := 0; i < len(args) && i < 2; i++ {
		if filepath.Base(args[i]) == name {
			return true
		}
	}
	return false
}

// scan finds the target's processes now and reads them: their memory, and
// the CPU they used since the previous scan; with pss, the PSS of those
// due a reading (pssReading.due). The first scan, before the load, reads
// none: the report has no PSS before the load, and a target of many
// processes (a pre-forking server's workers) would cost hail a walk of
// each one's page tables there, read again at the first second. Call it
// with s.mu held (or before s is shared).
func (s *Sampler) scan(now time.Time, pss bool) (reading, error) {
	var r reading
	// The time of the scan, taken before the processes are listed: one that
	// starts after it and is not listed is new at the next scan.
	ticks := bootTicks(s.proc)
	sts, children, all, err := s.processes()
	if err != nil {
		return r, fmt.Errorf("reading %s: %v", s.proc, err)
	}
	// The target's processes: the cgroups' members, and the roots (the
	// pids, the named processes) with their descendants.
	followed := map[int]bool{} // pid → a member of a cgroup
	for _, c := range s.cgroups {
		for pid := range c.members() {
			if _, ok := sts[pid]; ok {
				followed[pid] = true
			}
		}
	}
	var roots []int
	for _, pid := range s.spec.PIDs {
		if _, ok := sts[pid]; ok {
			roots = append(roots, pid)
		}
	}
	if len(s.spec.Cmds) > 0 {
		for _, pid := range all {
			st, ok := sts[pid]
			if !ok {
				continue
			}
			for _, name := range s.spec.Cmds {
				if nameMatches(s.proc, pid, st.comm, name) {
					roots = append(roots, pid)
					break
				}
			}
		}
	}
	for len(roots) > 0 {
		pid := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if _, seen := followed[pid]; seen || s.isSelf(pid) {
			continue // hail and what it started are hail's, not the target's
		}
		followed[pid] = false
		roots = append(roots, children[pid]...)
	}
	since := now.Sub(s.born)
	firstScan := s.lastAt.IsZero()
	cgCPUOK := make([]bool, len(s.cgroups))
	cgCPU := make([]time.Duration, len(s.cgroups))
	for i, c := range s.cgroups {
		cgCPU[i], cgCPUOK[i] = c.cpuUsage()
	}
	anyCgroupCPU := false
	for _, ok := range cgCPUOK {
		anyCgroupCPU = anyCgroupCPU || ok
	}
	// Processes gone since the last scan: what their parent's cutime and
	// cstime will say of them is what they had when last seen.
	seenOfGone := map[int]time.Duration{}
	live := map[int]procKey{}
	var used, usedShared, overlaps float64 // this scan's CPU of its processes, that part on the CPUs counted apart, their overlaps
	for pid, key := range s.live {
		if st, ok := sts[pid]; ok && st.start == key.start && hasKey(followed, pid) {
			continue
		}
		p := s.procs[key]
		p.gone = true
		seenOfGone[p.ppid] += p.cpu + p.ccpu
	}
	for pid, inCG := range followed {
		st := sts[pid]
		key := procKey{pid, st.start}
		p := s.procs[key]
		if p == nil {
			p = &process{pid: pid, ppid: st.ppid, comm: st.comm, first: since, ccpu: st.ccpu, cpu: st.cpu}
			if !firstScan && st.start >= s.lastTicks {
				p.cpu, p.ccpu = 0, 0 // it started since the last scan: all of its time (and its children's) is the run's
			}
			if s.overlap != nil {
				p.overlap = s.overlap(pid)
			}
			s.procs[key] = p
			if s.pid == 0 || pid == firstOf(s.spec.PIDs) {
				s.pid, s.cmd = pid, st.comm
			}
		}
		p.cg = inCG && anyCgroupCPU
		ran := max(st.cpu-p.cpu, 0)
		// Its children that ended and were reaped since the last scan: the
		// rest of their time beyond what was last seen of them.
		if tail := st.ccpu - p.ccpu - seenOfGone[pid]; !firstScan && tail > 0 {
			ran += tail
		}
		p.cpu, p.ccpu, p.last, p.ppid, p.gone = st.cpu, st.ccpu, since, st.ppid, false
		overlaps += p.overlap
		if !firstScan {
			p.used += ran
			used += ran.Seconds()
			usedShared += ran.Seconds() * p.overlap
			if !p.cg {
				r.cpu += ran
			}
		}
		r.rss += st.rss
		p.peakRSS = max(p.peakRSS, st.rss)
		if pss && p.pss.due(now, st.rss) {
			p.pss = readPSSAt(s.proc, pid, now, st.rss)
			p.peakPSS = max(p.peakPSS, p.pss.bytes)
		}
		if p.pss.ok {
			r.pss += p.pss.bytes
			r.pssOK = true
		}
		r.procs++
		live[pid] = key
	}
	for i, c := range s.cgroups {
		if cgCPUOK[i] && !firstScan && s.cgCPU[i] >= 0 {
			r.cpu += max(cgCPU[i]-s.cgCPU[i], 0)
		}
		if !cgCPUOK[i] {
			cgCPU[i] = -1
		}
		if m, ok := c.memoryUsage(); ok {
			r.cgMemory += m
			r.cgOK = true
		}
	}
	s.cgCPU = cgCPU
	s.live, s.lastAt, s.lastTicks = live, now, ticks
	if s.overlap != nil {
		// The part of the target's CPU on the CPUs counted apart: its
		// processes' overlaps weighted by the CPU each used (a cgroup's
		// counter, which also holds its dead processes, split alike), or
		// their mean when none used any.
		share := 1.0
		switch {
		case used > 0:
			share = usedShared / used
		case len(followed) > 0:
			share = overlaps / float64(len(followed))
		}
		r.shared = time.Duration(float64(r.cpu) * share)
	}
	return r, nil
}

// CountOn makes the sampler count apart the target's CPU on some of the
// machine's CPUs (hail's): overlap(pid) is the share of a process's CPU
// time spent there (1 when it may run only there, 0 when never), asked
// once for each process when it is first seen. Shared gives the part.
func (s *Sampler) CountOn(overlap func(pid int) float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.overlap = overlap
	for _, p := range s.procs {
		p.overlap = overlap(p.pid)
	}
}

// Shared is the target's CPU on the CPUs CountOn counts apart: in cores
// at the last sample, and over the samples (or the one reading of a run
// shorter than a second, once Summary has taken it).
func (s *Sampler) Shared() (last float64, total time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastShared, s.shared
}

func hasKey(m map[int]bool, k int) bool {
	_, ok := m[k]
	return ok
}

func firstOf(pids []int) int {
	if len(pids) == 0 {
		return 0
	}
	return pids[0]
}

// Fill takes a reading and puts it into one second of the series: it is
// the collector's OnSecond hook, called once a second off the hot path.
func (s *Sampler) Fill(sec *stats.Second) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.lastAt
	r, err := s.scan(now, true)
	if err != nil || r.procs == 0 && len(s.cgroups) == 0 {
		s.exited = true
		if err != nil {
			return
		}
	} else {
		s.exited = false
	}
	cpu, shared := 0.0, 0.0
	if dt := now.Sub(prev).Seconds(); dt > 0 {
		cpu, shared = r.cpu.Seconds()/dt, r.shared.Seconds()/dt
	}
	s.n++
	s.rssSum += r.rss
	s.pssSum += r.pss
	s.peakRSS, s.peakPSS, s.peakCG = max(s.peakRSS, r.rss), max(s.peakPSS, r.pss), max(s.peakCG, r.cgMemory)
	s.pssKnown, s.cgKnown = s.pssKnown || r.pssOK, s.cgKnown || r.cgOK
	s.cpu += r.cpu
	s.shared, s.lastShared = s.shared+r.shared, shared
	s.peakCPU = max(s.peakCPU, cpu)
	s.peakProcs = max(s.peakProcs, r.procs)
	s.end = r
	sec.TargetRSS, sec.TargetCPU = r.rss, cpu
	if r.pssOK {
		sec.TargetPSS = r.pss
	}
	sec.TargetProcs = r.procs
}

// FirstPID is the first process followed (0: none yet), for the live
// view's title.
func (s *Sampler) FirstPID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// maxListed bounds the per-process breakdown of the summary.
const maxListed = 20

// Summary is the target's use over the run (elapsed long).
func (s *Sampler) Summary(elapsed time.Duration) *result.TargetUse {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n > 0 {
		s.endPSS(time.Now())
	} else { // a run shorter than a second: one reading at the end
		for _, p := range s.procs {
			p.pss.at = time.Time{} // PSS read again, as at every end
		}
		if r, err := s.scan(time.Now(), true); err == nil {
			s.n, s.rssSum, s.pssSum, s.end, s.cpu, s.shared = 1, r.rss, r.pss, r, r.cpu, r.shared
			s.peakRSS, s.peakPSS, s.peakCG, s.peakProcs = r.rss, r.pss, r.cgMemory, r.procs
			s.pssKnown, s.cgKnown = r.pssOK, r.cgOK
		}
	}
	t := &result.TargetUse{PID: s.pid, Command: s.cmd, Samples: s.n, StartRSSBytes: s.first.rss, Exited: s.exited,
		PeakRSSBytes: max(s.peakRSS, s.first.rss), EndRSSBytes: s.end.rss, Follows: s.follows(),
		PeakProcesses: max(s.peakProcs, s.first.procs), ProcessesSeen: len(s.procs)}
	if s.n > 0 {
		t.MeanRSSBytes = s.rssSum / int64(s.n)
	}
	if s.pssKnown {
		t.PeakPSSBytes, t.EndPSSBytes = max(s.peakPSS, s.first.pss), s.end.pss
		if s.n > 0 {
			t.MeanPSSBytes = s.pssSum / int64(s.n)
		}
	}
	if s.cgKnown {
		t.PeakCgroupMemoryBytes, t.EndCgroupMemoryBytes = max(s.peakCG, s.first.cgMemory), s.end.cgMemory
	}
	t.CPU = s.cpu
	if elapsed > 0 {
		t.MeanCPU = t.CPU.Seconds() / elapsed.Seconds()
	}
	t.PeakCPU = max(s.peakCPU, t.MeanCPU)
	procs := make([]*process, 0, len(s.procs))
	for _, p := range s.procs {
		procs = append(procs, p)
	}
	sort.Slice(procs, func(i, j int) bool {
		if procs[i].used != procs[j].used {
			return procs[i].used > procs[j].used
		}
		return procs[i].pid < procs[j].pid
	})
	for i, p := range procs {
		if i == maxListed {
			t.ProcessesNotListed = len(procs) - maxListed
			break
		}
		t.Processes = append(t.Processes, result.TargetProcess{PID: p.pid, Command: p.comm, CPU: p.used,
			PeakRSSBytes: p.peakRSS, PeakPSSBytes: p.peakPSS, FirstSeen: p.first, LastSeen: p.last, Exited: p.gone})
	}
	return t
}

// endPSS reads the PSS of the last sample's processes again, for the
// run's end: the sample's own may be up to pssEvery old. A reading of the
// last second stands (in a run of a second or two, the first second's
// reading is the end's too).
func (s *Sampler) endPSS(now time.Time) {
	var sum int64
	ok := false
	for pid, key := range s.live {
		p := s.procs[key]
		if p.pss.at.IsZero() || now.Sub(p.pss.at) >= pssFresh {
			p.pss = readPSSAt(s.proc, pid, now, p.pss.rss)
		}
		p.peakPSS = max(p.peakPSS, p.pss.bytes)
		if p.pss.ok {
			sum, ok = sum+p.pss.bytes, true
		}
	}
	s.end.pss, s.end.pssOK = sum, ok
	s.peakPSS, s.pssKnown = max(s.peakPSS, sum), s.pssKnown || ok
}

// follows says in words which processes the sampler follows.
func (s *Sampler) follows() string {
	var parts []string
	for _, pid := range s.spec.PIDs {
		parts = append(parts, fmt.Sprintf("pid %d and its descendants", pid))
	}
	for _, name := range s.spec.Cmds {
		parts = append(parts, fmt.Sprintf("processes named %s and their descendants", name))
	}
	for _, c := range s.cgroups {
		v := "v1"
		if c.v2 {
			v = "v2"
		}
		parts = append(parts, fmt.Sprintf("cgroup %s (%s)", c.name, v))
	}
	return strings.Join(parts, "; ")
}

// processes reads the stat of the processes a scan needs, and which of
// them are whose children. Names to match (--target-cmd), or a kernel
// that does not list a task's children, need every process's, and all
// lists their pids; else only the followed pids', the cgroups' members'
// and their descendants' are read, found through
// /proc/PID/task/TID/children (all is nil). On a machine of many
// processes that is a fraction of the reads: sampling a loopback mock
// once a second by reading all of /proc cost hail a tenth of its CPU at
// 4,000 streamed tokens a second. A child the kernel lists as it is being
// reparented may be missed by one scan; the next sees it.
func (s *Sampler) processes() (sts map[int]procStat, children map[int][]int, all []int, err error) {
	sts, children = map[int]procStat{}, map[int][]int{}
	read := func(pid int) bool {
		st, err := readStat(s.proc, pid)
		if err != nil {
			return false // it ended as we looked
		}
		sts[pid] = st
		children[st.ppid] = append(children[st.ppid], pid)
		return true
	}
	if len(s.spec.Cmds) > 0 || !s.childFiles {
		if all, err = pids(s.proc); err != nil {
			return nil, nil, nil, err
		}
		for _, pid := range all {
			read(pid)
		}
		return sts, children, all, nil
	}
	todo := slices.Clone(s.spec.PIDs)
	for _, c := range s.cgroups {
		for pid := range c.members() {
			todo = append(todo, pid)
		}
	}
	for len(todo) > 0 {
		pid := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, seen := sts[pid]; seen || !read(pid) {
			continue
		}
		todo = appendChildren(todo, s.proc, pid)
	}
	return sts, children, nil, nil
}
