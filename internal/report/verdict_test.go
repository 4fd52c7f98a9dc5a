package report

import (
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// Each bottleneck kind from its evidence: late sends on an otherwise idle
// machine are the operating system's wake-ups, late sends while hail is busy
// are its own load, late sends while others use its CPUs are contention, a
// wait for connections is the target, and on-time sends are nobody's.
func TestVerdictKinds(t *testing.T) {
	quiet := stats.MachineUse{Known: true, CPUs: 1, Others: 0.02, Pressure: 0.01}
	for _, tc := range []struct {
		name    string
		open    bool
		lagNs   int64 // own lateness of every request
		waitNs  int64 // connection wait of every other request
		cpu     time.Duration
		machine stats.MachineUse
		stall   bool // closed: 2 s without a completion
		kind    string
		want    []string // in the reasons
	}{
		{"on time", true, 200_000, 0, time.Second, quiet, false, BottleneckNone, []string{"hail sent on time"}},
		{"late and idle", true, 3_000_000, 0, time.Second, quiet, false, BottleneckWakeup, []string{"exceeds 1ms", "10% busy", "the OS waking an idle generator late"}},
		{"late and busy", true, 3_000_000, 0, 7 * time.Second, quiet, false, BottleneckGenerator, []string{"exceeds 1ms", "70% of its 1 core", "its own work delayed sends"}},
		{"late and saturated", true, 3_000_000, 0, 9500 * time.Millisecond, quiet, false, BottleneckGenerator, []string{"95% of its 1 core", "saturated"}},
		{"late, others on its CPU", true, 3_000_000, 0, 3 * time.Second, stats.MachineUse{Known: true, CPUs: 1, Others: 0.6, Pressure: 0.8},
			false, BottleneckOthers, []string{"other processes used 60% of hail's 1 CPU", "CPU pressure 80%", "taskset"}},
		{"waiting for connections", true, 100_000, 20_000_000, time.Second, quiet, false, BottleneckTarget,
			[]string{"500 of 1000 requests (50%) waited for a free connection because all 10", "the target sustained", "raising -c raises the offered concurrency, not the target's capacity"}},
		{"closed, comfortable", false, 0, 0, time.Second, quiet, false, BottleneckNone, []string{"the target set the pace"}},
		{"closed, stalled", false, 0, 0, time.Second, quiet, true, BottleneckTarget, []string{"the target stalled for about 2 s (from 3 s", "use -q"}},
		{"closed, saturated", false, 0, 0, 9500 * time.Millisecond, quiet, false, BottleneckGenerator, []string{"saturated", "hail's limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tot := stats.NewTotals()
			for i := range 1000 {
				wait := int64(0)
				if i%2 == 1 {
					wait = tc.waitNs
				}
				if tc.open {
					_ = tot.Lag.RecordValue(tc.lagNs)
					_ = tot.ConnWait.RecordValue(wait)
					if wait > 0 {
						tot.Queued++
						tot.QueueWait += wait
					}
				}
				_ = tot.LatencyOK.RecordValue(1e6 + wait)
				tot.LatencySum += 1e6 + wait
			}
			tot.Status[200] = 1000
			var series []stats.Second
			for i := range 10 {
				s := stats.Second{Index: i, Span: 1, Requests: 100}
				if tc.stall && (i == 3 || i == 4) {
					s.Requests, s.InFlight = 0, 10
				}
				series = append(series, s)
			}
			rate := 0.0
			if tc.open {
				rate = 100
			}
			r := Build(Input{Totals: tot, Series: series, Elapsed: 10 * time.Second, Cores: 1, Usage: stats.Usage{User: tc.cpu},
				Open: tc.open, Rate: rate, Version: "test", Machine: tc.machine, Connections: 10})
			v := r.Hail.Verdict
			if v.Bottleneck != tc.kind {
				t.Fatalf("bottleneck %q, want %q: %q", v.Bottleneck, tc.kind, v.Reasons)
			}
			generatorSide := tc.kind == BottleneckGenerator || tc.kind == BottleneckOthers || tc.kind == BottleneckWakeup
			if v.GeneratorLimited != generatorSide {
				t.Errorf("generator_limited %v for %s", v.GeneratorLimited, tc.kind)
			}
			all := strings.Join(v.Reasons, " | ")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("reasons %q lack %q", all, w)
				}
			}
		})
	}
}
