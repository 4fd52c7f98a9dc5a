package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
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
	busyCPU      = 0.5  // under this, hail was not busy: lateness is not its load
	othersShare  = 0.2  // others' share of hail's CPUs that counts as contention
	stealShare   = 0.1  // stolen share that counts as contention
	queuedShare  = 0.05 // requests that waited for a connection, as a share of those sent
	// servedShare: with connections full, a late hail whose target turned
	// them over at less than this share of what its service time allows
	// (Little's law: connections / mean time to first byte; a target that
	// holds the connections turns them over at nearly all of it) held a
	// part of every cycle itself.
	servedShare = 0.8
)

// hailBound reports whether hail, not the target, held the connections
// that requests waited for: the requests sent fell well short of what the
// target could serve over them in its service time (Capacity), and either
// short of what was asked too (hail fell behind: a backlog it was slow to
// send) or the waits were no longer than hail's own freezes could make
// them: a freeze as long as hail's longest lateness leaves a backlog that
// a target with a quarter of headroom above the rate drains in four times
// that, so up to ten times it. Waits longer than that, in a run that sent
// what was asked, are the target's: a stall that held every connection,
// whose few long requests barely move the mean service time.
func (e Evidence) hailBound() bool {
	if e.Capacity <= 0 || e.Achieved <= 0 || e.Achieved >= servedShare*e.Capacity {
		return false
	}
	return e.behind() || e.WaitP99 <= freezeSpan*e.OwnMax
}

// behind reports whether hail sent well short of -q (under servedShare of
// it): it fell behind, whatever held it.
func (e Evidence) behind() bool {
	return e.Rate > 0 && e.Achieved < servedShare*e.Rate
}

// freezeSpan bounds the waits for a connection that hail's own freezes
// explain, in multiples of its longest lateness (hailBound); spellSpan is
// how many mean service times a wait must exceed to be a stall's (held).
const freezeSpan, spellSpan = 10, 10

// verdict names the run's bottleneck with its evidence.
func verdict(in Input, r *result.Result) result.Verdict {
	e := evidence(in, r)
	kind := Classify(e)
	v := result.Verdict{Bottleneck: kind, Reasons: reasons(kind, e, in, r), GeneratorLimited: GeneratorSide(kind), ReadLate: e.ReadLate()}
	if l := r.Hail.LLM; l != nil {
		l.ITLAffected = v.ReadLate
	}
	if kind == result.BottleneckOthers {
		v.TakenBy = e.TakenBy()
	}
	return v
}

// TakenBy names who took hail's CPUs in an other-processes verdict: the
// largest taker of the three it measures — the target's own process
// ("target", when it took a fifth or more), the hypervisor's steal
// ("hypervisor", when a tenth or more) — else "" (other processes).
func (e Evidence) TakenBy() string {
	m := e.Machine
	switch {
	case e.TargetCPU >= othersShare && e.TargetCPU >= m.Others && e.TargetCPU >= m.Steal:
		return result.TakenByTarget
	case m.Steal >= stealShare && m.Steal > m.Others:
		return result.TakenByHypervisor
	}
	return ""
}

// GeneratorSide reports whether a bottleneck kind is on the generator's
// side (hail's own CPU, other processes taking it, late wake-ups): what
// Verdict.GeneratorLimited says.
func GeneratorSide(kind string) bool {
	switch kind {
	case result.BottleneckGenerator, result.BottleneckOthers, result.BottleneckWakeup:
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
	// OwnP99 and OwnMax are hail's own lateness, seconds: in the open
	// model its send lateness with a connection free (the send delay less
	// the wait for one); in the closed model the time from a response's
	// arrival (its kernel receive time) to the next request's send on its
	// connection. OwnSamples is how many requests it was measured on.
	OwnP99, OwnMax float64
	OwnSamples     int64
	// WaitP99 is the p99 of the wait for a free connection, seconds (open
	// model): the target's backpressure.
	WaitP99 float64
	// Queued of Sent requests waited for a free connection; NotSent failed
	// before they were sent (the connection could not be set up); Failed
	// were sent and failed (not cut off by the run's end); Responses came.
	Queued, Sent, NotSent, Failed, Responses int64
	// Rate is -q (0: none or ramped); Achieved the rate sent (0: unknown).
	Rate, Achieved float64
	// Capacity estimates what the target could serve at this concurrency:
	// connections / its mean time to first byte (req/s; 0: unknown).
	Capacity float64
	// CPU is hail's CPU as a share of its cores.
	CPU float64
	// Machine is what happened on hail's CPUs; Others leaves the target
	// out when hail knew its process.
	Machine stats.MachineUse
	// TargetCPU is the share of hail's CPUs the target's own process used
	// (0: unknown, or it runs elsewhere).
	TargetCPU float64
	// Stalled is the longest stretch, seconds, in which no request ended
	// while some were in flight (closed model).
	Stalled float64
	// ReadLagP99 and ReadLagMax are hail's read lag of streaming responses'
	// events (kernel arrival to hail reading the event), seconds, over
	// ReadLagSamples events; ReadGap is the median gap between the events
	// (between tokens for hail llm) it is judged against (ReadLate).
	ReadLagP99, ReadLagMax, ReadGap float64
	ReadLagSamples                  int64
	readTokens                      bool // ReadGap is the inter-token latency
}

// Classify names the bottleneck the evidence points at. The generator-side
// kinds need evidence that hail itself was slowed — its own lateness p99
// above 1 ms (Late), or a stream's events read late (ReadLate) — and CPU
// pressure, steal and other processes' CPU
// only say why; they are never a cause on their own. In order:
//
//  1. no response at all, and requests that failed (none could be sent:
//     every connection was refused or timed out; or every one sent
//     failed): the target, unreachable or not answering;
//  2. hail's own CPU at 90% of its cores or more: the generator (a saturated
//     generator also leaves responses unread, so its connections look busy:
//     it cannot vouch for anything else);
//  3. requests waited for a free connection (every one had a request in
//     flight) longer than hail was late: the target's backpressure
//     outranks everything below — unless hail was late and under 80% of
//     the requests went out that the target's service time allows over
//     the connections (connections / mean time to first byte): then hail,
//     not the target, held the connections for part of every cycle (a
//     backlog it was slow to send, or bursts of late sends); in the closed
//     model, a stall of a second or more that hail's own lateness does not
//     explain: the target;
//  4. hail late (own lateness p99 > 1 ms, or streams read late): in the
//     closed model, the target if its own process took a fifth or more of
//     hail's CPUs and more than other processes and the hypervisor
//     together (the rate is what the two reach together on shared CPUs);
//     other processes if they took a fifth or more of its CPUs (or the
//     hypervisor a tenth); then the target's own process taking a fifth:
//     in the open model other processes too (its latencies carry hail's
//     lateness), in the closed model the target; the
//     operating system's wake-ups if hail was mostly idle (under half its
//     CPU) and nobody took its CPUs; else hail's own work: the generator;
//  5. otherwise none: what limited the test was the load asked for.
func Classify(e Evidence) string {
	m := e.Machine
	late := e.OwnSamples > 0 && e.OwnP99 > lateP99
	backpressure := e.Open && (e.WaitP99 > lateP99 || (e.Sent > 0 && float64(e.Queued) > queuedShare*float64(e.Sent) && e.WaitP99 > e.OwnP99))
	if backpressure && late && e.hailBound() {
		// The target served each request in a fraction of the time its
		// connections were held: hail's late sends, not the target, held
		// them (a backlog, or bursts of late sends).
		backpressure = false
	}
	switch {
	case e.Responses == 0 && e.NotSent+e.Failed > 0:
		return result.BottleneckTarget
	case e.CPU >= saturatedCPU:
		return result.BottleneckGenerator
	case backpressure && e.WaitP99 >= e.OwnP99:
		return result.BottleneckTarget
	case !e.Open && e.Stalled >= 1 && e.OwnMax < e.Stalled/2:
		return result.BottleneckTarget
	case !late && !e.ReadLate():
		return result.BottleneckNone
	case !e.Open && e.TargetCPU >= othersShare && e.TargetCPU >= m.Others+m.Steal:
		return result.BottleneckTarget // closed: the rate is what the target and hail reach together on CPUs they share
	case m.Known && (m.Others >= othersShare || m.Steal >= stealShare):
		return result.BottleneckOthers
	case e.TargetCPU >= othersShare && e.Open:
		return result.BottleneckOthers // the target's own process took the CPU hail needed to send on time
	case e.TargetCPU >= othersShare:
		return result.BottleneckTarget // closed, others and steal under their thresholds: as before the first closed case
	case e.CPU < busyCPU && m.Known:
		return result.BottleneckWakeup // hail mostly idle, no one else took its CPUs: the OS woke it late
	}
	return result.BottleneckGenerator
}

// evidence gathers the whole run's evidence.
func evidence(in Input, r *result.Result) Evidence {
	h := &r.Hail
	e := Evidence{Open: in.Open, OwnP99: h.SendDelay.Own.P99.Seconds(), OwnMax: h.SendDelay.Own.Max.Seconds(), OwnSamples: h.SendDelay.Own.Samples,
		WaitP99: h.SendDelay.ConnWait.P99.Seconds(), Queued: h.Counts.Queued, Sent: h.Counts.Sent, NotSent: h.Counts.NotSent,
		Failed: h.AllSent.Failed, Responses: h.Counts.Responses,
		Rate: in.Rate, CPU: h.Generator.Utilization, Machine: in.Machine}
	if in.Target != nil {
		e.TargetCPU = in.Target.OnHailCPUs
	}
	if in.Rate > 0 && r.Summary.Total > 0 && !in.Interrupted {
		e.Achieved = float64(h.Counts.Sent) / r.Summary.Total.Seconds()
	}
	if svc := serviceTime(r); svc > 0 && in.Connections > 0 {
		e.Capacity = float64(in.Connections) / svc
	}
	if !in.Open {
		_, e.Stalled = longestStall(in.Series)
	}
	readLagEvidence(&e, r) // verdict_stream.go
	return e
}

// serviceTime is the mean time a request held its connection, seconds (0:
// unknown): from its send to its first response byte — or, for streams,
// whose head comes at once and whose events follow for as long as the
// server generates them, to the stream's end (hail llm's E2E from the
// send; unknown for other streams).
func serviceTime(r *result.Result) float64 {
	if s := r.Hail.Stream; s != nil && s.Streams > 0 {
		if l := r.Hail.LLM; l != nil {
			return l.E2EFromSend.Mean.Seconds()
		}
		return 0
	}
	return r.Details.FirstByte.Average.Seconds()
}

// reasons are the sentences, with numbers, behind a verdict of kind.
func reasons(kind string, e Evidence, in Input, r *result.Result) []string {
	h := &r.Hail
	c := h.Counts
	own, wait := h.SendDelay.Own, h.SendDelay.ConnWait
	m := in.Machine
	var out []string
	if kind == result.BottleneckTarget && e.Responses == 0 && e.NotSent+e.Failed > 0 {
		return unreachable(in, r)
	}
	if GeneratorSide(kind) && e.OwnSamples > 0 && e.OwnP99 > lateP99 {
		if e.Open {
			out = append(out, fmt.Sprintf("hail's own lateness p99 %s exceeds 1ms (max %s): it did not send on time although connections were free", fmtDur(own.P99.Seconds()), fmtDur(own.Max.Seconds())))
			if e.Queued > 0 && e.WaitP99 > lateP99 && e.hailBound() {
				out = append(out, fmt.Sprintf("%d requests then waited for a connection (p99 %s), but hail held the connections, not the target: it served each request in %s, enough for about %.0f req/s over %d connections, and %.1f req/s went out",
					e.Queued, fmtDur(wait.P99.Seconds()), fmtDur(serviceTime(r)), e.Capacity, in.Connections, e.Achieved))
			}
		} else {
			out = append(out, fmt.Sprintf("hail's own lateness p99 %s exceeds 1ms (max %s): the next request on a connection left that late after the previous response arrived", fmtDur(own.P99.Seconds()), fmtDur(own.Max.Seconds())))
		}
	}
	if e.ReadLate() && GeneratorSide(kind) {
		out = append(out, readLagReason(e))
	}
	switch kind {
	case result.BottleneckTarget:
		if !e.Open && e.OwnP99 > lateP99 && e.TargetCPU >= othersShare && !(e.Stalled >= 1 && e.OwnMax < e.Stalled/2) {
			t := in.Target
			out = append(out, fmt.Sprintf("hail's own lateness p99 %s (max %s): the next request on a connection left that late after the previous response arrived, waiting for CPUs the target used", fmtDur(own.P99.Seconds()), fmtDur(own.Max.Seconds())),
				fmt.Sprintf("the target's own process (pid %d, %s) used %.0f%% of hail's %d CPU(s) while hail used %.0f%%: the rate is what the target and hail reach together on the CPUs they share; pin them apart (taskset) to measure the target alone",
					t.PID, t.Command, 100*e.TargetCPU, m.CPUs, 100*e.CPU))
			break
		}
		if !e.Open {
			from, secs := longestStall(in.Series)
			out = append(out, fmt.Sprintf("the target stalled for about %.0f s (from %d s: almost no request completed while %d were in flight); the closed model does not measure the requests that were not sent during a stall — use -q",
				secs, in.Series[from].Index, in.Series[from].InFlight))
			break
		}
		out = append([]string{fmt.Sprintf("%d of %d requests (%.0f%%) waited for a free connection because all %d had a request in flight: wait p99 %s, max %s; hail's own lateness p99 %s",
			c.Queued, c.Sent, pct(c.Queued, c.Sent), in.Connections, fmtDur(wait.P99.Seconds()), fmtDur(wait.Max.Seconds()), fmtDur(own.P99.Seconds())), held(e, in, r)}, out...)
		if c.Unsent > 0 {
			out = append(out, fmt.Sprintf("%d intended requests were still waiting when the run stopped (%s): unsent, not counted as requests", c.Unsent, h.UnsentReason))
		}
	case result.BottleneckOthers:
		switch t, taken := in.Target, e.TakenBy(); {
		case t != nil && taken == result.TakenByTarget:
			out = append(out, fmt.Sprintf("the target's own process (pid %d, %s) used %.0f%% of hail's %d CPU(s) while hail used %.0f%%: it took hail's CPU, so the numbers measure the target and its load generator competing for one machine; pin them to separate cores (taskset) to measure the target alone",
				t.PID, t.Command, 100*e.TargetCPU, m.CPUs, 100*e.CPU))
		case taken == result.TakenByHypervisor:
			out = append(out, fmt.Sprintf("the hypervisor took %.0f%% of hail's %d CPU(s) (steal: other guests ran on them; other processes here %.0f%%%s) while hail used %.0f%%: this virtual machine's CPUs are shared with its host's other guests; use dedicated cores, or run again when the host is quieter",
				100*m.Steal, m.CPUs, 100*m.Others, pressureDetail(m), 100*e.CPU))
		default:
			out = append(out, fmt.Sprintf("other processes used %.0f%% of hail's %d CPU(s)%s while hail used %.0f%%: they took its CPU; pin hail to cores of its own (taskset) or stop what else runs there",
				100*m.Others, m.CPUs, contentionDetail(m), 100*e.CPU))
		}
	case result.BottleneckGenerator:
		late := e.OwnSamples > 0 && e.OwnP99 > lateP99
		delayed := "sends"
		switch {
		case late && e.ReadLate():
			delayed = "sends and its reads of the streams"
		case e.ReadLate():
			delayed = "its reads of the streams"
		}
		msg := fmt.Sprintf("hail's own CPU was %.0f%% of its %d core(s)", 100*e.CPU, h.Generator.Cores)
		if e.CPU >= saturatedCPU {
			msg += ": the generator was saturated"
		} else if m.Known {
			msg += fmt.Sprintf(" (others %.0f%%%s): its own work delayed %s", 100*m.Others, contentionDetail(m), delayed)
		}
		switch {
		case !late && e.CPU < saturatedCPU: // the streams' pace is the server's: only their measurement suffered
			msg += "; give it more cores (or shards), or fewer streams per core"
		case e.Open:
			msg += "; give it more cores (or shards) or lower -q"
		default:
			msg += "; the request rate is hail's limit, not the target's: give it more cores or shards"
		}
		out = append(out, msg)
	case result.BottleneckWakeup:
		out = append(out, fmt.Sprintf("with its CPU %.0f%% busy and nobody taking its CPUs (others %.0f%% of them, steal %.0f%%), this is the OS waking an idle generator late (idle wake-up latency, common in VMs at low rates), not load; latencies count from intended send times, so they include it",
			100*e.CPU, 100*m.Others, 100*m.Steal))
	case result.BottleneckNone:
		switch {
		case e.Open:
			out = append(out, fmt.Sprintf("hail sent on time: own lateness p99 %s, %d requests (%.1f%%) waited for a connection (p99 %s), its CPU %.0f%% of %d core(s)",
				fmtDur(own.P99.Seconds()), c.Queued, pct(c.Queued, c.Sent), fmtDur(wait.P99.Seconds()), 100*e.CPU, h.Generator.Cores))
		case e.OwnSamples > 0:
			out = append(out, fmt.Sprintf("closed model: the target set the pace; hail sent each next request on time (own lateness p99 %s after a response's arrival), its CPU %.0f%% of %d core(s)",
				fmtDur(own.P99.Seconds()), 100*e.CPU, h.Generator.Cores))
		default:
			out = append(out, fmt.Sprintf("closed model: the target set the pace; hail's CPU %.0f%% of %d core(s)", 100*e.CPU, h.Generator.Cores))
		}
	}
	if e.ReadLate() && !GeneratorSide(kind) {
		out = append(out, readLagReason(e)) // the target limited the run; hail's reads were late all the same
	}
	if context := busyContext(e, m); context != "" && !GeneratorSide(kind) {
		out = append(out, context)
	}
	if note := sharing(in, e); note != "" {
		out = append(out, note)
	}
	if e.Short() {
		out = append(out, fmt.Sprintf("achieved %.1f req/s, %.0f%% of the -q %g target", e.Achieved, 100*e.Achieved/e.Rate, e.Rate))
	}
	return out
}

// busyContext says, when hail was not what limited the run, that the
// machine was busy all the same: context, not a cause ("" when it was
// not). When hail was late all the same (a target whose waits for a
// connection outlasted hail's lateness), it says so.
func busyContext(e Evidence, m stats.MachineUse) string {
	if !m.Known || (m.Others < othersShare && m.Steal < stealShare) {
		return ""
	}
	if e.OwnSamples > 0 && e.OwnP99 > lateP99 {
		return fmt.Sprintf("other processes used %.0f%% of hail's %d CPU(s)%s and made hail late (own lateness p99 %s, max %s), far less than the requests waited for a connection (p99 %s): they slowed hail, the target limited the run",
			100*m.Others, m.CPUs, contentionDetail(m), fmtDur(e.OwnP99), fmtDur(e.OwnMax), fmtDur(e.WaitP99))
	}
	return fmt.Sprintf("other processes used %.0f%% of hail's %d CPU(s)%s, but hail was not slowed by them (its lateness is the evidence that would show it)",
		100*m.Others, m.CPUs, contentionDetail(m))
}

// sharing notes that the target runs on hail's machine ("" when hail did
// not find its process).
func sharing(in Input, e Evidence) string {
	t := in.Target
	if t == nil {
		return ""
	}
	where := "on other CPUs than hail's"
	if t.OnHailCPUs > 0 || e.TargetCPU > 0 {
		where = fmt.Sprintf("and used %.0f%% of hail's CPUs (the target's, not counted as other processes)", 100*t.OnHailCPUs)
	}
	return fmt.Sprintf("the target (pid %d, %s, %s) runs on hail's machine %s; it used %.2f cores on average", t.PID, t.Command, sourceWords(t.Source), where, t.MeanCPU)
}

// sourceWords says how hail knew the target's process, for a sentence.
func sourceWords(source string) string {
	switch source {
	case "hail demo":
		return "hail demo's own server"
	case "loopback listener":
		return "found listening on the target's port"
	case "":
		return "given"
	}
	return "given by " + source
}

// unreachable explains a run none of whose requests could be sent, with
// the likely cause.
func unreachable(in Input, r *result.Result) []string {
	c := r.Hail.Counts
	errs := r.ErrorDistribution
	addr := in.Addr
	if addr == "" {
		addr = "the target"
	}
	kinds := sortedByCount(errs)
	top := ""
	if len(kinds) > 0 {
		top = kinds[0]
	}
	if c.Sent > 0 {
		return []string{fmt.Sprintf("no response: the %d requests sent all failed (%s)%s", c.Sent, countList(errs), notSentPart(c)),
			fmt.Sprintf("%s accepted connections but answered none of them", addr)}
	}
	out := []string{fmt.Sprintf("unreachable: none of the %d requests could be sent: %s", c.NotSent, countList(errs))}
	switch top {
	case stats.ErrConnectRefused.String():
		out = append(out, fmt.Sprintf("nothing is listening on %s: start the target, or check the URL's host and port", addr))
	case stats.ErrConnectTimeout.String():
		out = append(out, fmt.Sprintf("%s did not accept connections within the connect timeout: a firewall dropping them, a host that is down, or an accept backlog that is full", addr))
	case stats.ErrDNS.String():
		out = append(out, "the host name did not resolve: check it, or use --connect-to / an IP address")
	default:
		out = append(out, fmt.Sprintf("every connection to %s failed before a request could be written on it", addr))
	}
	return out
}

// notSentPart is ", N more could not be sent" ("" when none).
func notSentPart(c result.Counts) string {
	if c.NotSent == 0 {
		return ""
	}
	return fmt.Sprintf(", and %d more could not be sent", c.NotSent)
}

// contentionDetail is the steal and pressure part of a sentence.
func contentionDetail(m stats.MachineUse) string {
	return fmt.Sprintf(", steal %.0f%%", 100*m.Steal) + pressureDetail(m)
}

// pressureDetail is the CPU pressure, when the kernel reports it.
func pressureDetail(m stats.MachineUse) string {
	if m.Pressure >= 0 {
		return fmt.Sprintf(", CPU pressure %.0f%%", 100*m.Pressure)
	}
	return ""
}

// held says how the target held the connections: in spells (a run that
// sent what -q asked, whose waits were over spellSpan times the mean
// service time: a stall, which the mean barely shows), else steadily
// (sustained).
func held(e Evidence, in Input, r *result.Result) string {
	svc := serviceTime(r)
	if e.Rate > 0 && !e.behind() && svc > 0 && e.WaitP99 > spellSpan*svc {
		return fmt.Sprintf("the target held the connections in spells, not steadily: %.1f req/s went out against -q %g, and requests waited for a connection up to %s while its mean service time was %s (a stall: every connection held at once); more connections give a stall more requests to hold",
			e.Achieved, e.Rate, fmtDur(r.Hail.SendDelay.ConnWait.Max.Seconds()), fmtDur(svc))
	}
	return sustained(in, r)
}

// sustained says what the target sustained at this concurrency.
func sustained(in Input, r *result.Result) string {
	c := r.Hail.Counts
	rate := 0.0
	if r.Summary.Total > 0 {
		rate = float64(c.Sent) / r.Summary.Total.Seconds()
	}
	msg := fmt.Sprintf("the target sustained %.1f req/s at this concurrency", rate)
	if in.Connections > 0 {
		if svc := serviceTime(r); svc > 0 {
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
// starts on a second's boundary: the second it starts in has a few). A
// second in which streams delivered their events as usual is not stalled,
// though no stream ended in it: a closed-model run of streams longer than
// a second ends none in its first seconds.
func longestStall(series []stats.Second) (from int, secs float64) {
	var full, events []int64
	for _, s := range series {
		if s.Span >= time.Second {
			full, events = append(full, s.Requests), append(events, s.Events)
		}
	}
	if len(full) == 0 {
		return 0, 0
	}
	slices.Sort(full)
	slices.Sort(events)
	median, medianEvents := full[len(full)/2], events[len(events)/2]
	start, run := 0, 0.0
	for i, s := range series {
		if s.Requests*20 <= median && s.Events*20 <= medianEvents && s.InFlight > 0 && s.Span >= time.Second {
			if run == 0 {
				start = i
			}
			run += s.Span.Seconds()
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
func Headline(v result.Verdict) (string, bool) {
	switch v.Bottleneck {
	case result.BottleneckTarget:
		return "Bottleneck: the target (not hail):", false
	case result.BottleneckGenerator:
		if v.ReadLate {
			return "WARNING: the generator, not the target, limited this test (hail read the stream late):", true
		}
		return "WARNING: the generator, not the target, limited this test (hail's own CPU):", true
	case result.BottleneckOthers:
		switch v.TakenBy {
		case result.TakenByTarget:
			return "WARNING: the generator, not the target, limited this test (the target's own process took hail's CPU):", true
		case result.TakenByHypervisor:
			return "WARNING: the generator, not the target, limited this test (the hypervisor took hail's CPU):", true
		}
		return "WARNING: the generator, not the target, limited this test (other processes took hail's CPU):", true
	case result.BottleneckWakeup:
		return "WARNING: the generator, not the target, limited this test (the OS woke an idle hail late):", true
	}
	return "Bottleneck: none: hail kept up, the numbers measure the target at the load asked for:", false
}

// accounting is the line that accounts for every intended request.
func accounting(h *result.HailSection) string {
	c := h.Counts
	s := fmt.Sprintf("%d intended, %d sent", c.Intended, c.Sent)
	if c.NotSent > 0 {
		s += fmt.Sprintf(", %d not sent (they failed before a byte was written: counted as errors, never as sent)", c.NotSent)
	}
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
func sendDelay(h *result.HailSection, d func(float64) string) (own, wait string) {
	o, w := h.SendDelay.Own, h.SendDelay.ConnWait
	own = fmt.Sprintf("p50 %s, p99 %s, p99.9 %s, max %s", d(o.P50.Seconds()), d(o.P99.Seconds()), d(o.P999.Seconds()), d(o.Max.Seconds()))
	wait = fmt.Sprintf("p50 %s, p99 %s, max %s; %d requests (%.1f%%) waited, all connections busy", d(w.P50.Seconds()), d(w.P99.Seconds()), d(w.Max.Seconds()),
		h.Counts.Queued, pct(h.Counts.Queued, h.Counts.Sent))
	return own, wait
}
