package stats

import "time"

// Machine is a reading of the CPUs hail may run on, from /proc: how busy
// they were, how much of their time the hypervisor stole, and the
// machine's CPU pressure (PSI). Two readings tell a generator slowed by its
// own load from one slowed by other processes or by the hypervisor.
type Machine struct {
	ok       bool
	busy     time.Duration // user, nice, system, irq, softirq of hail's CPUs
	steal    time.Duration // stolen from hail's CPUs
	total    time.Duration // all of hail's CPUs' time
	pressure time.Duration // PSI "some" total: time some task waited for a CPU
	psi      bool
	cpus     int
}

// MachineUse is what happened on hail's CPUs between two readings.
type MachineUse struct {
	// Known is false where the readings could not be taken.
	Known bool
	// CPUs is the number of CPUs hail may run on.
	CPUs int
	// Others is the share of those CPUs' time that other processes (and
	// interrupts) used: their busy time minus hail's own CPU time.
	Others float64
	// Steal is the share of those CPUs' time the hypervisor gave to other
	// virtual machines.
	Steal float64
	// Pressure is the share of the wall time during which some runnable
	// task on the machine waited for a CPU (PSI "some"); -1 when the
	// kernel does not report it.
	Pressure float64
}

// Use returns what happened on hail's CPUs since prev; hail is hail's own
// CPU time over the same span.
func (m Machine) Use(prev Machine, hail time.Duration, wall time.Duration) MachineUse {
	if !m.ok || !prev.ok || m.cpus != prev.cpus {
		return MachineUse{Pressure: -1}
	}
	total := m.total - prev.total
	if total <= 0 {
		return MachineUse{Pressure: -1}
	}
	u := MachineUse{Known: true, CPUs: m.cpus, Pressure: -1}
	others := m.busy - prev.busy - hail
	u.Others = max(float64(others)/float64(total), 0)
	u.Steal = float64(m.steal-prev.steal) / float64(total)
	if m.psi && prev.psi && wall > 0 {
		u.Pressure = min(float64(m.pressure-prev.pressure)/float64(wall), 1)
	}
	return u
}
