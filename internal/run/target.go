package run

import (
	"os"
	"slices"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/target"
	"github.com/hail-loadgen/hail/internal/transport"
	"github.com/hail-loadgen/hail/result"
)

// targetProc is the target's processes on this machine, sampled once a
// second: their memory and CPU go into the report, and their CPU on
// hail's CPUs is the target's, never "other processes'".
type targetProc struct {
	s      *target.Sampler
	source string // how hail knew it: the --target-* flags, hail demo, loopback listener
	cpus   int    // hail's CPUs
}

// findTarget returns the run's target: the processes o.Target names, or
// with o.FindTarget those listening on the ports of the run's loopback
// targets (one per origin; not hail's own: an in-process target is part of
// hail's CPU). A process, name or cgroup named that is not there is an
// error; a listener that cannot be found is none.
func findTarget(o Options, dialers []*transport.Dialer) (*targetProc, error) {
	spec, source := o.Target, o.TargetSource
	if source == "" {
		source = spec.Flags()
	}
	if spec.Empty() && o.FindTarget {
		for _, d := range dialers {
			ap, ok := d.Loopback()
			if !ok {
				continue
			}
			if pid, ok := target.Listener(ap); ok && pid != os.Getpid() && !slices.Contains(spec.PIDs, pid) {
				spec.PIDs = append(spec.PIDs, pid)
			}
		}
		source = "loopback listener"
	}
	if spec.Empty() {
		return nil, nil
	}
	s, err := target.NewSet(spec)
	if err != nil {
		if source == "loopback listener" {
			return nil, nil
		}
		return nil, err
	}
	s.CountOn(cpuOverlap)
	return &targetProc{s: s, source: source, cpus: hailCPUs()}, nil
}

// dialers are the run's dialers: one, or one per origin.
func (s *setup) dialers() []*transport.Dialer {
	if s.legs == nil {
		return []*transport.Dialer{s.dialer}
	}
	out := make([]*transport.Dialer, len(s.legs))
	for i, leg := range s.legs {
		out[i] = leg.dialer
	}
	return out
}

// fill samples the target into one second of the series and takes its
// CPU on hail's CPUs out of the second's share of other processes.
func (t *targetProc) fill(sec *stats.Second) {
	t.s.Fill(sec)
	shared, _ := t.s.Shared()
	sec.TargetShare = min(t.onHail(shared), 1)
	sec.Others = max(0, sec.Others-sec.TargetShare)
}

// onHail is the share of hail's CPUs that cores of the target's CPU use
// on them took.
func (t *targetProc) onHail(cores float64) float64 {
	if t.cpus <= 0 {
		return 0
	}
	return cores / float64(t.cpus)
}

// summary is the target's use over a run of elapsed, with how hail knew
// it, and m, hail's CPUs over the run, without the target's part.
func (t *targetProc) summary(elapsed time.Duration, m stats.MachineUse) (*result.TargetUse, stats.MachineUse) {
	sum := t.s.Summary(elapsed)
	sum.Source = t.source
	if _, shared := t.s.Shared(); elapsed > 0 {
		sum.OnHailCPUs = min(t.onHail(shared.Seconds()/elapsed.Seconds()), 1)
	}
	m.Others = max(0, m.Others-sum.OnHailCPUs)
	return sum, m
}
