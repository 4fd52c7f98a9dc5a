package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// The bottleneck kinds of a Verdict.
const (
	// BottleneckNone: nothing but the intended load limited the test.
	BottleneckNone = "none"
	// BottleneckTarget: the target was the limit (every connection busy,
	// or it stalled).
	BottleneckTarget = "target"
	// BottleneckGenerator: hail's own CPU was the limit.
	BottleneckGenerator = "generator"
	// BottleneckOthers: other processes (or the hypervisor) took hail's CPU.
	BottleneckOthers = "other-processes"
	// BottleneckWakeup: an otherwise idle machine woke hail late.
	BottleneckWakeup = "timer-wakeup"
)

// Thresholds of the verdict that the live view shows too.
const (
	// Late is the p99 of hail's own lateness (or of a connection wait) past
	// which requests are late.
	Late = time.Millisecond
	// SaturatedCPU is hail's CPU as a share of its cores at which the
	// generator is saturated.
	SaturatedCPU = 0.9
)

// Thresholds of the verdict.
const (
	lateP99      = float64(Late) / float64(time.Second) // Late in seconds, as Evidence has it
	rateShort    = 0.95                                 // achieved under this share of -q falls short
	saturatedCPU = SaturatedCPU
	busyCPU      = 0.5 // under this, hail was not busy: lateness is not its load
	othersShare  = 0.2 // others' share of hail's CPUs that counts as contention
	stealShare   = 0.1 // stolen share that counts as contention
	quietOthers  = 0.1 // the machine is otherwise idle below these
	quietSteal   = 0.05
	queuedShare  = 0.05 // requests that waited for a connection, as a share of those sent
)

// verdict names the run's bottleneck with its evidence.
func verdict(in Input, r *Result) Verdict {
	e := evidence(in, r)
	kind := Classify(e)
	return Verdict{Bottleneck: kind, Reasons: reasons(kind, e, in, r), GeneratorLimited: GeneratorSide(kind)}
}

// GeneratorSide reports whether a bottleneck kind is on the generator's
// side (hail's own CPU, other processes taking it, late wake-ups): what
// Verdict.GeneratorLimited says.
func GeneratorSide(kind string) bool {
	switch kind {
	case BottleneckGenerator, BottleneckOthers, BottleneckWakeup:
		return true
	}
	return false
}

// Short reports whether an open-model run achieved less than its -q.
func (e Evidence) Short() bool {
	return e.Open && e.Rate > 0 && e.Achieved > 0 && e.Achieved < rateShort*e.Rate
}

// Evidence is what the bottleneck is judged on; the final report fills it
// from the whole run, the live view from its last few seconds.
type Evidence struct {
	Open bool
	// OwnP99 and WaitP99 are the p99 of hail's own send lateness and of the
	// wait for a free connection, seconds (open model).
	OwnP99, WaitP99 float64
	// Queued of Sent requests waited for a free connection.
	Queued, Sent int64
	// Rate is -q (0: none or ramped); Achieved the rate sent (0: unknown).
	Rate, Achieved float64
	// CPU is hail's CPU as a share of its cores.
	CPU float64
	// Machine is what happened on hail's CPUs.
	Machine stats.MachineUse
	// Stalled is the longest stretch, seconds, in which no request ended
	// while some were in flight (closed model).
	Stalled float64
}

// Classify names the bottleneck the evidence points at, in this order:
//
//  1. hail's own CPU at 90% of its cores or more: the generator (a saturated
//     generator also leaves responses unread, so its connections look busy:
//     it cannot vouch for anything else);
//  2. other processes (or the hypervisor) using a fifth or more of hail's
//     CPUs while those were full, with requests late or waiting: other
//     processes;
//  3. requests waiting for a free connection (every one had a request in
//     flight) more than they were late otherwise, or (closed model) a stall
//     of a second or more: the target;
//  4. hail late with connections free: other processes if they used its
//     CPUs, the operating system's wake-ups if the machine was otherwise
//     idle and hail mostly idle, else hail's own work: the generator;
//  5. otherwise none.
func Classify(e Evidence) string {
	m := e.Machine
	contention := m.Known && (m.Others >= othersShare || m.Steal >= stealShare)
	full := e.CPU+m.Others+m.Steal >= saturatedCPU
	backpressure := e.Open && (e.WaitP99 > lateP99 || (e.Sent > 0 && float64(e.Queued) > queuedShare*float64(e.Sent) && e.WaitP99 > e.OwnP99))
	late := e.Open && e.OwnP99 > lateP99
	short := e.Short()
	switch {
	case e.CPU >= saturatedCPU:
		return BottleneckGenerator
	case contention && full && (late || backpressure || short || !e.Open):
		return BottleneckOthers
	case backpressure && e.WaitP99 >= e.OwnP99, !e.Open && e.Stalled >= 1:
		return BottleneckTarget
	case !late && !short:
		return BottleneckNone
	case contention:
		return BottleneckOthers
	case e.CPU < busyCPU && m.Known && m.Others < quietOthers && m.Steal < quietSteal:
		return BottleneckWakeup
	}
	return BottleneckGenerator
}

// evidence gathers the whole run's evidence.
func evidence(in Input, r *Result) Evidence {
	h := &r.Hail
	e := Evidence{Open: in.Open, OwnP99: h.SendDelay.Own.P99, WaitP99: h.SendDelay.ConnWait.P99,
		Queued: h.Counts.Queued, Sent: h.Counts.Sent, Rate: in.Rate, CPU: h.Generator.Utilization, Machine: in.Machine}
	if in.Rate > 0 && r.Summary.Total > 0 && !in.Interrupted {
		e.Achieved = float64(h.Counts.Sent) / r.Summary.Total
	}
	if !in.Open {
		_, e.Stalled = longestStall(in.Series)
	}
	return e
}

// reasons are the sentences, with numbers, behind a verdict of kind.
func reasons(kind string, e Evidence, in Input, r *Result) []string {
	h := &r.Hail
	c := h.Counts
	own, wait := h.SendDelay.Own, h.SendDelay.ConnWait
	m := in.Machine
	var out []string
	if e.Open && e.OwnP99 > lateP99 && kind != BottleneckNone {
		out = append(out, fmt.Sprintf("hail's own lateness p99 %s exceeds 1ms (max %s): it did not send on time although connections were free", fmtDur(own.P99), fmtDur(own.Max)))
	}
	switch kind {
	case BottleneckTarget:
		if !e.Open {
			from, secs := longestStall(in.Series)
			return append(out, fmt.Sprintf("the target stalled for about %.0f s (from %d s: almost no request completed while %d were in flight); the closed model does not measure the requests that were not sent during a stall — use -q",
				secs, in.Series[from].Index, in.Series[from].InFlight))
		}
		out = append([]string{fmt.Sprintf("%d of %d requests (%.0f%%) waited for a free connection because all %d had a request in flight: wait p99 %s, max %s",
			c.Queued, c.Sent, pct(c.Queued, c.Sent), in.Connections, fmtDur(wait.P99), fmtDur(wait.Max)), sustained(in, r)}, out...)
		if c.Unsent > 0 {
			out = append(out, fmt.Sprintf("%d intended requests were still waiting when the run stopped (%s): unsent, not counted as requests", c.Unsent, h.UnsentReason))
		}
	case BottleneckOthers:
		out = append(out, fmt.Sprintf("other processes used %.0f%% of hail's %d CPU(s)%s while hail used %.0f%%: they took its CPU; pin hail to cores of its own (taskset) or stop what else runs there",
			100*m.Others, m.CPUs, contentionDetail(m), 100*e.CPU))
	case BottleneckGenerator:
		msg := fmt.Sprintf("hail's own CPU was %.0f%% of its %d core(s)", 100*e.CPU, h.Generator.Cores)
		if e.CPU >= saturatedCPU {
			msg += ": the generator was saturated"
		} else if m.Known {
			msg += fmt.Sprintf(" (others %.0f%%%s): its own work delayed sends", 100*m.Others, contentionDetail(m))
		}
		if e.Open {
			msg += "; give it more cores (or shards) or lower -q"
		} else {
			msg += "; the request rate is hail's limit, not the target's: give it more cores or shards"
		}
		out = append(out, msg)
	case BottleneckWakeup:
		out = append(out, fmt.Sprintf("with its CPU %.0f%% busy and the machine otherwise idle (others %.0f%% of its CPUs, steal %.0f%%), this is the OS waking an idle generator late (idle wake-up latency, common in VMs at low rates), not load; latencies count from intended send times, so they include it",
			100*e.CPU, 100*m.Others, 100*m.Steal))
	case BottleneckNone:
		if e.Open {
			return []string{fmt.Sprintf("hail sent on time: own lateness p99 %s, %d requests (%.1f%%) waited for a connection (p99 %s), its CPU %.0f%% of %d core(s)",
				fmtDur(own.P99), c.Queued, pct(c.Queued, c.Sent), fmtDur(wait.P99), 100*e.CPU, h.Generator.Cores)}
		}
		return []string{fmt.Sprintf("closed model: the target set the pace; hail's CPU %.0f%% of %d core(s)", 100*e.CPU, h.Generator.Cores)}
	}
	if e.Short() {
		out = append(out, fmt.Sprintf("achieved %.1f req/s, %.0f%% of the -q %g target", e.Achieved, 100*e.Achieved/e.Rate, e.Rate))
	}
	return out
}

// contentionDetail is the steal and pressure part of a sentence.
func contentionDetail(m stats.MachineUse) string {
	s := fmt.Sprintf(", steal %.0f%%", 100*m.Steal)
	if m.Pressure >= 0 {
		s += fmt.Sprintf(", CPU pressure %.0f%%", 100*m.Pressure)
	}
	return s
}

// sustained says what the target sustained at this concurrency.
func sustained(in Input, r *Result) string {
	c := r.Hail.Counts
	rate := 0.0
	if r.Summary.Total > 0 {
		rate = float64(c.Sent) / r.Summary.Total
	}
	msg := fmt.Sprintf("the target sustained %.1f req/s at this concurrency", rate)
	if in.Connections > 0 {
		// Service time: from a request's send to its first response byte.
		svc := r.Details.FirstByte.Average
		if svc > 0 {
			msg += fmt.Sprintf(" (≈ %d connections / %s mean service time = %.1f req/s)", in.Connections, fmtDur(svc), float64(in.Connections)/svc)
		}
	}
	if in.Rate > 0 {
		msg += fmt.Sprintf(" against -q %g", in.Rate)
	}
	return msg + "; raising -c raises the offered concurrency, not the target's capacity"
}

// longestStall finds the longest run of whole seconds in which (almost) no
// request ended while some were in flight: its first second and its
// length. A second counts as stalled when it ended with requests in flight
// and fewer than 5% of the run's median second ended in it (a stall seldom
// starts on a second's boundary: the second it starts in has a few).
func longestStall(series []stats.Second) (from int, secs float64) {
	var full []int64
	for _, s := range series {
		if s.Span >= 1 {
			full = append(full, s.Requests)
		}
	}
	if len(full) == 0 {
		return 0, 0
	}
	slices.Sort(full)
	median := full[len(full)/2]
	start, run := 0, 0.0
	for i, s := range series {
		if s.Requests*20 <= median && s.InFlight > 0 && s.Span >= 1 {
			if run == 0 {
				start = i
			}
			run += s.Span
			if run > secs {
				from, secs = start, run
			}
			continue
		}
		run = 0
	}
	return from, secs
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Headline is the verdict's first line, as every report prints it, and
// whether it is a warning.
func (v Verdict) Headline() (string, bool) {
	switch v.Bottleneck {
	case BottleneckTarget:
		return "Bottleneck: the target (not hail):", false
	case BottleneckGenerator:
		return "WARNING: the generator, not the target, limited this test (hail's own CPU):", true
	case BottleneckOthers:
		return "WARNING: the generator, not the target, limited this test (other processes took hail's CPU):", true
	case BottleneckWakeup:
		return "WARNING: the generator, not the target, limited this test (the OS woke an idle hail late):", true
	}
	return "Bottleneck: none: hail kept up, the numbers measure the target at the load asked for:", false
}

// accounting is the line that accounts for every intended request.
func accounting(h *Hail) string {
	c := h.Counts
	s := fmt.Sprintf("%d intended, %d sent", c.Intended, c.Sent)
	if c.Unsent > 0 {
		why := h.UnsentReason
		if why == "" {
			why = "the run ended"
		}
		s += fmt.Sprintf(", %d unsent (%s: still in hail, not counted as requests)", c.Unsent, why)
	} else {
		s += ", 0 unsent"
	}
	if c.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped (no step could be served)", c.Skipped)
	}
	return s
}

// sendDelay describes the open model's send delay in d's unit.
func sendDelay(h *Hail, d func(float64) string) (own, wait string) {
	o, w := h.SendDelay.Own, h.SendDelay.ConnWait
	own = fmt.Sprintf("p50 %s, p99 %s, p99.9 %s, max %s", d(o.P50), d(o.P99), d(o.P999), d(o.Max))
	wait = fmt.Sprintf("p50 %s, p99 %s, max %s; %d requests (%.1f%%) waited, all connections busy", d(w.P50), d(w.P99), d(w.Max),
		h.Counts.Queued, pct(h.Counts.Queued, h.Counts.Sent))
	return own, wait
}
