package target

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

func TestParse(t *testing.T) {
	stat := []byte("1234 (my (odd) prog) S 7 1234 1234 0 -1 4194560 500 0 0 0 250 50 30 20 20 0 4 0 100 1000 300\n")
	st, err := parseProcStat(stat)
	if err != nil || st.pid != 1234 || st.ppid != 7 || st.comm != "my (odd) prog" || st.cpu != 3*time.Second || st.ccpu != 500*time.Millisecond || st.start != 100 || st.rss != 300*pageSize {
		t.Errorf("%+v, %v", st, err)
	}
	if rss := parseRSS([]byte("Name:\tx\nVmPeak:\t 9 kB\nVmRSS:\t    2048 kB\n")); rss != 2048*1024 {
		t.Errorf("rss %d", rss)
	}
	for _, bad := range []string{"", "12 (x", "x (y) S 1 2", "12 (y) S a b c d e f g h i j k l m n o p q r s t"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// fakeProc is a /proc of the test's making.
type fakeProc struct {
	t   *testing.T
	dir string
	// kids: the fake lists each process's children as Linux does
	// (self/task/TID/children and PID/task/PID/children), so the sampler
	// walks the tree instead of reading every process.
	kids bool
	ppid map[int]int
}

func newFakeProc(t *testing.T) *fakeProc {
	f := &fakeProc{t: t, dir: t.TempDir(), ppid: map[int]int{}}
	f.uptime(1000)
	return f
}

// newFakeProcKids is newFakeProc with children files.
func newFakeProcKids(t *testing.T) *fakeProc {
	f := newFakeProc(t)
	f.kids = true
	self := filepath.Join(f.dir, "self", "task", "1")
	os.MkdirAll(self, 0o755)
	os.WriteFile(filepath.Join(self, "children"), nil, 0o644)
	return f
}

// link writes each living process's children file from the parents set.
func (f *fakeProc) link() {
	kids := map[int][]string{}
	for pid, ppid := range f.ppid {
		kids[ppid] = append(kids[ppid], fmt.Sprint(pid))
	}
	for pid := range f.ppid {
		task := filepath.Join(f.dir, fmt.Sprint(pid), "task", fmt.Sprint(pid))
		os.MkdirAll(task, 0o755)
		os.WriteFile(filepath.Join(task, "children"), []byte(strings.Join(kids[pid], " ")), 0o644)
	}
}

func (f *fakeProc) uptime(secs float64) {
	os.WriteFile(filepath.Join(f.dir, "uptime"), fmt.Appendf(nil, "%.2f 0.00\n", secs), 0o644)
}

// set writes process pid: its parent, name, CPU ticks (own and its reaped
// children's), start tick, resident pages and PSS.
func (f *fakeProc) set(pid, ppid int, comm string, ticks, cticks int, start uint64, pages, pssKB int) {
	p := filepath.Join(f.dir, fmt.Sprint(pid))
	os.MkdirAll(p, 0o755)
	os.WriteFile(filepath.Join(p, "stat"), fmt.Appendf(nil, "%d (%s) S %d 1 1 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 1 0 %d 1 %d\n", pid, comm, ppid, ticks, cticks, start, pages), 0o644)
	os.WriteFile(filepath.Join(p, "smaps_rollup"), fmt.Appendf(nil, "00400000-7fff [rollup]\nRss:  %d kB\nPss:  %d kB\n", pages*int(pageSize)/1024, pssKB), 0o644)
	os.WriteFile(filepath.Join(p, "cmdline"), []byte("/usr/sbin/"+comm+"\x00--flag\x00"), 0o644)
	f.ppid[pid] = ppid
	if f.kids {
		f.link()
	}
}

func (f *fakeProc) kill(pid int) {
	os.RemoveAll(filepath.Join(f.dir, fmt.Sprint(pid)))
	delete(f.ppid, pid)
	if f.kids {
		f.link()
	}
}

// hail is never its own target: a target that started hail (a test
// binary serving on loopback, a script's server) has hail and what hail
// started among its descendants, and --target-cmd hail names hail too.
// The sampler leaves hail's process and its subtree out, by name or tree.
func TestSamplerLeavesHailOut(t *testing.T) {
	for _, kids := range []bool{false, true} {
		for _, spec := range []Spec{{PIDs: []int{42}}, {Cmds: []string{"hail"}}} {
			t.Run(fmt.Sprintf("children files %v, %s", kids, spec.Flags()), func(t *testing.T) {
				f := newFakeProc(t)
				if kids {
					f = newFakeProcKids(t)
				}
				f.set(42, 1, "hail", 100, 0, 10, 100, 300) // the target: hail serve, say
				f.set(43, 42, "hail", 50, 0, 20, 50, 100)  // hail, the load generator it started
				f.set(44, 43, "kubectl", 9, 0, 30, 9, 9)   // something hail started
				f.set(45, 42, "worker", 5, 0, 40, 5, 5)    // the target's own worker
				s, err := newSetAt(f.dir, t.TempDir(), spec, 43)
				if err != nil {
					t.Fatal(err)
				}
				f.uptime(1001)
				f.set(42, 1, "hail", 110, 0, 10, 100, 300)
				f.set(43, 42, "hail", 90, 0, 20, 50, 100)
				f.set(45, 42, "worker", 8, 0, 40, 5, 5)
				var sec stats.Second
				s.Fill(&sec)
				if sec.TargetProcs != 2 || sec.TargetRSS != 105*pageSize || sec.TargetPSS != 305*1024 {
					t.Errorf("%d processes, RSS %d, PSS %d: want the target and its worker alone (2, %d, %d)",
						sec.TargetProcs, sec.TargetRSS, sec.TargetPSS, 105*pageSize, 305*1024)
				}
				sum := s.Summary(time.Second)
				if sum.ProcessesSeen != 2 || sum.CPU.Seconds() < 0.129 || sum.CPU.Seconds() > 0.131 {
					t.Errorf("summary: %d processes seen, %.3f CPU s; want 2 and the target's 13 ticks", sum.ProcessesSeen, sum.CPU.Seconds())
				}
			})
		}
	}
}

// A fake /proc: the sampler follows a process and its children, counts
// each child's CPU while it lives and the rest of it once its parent has
// reaped it, and a child born and gone between two samples through its
// parent too; memory is the sum of the living. Whether it reads every
// process or walks the children files the kernel keeps, the same.
func TestSamplerTree(t *testing.T) {
	for _, kids := range []bool{false, true} {
		t.Run(fmt.Sprintf("children files %v", kids), func(t *testing.T) { samplerTree(t, kids) })
	}
}

func samplerTree(t *testing.T, kids bool) {
	f := newFakeProc(t)
	if kids {
		f = newFakeProcKids(t)
	}
	f.set(42, 1, "srv", 100, 0, 10, 100, 300)
	f.set(43, 42, "srv", 50, 0, 20, 50, 100)
	f.set(99, 1, "other", 500, 0, 5, 999, 999)
	s, err := newSetAt(f.dir, t.TempDir(), Spec{PIDs: []int{42}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.childFiles != kids {
		t.Fatalf("the sampler walks children files: %v, want %v", s.childFiles, kids)
	}
	var sec stats.Second
	// +1 s: the parent used 10 ticks, the child 40.
	f.uptime(1001)
	f.set(42, 1, "srv", 110, 0, 10, 100, 300)
	f.set(43, 42, "srv", 90, 0, 20, 60, 110)
	s.Fill(&sec)
	if sec.TargetProcs != 2 || sec.TargetRSS != 160*pageSize || sec.TargetPSS != 410*1024 {
		t.Errorf("first second: %+v", sec)
	}
	// +2 s: the child ended after 20 more ticks, and another child lived 30
	// ticks between the samples; the parent reaped both (cutime 110 + 30)
	// and used 5 ticks. A new child started (tick 100 200 of boot) and used 7.
	f.uptime(1002)
	f.kill(43)
	f.set(42, 1, "srv", 115, 140, 10, 100, 300)
	f.set(44, 42, "srv", 7, 0, 100150, 10, 10)
	s.Fill(&sec)
	if sec.TargetProcs != 2 || sec.TargetRSS != 110*pageSize {
		t.Errorf("second second: %+v", sec)
	}
	sum := s.Summary(2 * time.Second)
	// 10+40 then 5 + (140 − 90 seen of the child) + 7 = 112 ticks.
	if sum.CPU.Seconds() < 1.119 || sum.CPU.Seconds() > 1.121 || sum.Samples != 2 || sum.PID != 42 || sum.Command != "srv" {
		t.Errorf("summary: %.3f CPU s, %d samples, pid %d %s; want 1.12 s", sum.CPU.Seconds(), sum.Samples, sum.PID, sum.Command)
	}
	if sum.ProcessesSeen != 3 || sum.PeakProcesses != 2 || sum.PeakPSSBytes != 410*1024 || !strings.Contains(sum.Follows, "pid 42 and its descendants") {
		t.Errorf("summary: %d seen, %d at once, PSS %d, follows %q", sum.ProcessesSeen, sum.PeakProcesses, sum.PeakPSSBytes, sum.Follows)
	}
	byPID := map[int]float64{}
	for _, p := range sum.Processes {
		byPID[p.PID] = p.CPU.Seconds()
	}
	if byPID[42] < 0.649 || byPID[42] > 0.651 || byPID[43] < 0.399 || byPID[43] > 0.401 || byPID[44] != 0.07 || byPID[99] != 0 {
		t.Errorf("per process: %v", byPID)
	}
	if _, err := newSetAt(f.dir, t.TempDir(), Spec{PIDs: []int{7}}, 0); err == nil || !strings.Contains(err.Error(), "--target-pid 7: no such process") {
		t.Errorf("missing pid: %v", err)
	}
}

// PSS is read when a scan of the run first sees a process, again once
// pssEvery has passed or its RSS moved by more than a tenth, and at the
// end of the run; between reads the last reading stands. The scan before
// the load reads none. RSS is read at every scan.
func TestPSSCadence(t *testing.T) {
	f := newFakeProcKids(t)
	f.set(42, 1, "srv", 100, 0, 10, 100, 300)
	s, err := newSetAt(f.dir, t.TempDir(), Spec{PIDs: []int{42}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.first.pssOK || s.first.pss != 0 || s.first.rss != 100*pageSize {
		t.Fatalf("the scan before the load: %+v, want its RSS and no PSS", s.first)
	}
	at := s.born
	scan := func(d time.Duration, pages, pssKB int) reading {
		t.Helper()
		f.set(42, 1, "srv", 100, 0, 10, pages, pssKB)
		r, err := s.scan(at.Add(d), true)
		if err != nil || r.rss != int64(pages)*pageSize || !r.pssOK {
			t.Fatalf("scan at %v: %+v, %v", d, r, err)
		}
		return r
	}
	for _, c := range []struct {
		d            time.Duration
		pages, pssKB int
		want         int // KB
	}{
		{time.Second, 100, 500, 500},              // the run's first scan: read
		{2 * time.Second, 109, 510, 500},          // RSS moved 9%: the last reading
		{3 * time.Second, 120, 520, 520},          // 20% (of the RSS at the last read): read
		{4 * time.Second, 100, 530, 530},          // back down by 17%: read
		{5*time.Second + pssEvery, 100, 540, 540}, // pssEvery since the last read
	} {
		if r := scan(c.d, c.pages, c.pssKB); r.pss != int64(c.want)*1024 {
			t.Errorf("scan at %v (%d pages, PSS %d KB): PSS %d KB, want %d", c.d, c.pages, c.pssKB, r.pss/1024, c.want)
		}
	}
	// The end: a reading of the last second stands, an older one is read again.
	f.set(42, 1, "srv", 100, 0, 10, 100, 700)
	last := at.Add(5*time.Second + pssEvery)
	if s.endPSS(last.Add(pssFresh / 2)); s.end.pss != 540*1024 {
		t.Errorf("end PSS %d KB half a second after a reading: want that reading, 540 KB", s.end.pss/1024)
	}
	if s.endPSS(last.Add(pssFresh)); s.end.pss != 700*1024 {
		t.Errorf("end PSS %d KB a second after a reading: want a new one, 700 KB", s.end.pss/1024)
	}
	var sec stats.Second
	s.Fill(&sec)
	if sum := s.Summary(time.Second); sum.EndPSSBytes != 700*1024 || sum.PeakPSSBytes != 700*1024 {
		t.Errorf("end PSS %d, peak %d: want the end's reading, 700 KB", sum.EndPSSBytes/1024, sum.PeakPSSBytes/1024)
	}
}

// --target-cmd finds every process of the name, by comm or by command
// line, and follows their children; a name nothing has is an error.
func TestSamplerCmd(t *testing.T) {
	f := newFakeProc(t)
	f.set(10, 1, "gunicorn", 0, 0, 1, 10, 10)
	f.set(11, 10, "python3", 0, 0, 2, 10, 10)
	f.set(12, 1, "python3", 0, 0, 3, 10, 10)
	os.WriteFile(filepath.Join(f.dir, "12", "cmdline"), []byte("/usr/bin/python3\x00/srv/app/manage.py\x00"), 0o644)
	f.set(13, 1, "bash", 0, 0, 3, 10, 10)
	for _, tc := range []struct {
		name string
		want int
	}{{"gunicorn", 2}, {"manage.py", 1}, {"python3", 2}} {
		s, err := newSetAt(f.dir, t.TempDir(), Spec{Cmds: []string{tc.name}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(s.procs); n != tc.want {
			t.Errorf("%s: follows %d processes, want %d", tc.name, n, tc.want)
		}
	}
	if _, err := newSetAt(f.dir, t.TempDir(), Spec{Cmds: []string{"nginx"}}, 0); err == nil || !strings.Contains(err.Error(), "--target-cmd nginx: no process") {
		t.Errorf("no nginx: %v", err)
	}
	if _, err := newSetAt(f.dir, t.TempDir(), Spec{Cmds: []string{"/usr/bin/x"}}, 0); err == nil {
		t.Error("a path accepted as a name")
	}
}

// The real /proc: this test's parent (go test, or whatever started the
// test binary) and its descendants, but not this process among them, which
// is hail's own (NewSet's self); this process named is followed.
func TestSamplerSelf(t *testing.T) {
	s, err := New(os.Getppid())
	if err != nil {
		t.Fatal(err)
	}
	var sec stats.Second
	s.Fill(&sec)
	sum := s.Summary(time.Second)
	if sec.TargetRSS < 1<<20 || sec.TargetProcs < 1 || sum.Command == "" {
		t.Errorf("rss %d, %d processes, command %q", sec.TargetRSS, sec.TargetProcs, sum.Command)
	}
	for _, p := range sum.Processes {
		if p.PID == os.Getpid() {
			t.Errorf("this process (%d) is among the target's: %+v", p.PID, sum.Processes)
		}
	}
	s, err = New(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	s.Fill(&sec)
	if sum := s.Summary(time.Second); sec.TargetRSS < 1<<20 || sum.PID != os.Getpid() || len(sum.Processes) < 1 || sum.Processes[0].PID != os.Getpid() {
		t.Errorf("this process named: rss %d, %+v", sec.TargetRSS, sum)
	}
}
