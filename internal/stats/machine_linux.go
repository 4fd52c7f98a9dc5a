//go:build linux

package stats

import (
	"bytes"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ticks per second of /proc/stat (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// MachineReader takes Machine readings once a second without garbage: it
// keeps the files open and reads them into one buffer (the collector would
// otherwise leave a few kilobytes a second for the collector of garbage).
type MachineReader struct {
	stat, psi *os.File
	buf       []byte
	opened    bool
}

// Read takes a reading.
func (r *MachineReader) Read() Machine {
	if !r.opened {
		r.opened = true
		r.stat, _ = os.Open("/proc/stat")
		r.psi, _ = os.Open("/proc/pressure/cpu")
		r.buf = make([]byte, 64<<10)
	}
	var set unix.CPUSet
	if r.stat == nil || unix.SchedGetaffinity(0, &set) != nil {
		return Machine{}
	}
	n, _ := r.stat.ReadAt(r.buf, 0)
	m := Machine{}
	for data := r.buf[:n]; len(data) > 0; {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) < 4 || line[0] != 'c' || line[1] != 'p' || line[2] != 'u' || line[3] == ' ' {
			continue
		}
		var v [9]int64 // the CPU's number, then user nice system idle iowait irq softirq steal
		k, x, in := 0, int64(0), false
		for _, c := range line[3:] {
			switch {
			case c >= '0' && c <= '9':
				x, in = x*10+int64(c-'0'), true
			case in:
				if k < len(v) {
					v[k] = x
				}
				k, x, in = k+1, 0, false
			}
		}
		if in && k < len(v) {
			v[k] = x
			k++
		}
		if k < len(v) || !set.IsSet(int(v[0])) {
			continue
		}
		tick := func(n int64) time.Duration { return time.Duration(n) * time.Second / userHZ }
		u := v[1:]
		m.busy += tick(u[0] + u[1] + u[2] + u[5] + u[6])
		m.steal += tick(u[7])
		m.total += tick(u[0] + u[1] + u[2] + u[3] + u[4] + u[5] + u[6] + u[7])
		m.cpus++
	}
	m.ok = m.cpus > 0
	if r.psi != nil {
		n, _ := r.psi.ReadAt(r.buf, 0)
		if i := bytes.Index(r.buf[:n], []byte("total=")); i >= 0 {
			var us int64
			for _, c := range r.buf[i+len("total=") : n] {
				if c < '0' || c > '9' {
					break
				}
				us = us*10 + int64(c-'0')
			}
			m.pressure, m.psi = time.Duration(us)*time.Microsecond, true
		}
	}
	return m
}

// Close closes the files.
func (r *MachineReader) Close() {
	if r.stat != nil {
		r.stat.Close()
	}
	if r.psi != nil {
		r.psi.Close()
	}
	r.stat, r.psi = nil, nil
}
