package run

import (
	"os"
	"time"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/target"
	"github.com/hail-loadgen/hail/internal/transport"
)

// targetProc is the target's process on this machine, sampled once a
// second: its memory and CPU go into the report, and its CPU on hail's
// CPUs is the target's, never "other processes'".
type targetProc struct {
	s      *target.Sampler
	source string  // how hail knew it: --target-pid, hail demo, loopback listener
	share  float64 // the part of its CPU time spent on hail's CPUs (its CPUs that are hail's, of its CPUs)
	cpus   int     // hail's CPUs
}

// findTarget returns the run's target process: o.TargetPID, or with
// o.FindTarget the process listening on a loopback target's port (not
// hail's own: an in-process target is part of hail's CPU). An explicit pid
// that does not exist is an error; a listener that cannot be found is none.
func findTarget(o Options, d *transport.Dialer) (*targetProc, error) {
	pid, source := o.TargetPID, o.TargetSource
	if source == "" {
		source = "--target-pid"
	}
	if pid == 0 && o.FindTarget {
		ap, ok := d.Loopback()
		if !ok {
			return nil, nil
		}
		if pid, ok = target.Listener(ap); !ok || pid == os.Getpid() {
			return nil, nil
		}
		source = "loopback listener"
	}
	if pid == 0 {
		return nil, nil
	}
	s, err := target.New(pid)
	if err != nil {
		if source == "loopback listener" {
			return nil, nil
		}
		return nil, err
	}
	return &targetProc{s: s, source: source, share: cpuOverlap(pid), cpus: hailCPUs()}, nil
}

// fill samples the target into one second of the series and takes its
// CPU on hail's CPUs out of the second's share of other processes.
func (t *targetProc) fill(sec *stats.Second) {
	t.s.Fill(sec)
	sec.TargetShare = min(t.onHail(sec.TargetCPU), 1)
	sec.Others = max(0, sec.Others-sec.TargetShare)
}

// onHail is the share of hail's CPUs that cores of the target's CPU use
// took.
func (t *targetProc) onHail(cores float64) float64 {
	if t.cpus <= 0 {
		return 0
	}
	return cores * t.share / float64(t.cpus)
}

// summary is the target's use over a run of elapsed, with how hail knew
// it, and m, hail's CPUs over the run, without the target's part.
func (t *targetProc) summary(elapsed time.Duration, m stats.MachineUse) (*report.Target, stats.MachineUse) {
	sum := t.s.Summary(elapsed)
	sum.Source = t.source
	sum.OnHailCPUs = min(t.onHail(sum.MeanCPU), 1)
	m.Others = max(0, m.Others-sum.OnHailCPUs)
	return sum, m
}
