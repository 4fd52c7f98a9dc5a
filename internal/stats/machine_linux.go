//go:build linux

package stats

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// ticks per second of /proc/stat (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// ReadMachine reads /proc/stat for the CPUs of hail's affinity mask and
// /proc/pressure/cpu. Where /proc is not there, the reading is empty and
// MachineUse reports nothing known.
func ReadMachine() Machine {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return Machine{}
	}
	m := Machine{}
	f, err := os.Open("/proc/stat")
	if err != nil {
		return Machine{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("cpu")) || len(line) < 4 || line[3] == ' ' {
			continue
		}
		fields := bytes.Fields(line)
		cpu, err := strconv.Atoi(string(fields[0][3:]))
		if err != nil || !set.IsSet(cpu) || len(fields) < 9 {
			continue
		}
		var v [8]int64
		for i := range v {
			v[i], _ = strconv.ParseInt(string(fields[i+1]), 10, 64)
		}
		tick := func(n int64) time.Duration { return time.Duration(n) * time.Second / userHZ }
		// user nice system idle iowait irq softirq steal
		m.busy += tick(v[0] + v[1] + v[2] + v[5] + v[6])
		m.steal += tick(v[7])
		m.total += tick(v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7])
		m.cpus++
	}
	m.ok = m.cpus > 0
	if b, err := os.ReadFile("/proc/pressure/cpu"); err == nil {
		if i := bytes.Index(b, []byte("total=")); i >= 0 {
			rest := b[i+len("total="):]
			if j := bytes.IndexAny(rest, " \n"); j >= 0 {
				rest = rest[:j]
			}
			if us, err := strconv.ParseInt(string(rest), 10, 64); err == nil {
				m.pressure, m.psi = time.Duration(us)*time.Microsecond, true
			}
		}
	}
	return m
}
