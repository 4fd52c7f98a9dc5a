package tui

import (
	"fmt"
	"time"
)

// healthSeconds is how many of the latest seconds the generator's health
// is judged on.
const healthSeconds = 3

// health is the generator's state over the last few seconds, judged by the
// same rules as the final report's verdict: schedule lag p99 over 1 ms,
// an achieved rate under 95% of -q, or CPU at 90% of its cores or more.
type health struct {
	CPU      float64 // share of the cores used (1 = all)
	LagP99   int64   // ns, worst second
	Achieved float64 // requests/s
	Limited  bool
	Reasons  []string
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
	var cpu, span float64
	var reqs int64
	for _, x := range s {
		cpu += x.CPU * x.Span
		span += x.Span
		reqs += x.Requests
		h.LagP99 = max(h.LagP99, x.LagP99)
	}
	if span <= 0 {
		return h
	}
	h.CPU = cpu / span / float64(m.cfg.Cores)
	h.Achieved = float64(reqs) / span
	if m.cfg.Open && h.LagP99 > int64(time.Millisecond) {
		h.Limited = true
		msg := fmt.Sprintf("schedule lag p99 %s > 1 ms: hail cannot send on time", fmtLat(h.LagP99, "ms")+" ms")
		if h.CPU < 0.5 { // as the report's verdict: idle and late is the OS waking hail late, not load
			msg += fmt.Sprintf(" (CPU %.0f%%: the OS wakes it late)", 100*h.CPU)
		}
		h.Reasons = append(h.Reasons, msg)
	}
	if m.cfg.Open && m.cfg.Rate > 0 && !m.stopping && len(m.data.Series) >= 2 && h.Achieved < 0.95*m.cfg.Rate {
		h.Limited = true
		msg := fmt.Sprintf("achieved %s/s, %.0f%% of -q %g", fmtSI(h.Achieved), 100*h.Achieved/m.cfg.Rate, m.cfg.Rate)
		if m.data.Queued > m.data.Requests/20 {
			msg += "; requests queue for connections (raise -c)"
		}
		h.Reasons = append(h.Reasons, msg)
	}
	if h.CPU >= 0.9 {
		h.Limited = true
		h.Reasons = append(h.Reasons, fmt.Sprintf("CPU %.0f%% of %d core(s): the generator is saturated", 100*h.CPU, m.cfg.Cores))
	}
	return h
}
