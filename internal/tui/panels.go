// The panels of the full layout, each a list of lines for its box:
// requests/s, latency, the latency histogram, status codes and errors,
// connections and I/O, the generator's health, and scenario steps.

package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/result"
)

// rpsPanel: requests per second now, average and total, and their chart.
func (m *Model) rpsPanel(w, h int) []string {
	last := m.data.Last()
	v, l := m.st.value.Render, m.st.dim.Render
	errPct := 0.0
	if m.data.Requests > 0 {
		errPct = 100 * float64(m.data.Errors) / float64(m.data.Requests)
	}
	errs := m.st.good.Render(fmtInt(m.data.Errors))
	if m.data.Errors > 0 {
		errs = m.st.bad.Render(fmtInt(m.data.Errors) + fmt.Sprintf(" (%.2f%%)", errPct))
	}
	head := flow([]string{
		l("now ") + m.st.rps.Bold(true).Render(fmtSI(rate(last.Requests, last.Span.Seconds()))+"/s"),
		l("avg ") + v(fmtSI(m.avgRate())+"/s"),
		l("total ") + v(fmtInt(m.data.Requests)),
		l("errors ") + errs,
	}, w)
	lines := []line{
		{"rps", colRPS, func(s stats.Second) float64 { return rate(s.Requests, s.Span.Seconds()) }},
	}
	secs := m.windowed()
	for _, s := range secs {
		if s.Errors > 0 {
			lines = append(lines, line{"errors", colErr, func(s stats.Second) float64 { return rate(s.Errors, s.Span.Seconds()) }})
			break
		}
	}
	return append(head, m.chart(w, h-len(head), secs, lines, fmtSI)...)
}

// latPanel: the last second's percentiles and their lines over time.
func (m *Model) latPanel(w, h int) []string {
	last := m.data.Last()
	u := m.latUnit()
	d := unitDiv(u)
	tok := func(st lipgloss.Style, name string, ns int64) string {
		return st.Render(name) + " " + m.st.value.Render(fmtLat(ns, u))
	}
	head := flow([]string{
		tok(m.st.p50, "p50", int64(last.P50)), tok(m.st.p90, "p90", int64(last.P90)), tok(m.st.p99, "p99", int64(last.P99)),
		tok(m.st.p999, "p99.9", int64(last.P999)), tok(m.st.pmax, "max", int64(last.Max)),
		m.st.dim.Render("run p99 ") + fmtLat(m.data.RunP99, u),
	}, w)
	if dd := &m.data; dd.Failed+dd.CutOff > 0 {
		// Responses only above (as oha); every sent request here, a
		// failure at its elapsed time, so failures cannot hide.
		head = append(head, flow([]string{
			m.st.dim.Render("all sent: p50 ") + fmtLat(dd.AllP50, u), m.st.dim.Render("p99 ") + fmtLat(dd.AllP99, u),
			m.st.dim.Render("max ") + fmtLat(dd.AllMax, u),
			m.st.bad.Render(fmt.Sprintf("%s failed, %s cut off", fmtInt(dd.Failed), fmtInt(dd.CutOff))),
		}, w)...)
	}
	ns := func(f func(s stats.Second) int64) func(s stats.Second) float64 {
		return func(s stats.Second) float64 { return float64(f(s)) / d }
	}
	lines := []line{ // drawn in order: later lines show on top
		{"max", colMax, ns(func(s stats.Second) int64 { return int64(s.Max) })},
		{"p99.9", colP999, ns(func(s stats.Second) int64 { return int64(s.P999) })},
		{"p99", colP99, ns(func(s stats.Second) int64 { return int64(s.P99) })},
		{"p90", colP90, ns(func(s stats.Second) int64 { return int64(s.P90) })},
		{"p50", colP50, ns(func(s stats.Second) int64 { return int64(s.P50) })},
	}
	if w < 16 || h-len(head) < 4 { // sparkline: p99
		lines[0], lines[2] = lines[2], lines[0]
	}
	return append(head, m.chart(w, h-len(head), m.windowed(), lines, fmtNum)...)
}

// histPanel: the run's latency histogram, one row per bin.
func (m *Model) histPanel(w, h int) []string {
	hs := &m.data.Latency
	if hs.Total == 0 || h <= 0 {
		return []string{m.st.dim.Render("no responses yet")}
	}
	u := m.latUnit()
	rows := h
	if hs.Over > 0 && rows > 1 {
		rows--
	}
	rows = max(rows, 1)
	type bin struct {
		upper int64
		n     int64
	}
	width := float64(hs.Hi-hs.Min) / histFine
	var bins []bin
	for j := range rows {
		a, b := j*histFine/rows, (j+1)*histFine/rows
		var n int64
		for _, c := range hs.Fine[a:b] {
			n += c
		}
		bins = append(bins, bin{hs.Min + int64(float64(b)*width), n})
	}
	if hs.Over > 0 {
		if h == 1 {
			bins[0].n += hs.Over
		} else {
			bins = append(bins, bin{hs.Max, hs.Over})
		}
		bins[len(bins)-1].upper = hs.Max
	}
	var top int64
	lw, cw := 0, 0
	labels := make([]string, len(bins))
	counts := make([]string, len(bins))
	for i, b := range bins {
		top = max(top, b.n)
		labels[i] = fmtLat(b.upper, u)
		counts[i] = fmtSI(float64(b.n))
		lw, cw = max(lw, len(labels[i])), max(cw, len(counts[i]))
	}
	bw := max(w-lw-cw-3, 1)
	out := make([]string, len(bins))
	for i, b := range bins {
		frac := 0.0
		if top > 0 {
			frac = float64(b.n) / float64(top)
		}
		bar := fit(hbar(frac, bw), bw, true)
		out[i] = m.st.dim.Render(fmt.Sprintf("%*s ", lw, labels[i])) + m.st.histBars.Render(bar) + fmt.Sprintf(" %*s", cw, counts[i])
	}
	return out
}

// statusPanel: responses by status code, then errors by kind.
func (m *Model) statusPanel(w, h int) []string {
	var out []string
	total := m.data.Requests
	pct := func(n int64) string {
		if total == 0 {
			return ""
		}
		return m.st.dim.Render(fmt.Sprintf(" %5.1f%%", 100*float64(n)/float64(total)))
	}
	for _, c := range m.data.Status {
		out = append(out, m.statusStyle(c.Name).Render("["+c.Name+"]")+" "+m.st.value.Render(fmtInt(c.N))+pct(c.N))
	}
	if len(m.data.Status) == 0 {
		out = append(out, m.st.dim.Render("no responses yet"))
	}
	if len(m.data.Failures) == 0 {
		out = append(out, m.st.good.Render("no errors"))
	} else {
		out = append(out, m.st.bad.Render("errors:"))
		for _, c := range m.data.Failures {
			n := "[" + fmtInt(c.N) + "] "
			for i, l := range wrap(c.Name, max(w-len(n), 8)) {
				if i == 0 {
					out = append(out, m.st.bad.Render(n)+l)
				} else {
					out = append(out, strings.Repeat(" ", len(n))+l)
				}
			}
		}
	}
	if len(out) > h && h > 0 {
		more := len(out) - h + 1
		out = append(out[:h-1], m.st.dim.Render(fmt.Sprintf("… %d more", more)))
	}
	return out
}

// kv is a dim label padded to ten cells, then its value.
func (m *Model) kv(k, v string) string {
	return m.st.dim.Render(fmt.Sprintf("%-10s", k)) + v
}

// connPanel: connections, in-flight requests, bytes per second.
func (m *Model) connPanel() []string {
	last := m.data.Last()
	v := m.st.value.Render
	return []string{
		m.kv("conns", v(fmtInt(last.ConnsOpen))+m.st.dim.Render(" open")),
		m.kv("in flight", v(fmtInt(last.InFlight))),
		m.kv("in", v(fmtBytes(rate(last.WireBytes, last.Span.Seconds()))+"/s")),
		m.kv("out", v(fmtBytes(rate(last.SentBytes, last.Span.Seconds()))+"/s")),
	}
}

// genPanel: the generator's own health and the bottleneck warning.
func (m *Model) genPanel(w int, hl health) []string {
	last := m.data.Last()
	v := m.st.value.Render
	cpu := 0.0
	if last.Span.Seconds() > 0 {
		cpu = last.CPU / float64(m.cfg.Cores)
	}
	cpuSt := m.st.value
	if cpu >= report.SaturatedCPU {
		cpuSt = m.st.bad.Bold(true)
	}
	lag, wait := m.st.dim.Render("n/a (closed)"), ""
	if m.cfg.Open {
		lag, wait = m.msValue(int64(last.LagP99)), m.msValue(int64(last.WaitP99))
	}
	cpuLine := cpuSt.Render(fmt.Sprintf("%.0f%%", 100*cpu)) + m.st.dim.Render(fmt.Sprintf(" of %d cores", m.cfg.Cores))
	out := []string{m.kv("CPU", cpuLine)}
	if last.Others > 0.05 {
		// Others' share is the number the warning below may cite: on a
		// line of its own when the CPU line has no room for it.
		others := fmt.Sprintf("%.0f%%", 100*last.Others)
		if with := m.kv("CPU", cpuLine+m.st.dim.Render(", others "+others)); width(with) <= w {
			out[0] = with
		} else {
			out = append(out, m.kv("others", v(others)+m.st.dim.Render(" of its CPUs")))
		}
	}
	out = append(out, m.kv("lag p99", lag))
	if m.cfg.Open {
		out = append(out, m.kv("wait p99", wait))
	}
	out = append(out, m.kv("queued", v(fmtInt(m.data.Queued))))
	if m.data.Unsent > 0 {
		out = append(out, m.kv("unsent", m.st.bad.Render(fmtInt(m.data.Unsent))))
	}
	if m.data.NotSent > 0 { // failed to connect: errors, never sent
		out = append(out, m.kv("not sent", m.st.bad.Render(fmtInt(m.data.NotSent))))
	}
	badge := ""
	switch {
	case hl.Limited:
		badge = m.st.alert.Render(" GENERATOR-LIMITED ")
	case hl.Bottleneck == result.BottleneckTarget:
		badge = m.st.bad.Bold(true).Render(" TARGET-BOUND ")
	case len(m.data.Series) > 0:
		for _, l := range wrap("OK: the target sets the pace", w) {
			out = append(out, m.st.good.Render(l))
		}
		return out
	default:
		return out
	}
	out = append(out, badge)
	for _, r := range hl.Reasons {
		out = append(out, wrap("· "+r, w)...)
	}
	return out
}

// msValue renders a duration in ms, in the warning style past 1 ms.
func (m *Model) msValue(ns int64) string {
	s := fmtLat(ns, "ms") + " ms"
	if ns > int64(report.Late) {
		return m.st.bad.Render(s)
	}
	return m.st.value.Render(s)
}

// stepsPanel: one row per scenario step: requests, requests/s now,
// errors and check failures, p50 and p99 (the unit in the header), capture
// misses and yields, and status codes. Narrow panels drop the misses and
// yields columns, then the checks column; the status codes take the rest.
func (m *Model) stepsPanel(w, h int) []string {
	u := m.latUnit()
	nw := 4
	for _, s := range m.data.Steps {
		nw = max(nw, width(s.Name))
	}
	nw = min(nw, 20)
	type col struct {
		head string
		w    int
		val  func(s *StepRow) string
	}
	cols := []col{
		{"requests", 9, func(s *StepRow) string { return fmtInt(s.Requests) }},
		{"req/s", 7, func(s *StepRow) string { return fmtSI(s.RPS) }},
		{"errors", 7, func(s *StepRow) string { return fmtInt(s.Errors) }},
		{"checks", 7, func(s *StepRow) string { return fmtInt(s.Checks) }},
		{"p50 " + u, 8, func(s *StepRow) string { return fmtLat(s.P50, u) }},
		{"p99 " + u, 8, func(s *StepRow) string { return fmtLat(s.P99, u) }},
		{"misses", 7, func(s *StepRow) string { return fmtInt(s.Misses) }},
		{"yields", 7, func(s *StepRow) string { return fmtInt(s.Yields) }},
	}
	used := func() int {
		n := nw
		for _, c := range cols {
			n += 1 + c.w
		}
		return n
	}
	for _, drop := range []string{"yields", "misses", "checks"} {
		if w-used() >= 16 {
			break
		}
		for i, c := range cols {
			if c.head == drop {
				cols = append(cols[:i], cols[i+1:]...)
				break
			}
		}
	}
	head := fmt.Sprintf("%-*s", nw, "step")
	for _, c := range cols {
		head += fmt.Sprintf(" %*s", c.w, c.head)
	}
	out := []string{m.st.dim.Render(head + "  status codes")}
	for i := range m.data.Steps {
		s := &m.data.Steps[i]
		row := fit(s.Name, nw, true)
		for _, c := range cols {
			v := fmt.Sprintf(" %*s", c.w, c.val(s))
			if (c.head == "errors" && s.Errors > 0) || (c.head == "checks" && s.Checks > 0) {
				v = m.st.bad.Render(v)
			}
			row += v
		}
		var codes []string
		for _, c := range s.Status {
			codes = append(codes, m.statusStyle(c.Name).Render(c.Name)+"×"+fmtSI(float64(c.N)))
		}
		out = append(out, row+"  "+strings.Join(codes, " "))
	}
	if len(out) > h && h > 0 {
		out = out[:h]
	}
	return out
}

// statusStyle colors a status: a success (2xx, gRPC OK) good, 3xx a
// warning, others bad.
func (m *Model) statusStyle(name string) lipgloss.Style {
	code, _ := status.ByName(name)
	switch {
	case status.Success(code):
		return m.st.good
	case code >= 300 && code < 400:
		return m.st.warn
	}
	return m.st.bad
}

// targetPanel: the --target-pid process's RSS and CPU in the last second,
// and both over time, side by side.
func (m *Model) targetPanel(w, h int) []string {
	last := m.data.Last()
	var peak int64
	for _, s := range m.data.Series {
		peak = max(peak, s.TargetRSS)
	}
	v, l := m.st.value.Render, m.st.dim.Render
	head := flow([]string{
		l("pid ") + v(strconv.Itoa(m.cfg.TargetPID)),
		l("RSS ") + v(fmtBytes(float64(last.TargetRSS))) + l(" (peak "+fmtBytes(float64(peak))+")"),
		l("CPU ") + v(fmt.Sprintf("%.0f%%", 100*last.TargetCPU)) + l(" of a core"),
	}, w)
	ch := h - len(head)
	if ch < 3 {
		return head
	}
	mib := []line{{"rss", colRPS, func(s stats.Second) float64 { return float64(s.TargetRSS) / (1 << 20) }}}
	cpu := []line{{"cpu", colP90, func(s stats.Second) float64 { return 100 * s.TargetCPU }}}
	secs := m.windowed()
	if w < 90 { // one above the other
		top := ch / 2
		out := append(head, l("RSS (MiB)"))
		out = append(out, m.chart(w, top-1, secs, mib, fmtNum)...)
		out = append(out, l("CPU (% of a core)"))
		return append(out, m.chart(w, ch-top-1, secs, cpu, fmtNum)...)
	}
	cw := split(w, 2)
	left := append([]string{l("RSS (MiB)")}, m.chart(cw[0]-2, ch-1, secs, mib, fmtNum)...)
	right := append([]string{l("CPU (% of a core)")}, m.chart(cw[1], ch-1, secs, cpu, fmtNum)...)
	return append(head, hjoin(padLines(left, cw[0]-2, ch), padLines(nil, 2, ch), padLines(right, cw[1], ch))...)
}

// padLines makes lines exactly n lines of width w (for hjoin).
func padLines(lines []string, w, n int) []string {
	out := make([]string, n)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w, true)
		} else {
			out[i] = strings.Repeat(" ", max(w, 0))
		}
	}
	return out
}
