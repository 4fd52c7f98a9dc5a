package report

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// Each bottleneck kind from its evidence: late sends on an otherwise idle
// machine are the operating system's wake-ups, late sends while hail is busy
// are its own load, late sends while others use its CPUs are contention, a
// wait for connections is the target, and on-time sends are nobody's.
func TestVerdictKinds(t *testing.T) {
	t.Parallel()
	quiet := stats.MachineUse{Known: true, CPUs: 1, Others: 0.02, Pressure: 0.01}
	busy := stats.MachineUse{Known: true, CPUs: 1, Others: 0.6, Pressure: 0.8}
	serve := &result.TargetUse{PID: 4242, Command: "hail", Source: "loopback listener", OnHailCPUs: 0.55, MeanCPU: 0.55}
	for _, tc := range []struct {
		name    string
		open    bool
		lagNs   int64 // own lateness of every request (closed: after the previous response); 0 in the closed model: none measured
		waitNs  int64 // connection wait of every other request
		svcNs   int64 // time to first byte of every request (0: 1 ms)
		cpu     time.Duration
		machine stats.MachineUse
		target  *result.TargetUse
		stall   bool   // closed: 2 s without a completion
		fail    string // every request ends in this error kind instead of a response
		kind    string
		taken   string
		want    []string // in the reasons
	}{
		{name: "on time", open: true, lagNs: 200_000, cpu: time.Second, machine: quiet, kind: result.BottleneckNone, want: []string{"hail sent on time"}},
		{name: "late and idle", open: true, lagNs: 3_000_000, cpu: time.Second, machine: quiet, kind: result.BottleneckWakeup,
			want: []string{"exceeds 1ms", "10% busy and nobody taking its CPUs", "the OS waking an idle generator late"}},
		{name: "late, idle, the machine a little busy", open: true, lagNs: 2_000_000, cpu: 10 * time.Millisecond, machine: stats.MachineUse{Known: true, CPUs: 1, Others: 0.16, Pressure: 0.01},
			kind: result.BottleneckWakeup, want: []string{"0% busy and nobody taking its CPUs (others 16%"}},
		{name: "late and busy", open: true, lagNs: 3_000_000, cpu: 7 * time.Second, machine: quiet, kind: result.BottleneckGenerator,
			want: []string{"exceeds 1ms", "70% of its 1 core", "its own work delayed sends"}},
		{name: "late and saturated", open: true, lagNs: 3_000_000, cpu: 9500 * time.Millisecond, machine: quiet, kind: result.BottleneckGenerator,
			want: []string{"95% of its 1 core", "saturated"}},
		{name: "late, others on its CPU", open: true, lagNs: 3_000_000, cpu: 3 * time.Second, machine: busy, kind: result.BottleneckOthers,
			want: []string{"other processes used 60% of hail's 1 CPU", "CPU pressure 80%", "taskset"}},
		{name: "on time, others on its CPU", open: true, lagNs: 200_000, cpu: time.Second, machine: busy, kind: result.BottleneckNone,
			want: []string{"hail sent on time", "other processes used 60%", "but hail was not slowed by them"}},
		{name: "waiting for connections", open: true, lagNs: 100_000, waitNs: 20_000_000, svcNs: 100_000_000, cpu: time.Second, machine: quiet, kind: result.BottleneckTarget,
			want: []string{"500 of 1000 requests (50%) waited for a free connection because all 10", "the target sustained 100.0 req/s at this concurrency (≈ 10 connections / 99.98ms mean service time = 100.0 req/s)",
				"raising -c raises the offered concurrency, not the target's capacity"}},
		{name: "waiting for connections in spells", open: true, lagNs: 100_000, waitNs: 20_000_000, cpu: time.Second, machine: quiet, kind: result.BottleneckTarget,
			want: []string{"500 of 1000 requests (50%) waited for a free connection because all 10", "the target held the connections in spells, not steadily"}},
		{name: "waiting for connections on a busy machine", open: true, lagNs: 110_000, waitNs: 1500_000_000, cpu: 100 * time.Millisecond, machine: busy,
			kind: result.BottleneckTarget, want: []string{"waited for a free connection", "hail's own lateness p99 110.0µs", "but hail was not slowed by them"}},
		{name: "late on a busy machine while a stall held every connection", open: true, lagNs: 3_000_000, waitNs: 1_000_000_000, cpu: 100 * time.Millisecond, machine: busy,
			kind: result.BottleneckTarget, want: []string{"500 of 1000 requests (50%) waited for a free connection because all 10", "wait p99 1.000s",
				"the target held the connections in spells, not steadily: 100.0 req/s went out against -q 100, and requests waited for a connection up to 1.000s while its mean service time was 1.00ms",
				"other processes used 60% of hail's 1 CPU(s), steal 0%, CPU pressure 80% and made hail late (own lateness p99 3.00ms, max 3.00ms), far less than the requests waited for a connection (p99 1.000s)"}},
		{name: "late, and bursts of late sends filled the connections", open: true, lagNs: 60_000_000, waitNs: 80_000_000, cpu: time.Second, machine: busy,
			kind: result.BottleneckOthers, want: []string{"exceeds 1ms", "but hail held the connections, not the target: it served each request in 1.00ms, enough for about 9998 req/s over 10 connections, and 100.0 req/s went out"}},
		{name: "late with free connections, the target took its CPU", open: true, lagNs: 3_000_000, cpu: time.Second, machine: quiet, target: serve,
			kind: result.BottleneckOthers, taken: "target", want: []string{"exceeds 1ms", "the target's own process (pid 4242, hail) used 55%", "found listening on the target's port"}},
		{name: "late with free connections, the hypervisor stole most", open: true, lagNs: 3_000_000, cpu: time.Second,
			machine: stats.MachineUse{Known: true, CPUs: 1, Others: 0.03, Steal: 0.3, Pressure: 0.4},
			target:  &result.TargetUse{PID: 4242, Command: "hail", Source: "loopback listener", OnHailCPUs: 0.22, MeanCPU: 0.22},
			kind:    result.BottleneckOthers, taken: result.TakenByHypervisor,
			want: []string{"exceeds 1ms", "the hypervisor took 30% of hail's 1 CPU(s) (steal: other guests ran on them; other processes here 3%, CPU pressure 40%)"}},
		{name: "late, the hypervisor stole a tenth, others less", open: true, lagNs: 3_000_000, cpu: time.Second,
			machine: stats.MachineUse{Known: true, CPUs: 2, Others: 0.05, Steal: 0.12, Pressure: -1},
			kind:    result.BottleneckOthers, taken: result.TakenByHypervisor, want: []string{"the hypervisor took 12% of hail's 2 CPU(s) (steal: other guests ran on them; other processes here 5%) while"}},
		{name: "late, others above the hypervisor's tenth", open: true, lagNs: 3_000_000, cpu: time.Second,
			machine: stats.MachineUse{Known: true, CPUs: 1, Others: 0.25, Steal: 0.12, Pressure: 0.3},
			kind:    result.BottleneckOthers, want: []string{"other processes used 25% of hail's 1 CPU(s), steal 12%"}},
		{name: "closed, comfortable", cpu: time.Second, machine: quiet, kind: result.BottleneckNone, want: []string{"the target set the pace"}},
		{name: "closed, on time on a busy machine", lagNs: 300_000, cpu: 200 * time.Millisecond, machine: busy, kind: result.BottleneckNone,
			want: []string{"hail sent each next request on time (own lateness p99 300.0µs", "but hail was not slowed"}},
		{name: "closed, late, others on its CPU", lagNs: 4_000_000, cpu: 2 * time.Second, machine: busy, kind: result.BottleneckOthers,
			want: []string{"own lateness p99 4.00ms exceeds 1ms", "after the previous response arrived", "other processes used 60%"}},
		{name: "closed, late, the target shares its CPUs", lagNs: 4_000_000, cpu: 3 * time.Second, machine: quiet, target: serve, kind: result.BottleneckTarget,
			want: []string{"waiting for CPUs the target used", "(pid 4242, hail) used 55% of hail's 1 CPU", "pin them apart", "runs on hail's machine"}},
		{name: "closed, late, the target shares its CPUs on a host that steals", lagNs: 4_000_000, cpu: 3 * time.Second,
			machine: stats.MachineUse{Known: true, CPUs: 1, Others: 0.02, Steal: 0.12, Pressure: 0.3}, target: serve, kind: result.BottleneckTarget,
			want: []string{"waiting for CPUs the target used", "(pid 4242, hail) used 55% of hail's 1 CPU", "pin them apart"}},
		{name: "closed, late, the target's fifth under others and steal together", lagNs: 4_000_000, cpu: 3 * time.Second,
			machine: stats.MachineUse{Known: true, CPUs: 1, Others: 0.15, Steal: 0.08, Pressure: 0.3},
			target:  &result.TargetUse{PID: 4242, Command: "hail", Source: "loopback listener", OnHailCPUs: 0.22, MeanCPU: 0.22}, kind: result.BottleneckTarget,
			want: []string{"waiting for CPUs the target used", "used 22% of hail's 1 CPU"}},
		{name: "closed, stalled", cpu: time.Second, machine: quiet, stall: true, kind: result.BottleneckTarget, want: []string{"the target stalled for about 2 s (from 3 s", "use -q"}},
		{name: "closed, saturated", cpu: 9500 * time.Millisecond, machine: quiet, kind: result.BottleneckGenerator, want: []string{"saturated", "hail's limit"}},
		{name: "nothing listening", cpu: time.Second, machine: busy, fail: "connection refused", kind: result.BottleneckTarget,
			want: []string{"unreachable: none of the 1000 requests could be sent: connection refused ×1000", "nothing is listening on 127.0.0.1:1"}},
		{name: "never answering", cpu: time.Second, machine: busy, fail: "request timeout", kind: result.BottleneckTarget,
			want: []string{"no response: the 1000 requests sent all failed (request timeout ×1000)", "answered none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tot := stats.NewTotals()
			for i := range 1000 {
				wait := int64(0)
				if i%2 == 1 {
					wait = tc.waitNs
				}
				if tc.open || tc.lagNs > 0 {
					_ = tot.Lag.RecordValue(tc.lagNs)
				}
				if tc.open {
					_ = tot.ConnWait.RecordValue(wait)
					if wait > 0 {
						tot.Queued++
						tot.QueueWait += wait
					}
				}
				if tc.fail == "" {
					svc := cmp.Or(tc.svcNs, 1e6) // 10 connections / 1 ms: the target serves 10,000/s
					_ = tot.LatencyOK.RecordValue(svc + wait)
					_ = tot.FirstByte.RecordValue(svc)
					tot.LatencySum += svc + wait
				}
			}
			switch k, _ := stats.KindByName(tc.fail); {
			case tc.fail == "":
				tot.Status[200] = 1000
			case k == stats.ErrConnectRefused:
				tot.Errors[k], tot.NotSent = 1000, 1000
			default:
				tot.Errors[k] = 1000
				for range 1000 {
					_ = tot.Failed.RecordValue(2e9)
				}
			}
			var series []stats.Second
			for i := range 10 {
				s := stats.Second{Index: i, Span: time.Second, Requests: 100}
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
				Open: tc.open, Rate: rate, Version: "test", Machine: tc.machine, Connections: 10, Target: tc.target, Addr: "127.0.0.1:1"})
			v := r.Hail.Verdict
			if v.Bottleneck != tc.kind || v.TakenBy != tc.taken {
				t.Fatalf("bottleneck %q (taken by %q), want %q (%q): %q", v.Bottleneck, v.TakenBy, tc.kind, tc.taken, v.Reasons)
			}
			if head, _ := Headline(v); tc.kind == result.BottleneckOthers && !strings.Contains(head, map[string]string{
				"": "(other processes took hail's CPU)", result.TakenByTarget: "(the target's own process took hail's CPU)", result.TakenByHypervisor: "(the hypervisor took hail's CPU)"}[tc.taken]) {
				t.Errorf("headline %q for cpu_taken_by %q", head, tc.taken)
			}
			generatorSide := tc.kind == result.BottleneckGenerator || tc.kind == result.BottleneckOthers || tc.kind == result.BottleneckWakeup
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

// A stall is seconds without progress: for streams, without events too. A
// closed-model run of 6-second streams ends none in its first 6 seconds
// while their tokens flow; streams that stop sending for 2 s stall.
func TestLongestStallOfStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		quiet    []int // seconds with no event
		from     int
		wantSecs float64
	}{
		{"tokens flowing, no stream ended yet", nil, 0, 0},
		{"tokens stopped for 2 s", []int{3, 4}, 3, 2},
	} {
		var series []stats.Second
		for i := range 20 {
			s := stats.Second{Index: i, Span: time.Second, Events: 20000, InFlight: 1000}
			if i >= 6 {
				s.Requests = 150
			}
			if slices.Contains(tc.quiet, i) {
				s.Events = 0
			}
			series = append(series, s)
		}
		if from, secs := longestStall(series); secs != tc.wantSecs || secs > 0 && from != tc.from {
			t.Errorf("%s: a stall of %v s from %d, want %v s from %d", tc.name, secs, from, tc.wantSecs, tc.from)
		}
	}
}
