package tui

import (
	"fmt"
	"runtime"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// healthSeconds is how many of the latest seconds the generator's health
// is judged on.
const healthSeconds = 3

// health is the state of the last few seconds, judged by the final
// report's rules (report.Classify): which bottleneck, if any, limits the
// test right now.
type health struct {
	CPU        float64 // share of the cores used (1 = all)
	LagP99     int64   // ns, hail's own lateness, worst second
	WaitP99    int64   // ns, the wait for a free connection, worst second
	Others     float64 // share of hail's CPUs other processes used
	Achieved   float64 // requests/s
	Bottleneck string  // report.Bottleneck*
	Limited    bool    // a generator-side bottleneck
	Reasons    []string
}

func (m *Model) health() health {
	var h health
	s := m.data.Series
	if len(s) > healthSeconds {
		s = s[len(s)-healthSeconds:]
	}
	if len(s) == 0 {
		return h
	}
	var cpu, others, target, span float64
	var reqs, errs, notSent int64
	for _, x := range s {
		cpu += x.CPU * x.Span.Seconds()
		others += x.Others * x.Span.Seconds()
		target += x.TargetShare * x.Span.Seconds()
		span += x.Span.Seconds()
		reqs += x.Requests
		errs += x.Errors
		notSent += x.NotSent
		h.LagP99 = max(h.LagP99, int64(x.LagP99))
		h.WaitP99 = max(h.WaitP99, int64(x.WaitP99))
	}
	if span <= 0 {
		return h
	}
	h.CPU = cpu / span / float64(m.cfg.Cores)
	h.Others = others / span
	h.Achieved = float64(reqs) / span
	// The same evidence as the final report's, from the last seconds: hail
	// is judged late on its own lateness only, and the target's own
	// process (when known) is not "other processes".
	e := report.Evidence{Open: m.cfg.Open, OwnP99: float64(h.LagP99) / 1e9, WaitP99: float64(h.WaitP99) / 1e9,
		Queued: m.data.Queued, Sent: m.data.Requests, NotSent: notSent, Failed: errs, Responses: reqs - errs, CPU: h.CPU,
		TargetCPU: target / span,
		Machine:   stats.MachineUse{Known: runtime.GOOS == "linux", CPUs: m.cfg.Cores, Others: h.Others, Pressure: -1}}
	if h.LagP99 > 0 {
		e.OwnSamples = reqs
	}
	if m.cfg.Open && m.cfg.Rate > 0 && !m.stopping && len(m.data.Series) >= 2 {
		e.Rate, e.Achieved = m.cfg.Rate, h.Achieved
	}
	h.Bottleneck = report.Classify(e)
	ms := func(ns int64) string { return fmtLat(ns, "ms") + " ms" }
	switch h.Bottleneck {
	case result.BottleneckTarget:
		switch {
		case e.Responses == 0 && e.NotSent > 0 && reqs == 0:
			h.Reasons = append(h.Reasons, fmt.Sprintf("no connection could be made in the last seconds (%d requests not sent): the target is unreachable", notSent))
		case e.Responses == 0:
			h.Reasons = append(h.Reasons, "no response in the last seconds: the target is not answering")
		default:
			h.Reasons = append(h.Reasons, fmt.Sprintf("all %d connections busy: requests wait for the target (wait p99 %s); raising -c offers more concurrency, not capacity",
				m.cfg.Connections, ms(h.WaitP99)))
		}
	case result.BottleneckGenerator:
		h.Reasons = append(h.Reasons, fmt.Sprintf("CPU %.0f%% of %d core(s): hail itself is the limit", 100*h.CPU, m.cfg.Cores))
	case result.BottleneckOthers:
		if e.TakenBy() == result.TakenByTarget { // the live view has no steal: the target or other processes
			h.Reasons = append(h.Reasons, fmt.Sprintf("the target's own process uses %.0f%% of hail's CPUs: it takes hail's time (pin them apart with taskset)", 100*e.TargetCPU))
		} else {
			h.Reasons = append(h.Reasons, fmt.Sprintf("other processes use %.0f%% of hail's CPUs: they take its time (pin hail with taskset)", 100*h.Others))
		}
	case result.BottleneckWakeup:
		h.Reasons = append(h.Reasons, fmt.Sprintf("own lateness p99 %s with the CPU %.0f%% busy: the OS wakes hail late", ms(h.LagP99), 100*h.CPU))
	}
	if report.GeneratorSide(h.Bottleneck) {
		h.Limited = true
		if h.LagP99 > int64(report.Late) && h.Bottleneck != result.BottleneckWakeup {
			h.Reasons = append(h.Reasons, fmt.Sprintf("own lateness p99 %s > 1 ms: hail cannot send on time", ms(h.LagP99)))
		}
	}
	if e.Short() {
		h.Reasons = append(h.Reasons, fmt.Sprintf("achieved %s/s, %.0f%% of -q %g", fmtSI(h.Achieved), 100*h.Achieved/m.cfg.Rate, m.cfg.Rate))
	}
	return h
}
