package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"hail/internal/stats"
)

// styles are the view's colors; with colors off they render plain text.
type styles struct {
	on                        bool
	r                         *lipgloss.Renderer
	paints                    map[lipgloss.TerminalColor][2]string
	border, title, axis, dim  lipgloss.Style
	label, value, brand       lipgloss.Style
	good, warn, bad, alert    lipgloss.Style
	rps, errs                 lipgloss.Style
	p50, p90, p99, p999, pmax lipgloss.Style
	histBars                  lipgloss.Style
}

// The colors of the chart lines (terminal palette indices); the legends
// use the same.
const (
	colRPS  = lipgloss.Color("10")
	colErr  = lipgloss.Color("9")
	colP50  = lipgloss.Color("10")
	colP90  = lipgloss.Color("14")
	colP99  = lipgloss.Color("11")
	colP999 = lipgloss.Color("13")
	colMax  = lipgloss.Color("9")
)

func newStyles(r *lipgloss.Renderer, on bool) styles {
	c := func(code string) lipgloss.Style { return r.NewStyle().Foreground(lipgloss.Color(code)) }
	return styles{
		on: on, r: r,
		border: c("8"), title: c("14").Bold(true), axis: c("8"), dim: c("8"),
		label: r.NewStyle(), value: r.NewStyle().Bold(true), brand: c("13").Bold(true),
		good: c("10"), warn: c("11"), bad: c("9"), alert: r.NewStyle().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("1")),
		rps: c(string(colRPS)), errs: c(string(colErr)),
		p50: c(string(colP50)), p90: c(string(colP90)), p99: c(string(colP99)), p999: c(string(colP999)), pmax: c(string(colMax)),
		histBars: c("12"),
	}
}

// paint returns the escape codes that color text c and reset it.
func (s *styles) paint(c lipgloss.TerminalColor) [2]string {
	if p, ok := s.paints[c]; ok {
		return p
	}
	if s.paints == nil {
		s.paints = map[lipgloss.TerminalColor][2]string{}
	}
	var p [2]string
	if pre, post, ok := strings.Cut(s.r.NewStyle().Foreground(c).Render("\x00"), "\x00"); ok {
		p = [2]string{pre, post}
	}
	s.paints[c] = p
	return p
}

// bodyKey is what the cached body depends on.
type bodyKey struct {
	ver, w, h, window, unit int
	help, stopping          bool
	latUnit                 string
}

type bodyCache struct {
	key   bodyKey
	body  string // the panels' lines, joined
	empty bool
	valid bool
}

// View renders the screen: the header (progress, redrawn every frame) over
// the panels (redrawn only when the collector has ticked, the terminal was
// resized or a key changed them).
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	compact := m.compact()
	head := m.header(compact)
	k := bodyKey{m.ver, m.width, m.height - len(head), m.window, m.unit, m.help, m.stopping, m.latUnit()}
	if !m.cache.valid || m.cache.key != k {
		var body []string
		if compact {
			body = m.compactBody(k.h)
		} else {
			body = m.body(k.h)
		}
		for i := range body {
			body[i] = fit(body[i], m.width, false)
			if !m.st.on {
				body[i] = ansi.Strip(body[i])
			}
		}
		if len(head)+len(body) > m.height {
			body = body[:max(m.height-len(head), 0)]
		}
		m.cache = bodyCache{key: k, body: strings.Join(body, "\n"), valid: true, empty: len(body) == 0}
	}
	if len(head) > m.height {
		head = head[:m.height]
	}
	if m.cache.empty {
		return strings.Join(head, "\n")
	}
	return strings.Join(head, "\n") + "\n" + m.cache.body
}

// compact is the layout for small terminals: lines of numbers, no boxes.
func (m *Model) compact() bool { return m.width < 64 || m.height < 20 }

// fit truncates s to w cells, padding it to exactly w when pad is set.
func fit(s string, w int, pad bool) string {
	if w <= 0 {
		return ""
	}
	n := width(s)
	if n > w {
		s = ansi.Truncate(s, w, "")
		n = width(s)
	}
	if pad && n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// width is the cells s takes on screen, escape sequences excluded. The
// view's own glyphs (box drawing, blocks, braille, Latin, punctuation)
// are one cell each and counted fast; anything else is measured properly.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b { // CSI ... final byte
			i++
			if i < len(s) && s[i] == '[' {
				i++
				for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
					i++
				}
			}
			i++
			continue
		}
		if c < 0x80 {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x2e80 || r >= 0x0300 && r < 0x0370 || r >= 0x1100 && r < 0x1200 || r >= 0x200b && r < 0x2010 {
			return ansi.StringWidth(s)
		}
		n++
		i += size
	}
	return n
}

// flow lays tokens out on lines of at most w cells, two spaces apart.
func flow(tokens []string, w int) []string {
	var out []string
	cur, cw := "", 0
	for _, t := range tokens {
		tw := width(t)
		if cw > 0 && cw+2+tw > w {
			out = append(out, cur)
			cur, cw = "", 0
		}
		if cw > 0 {
			cur += "  "
			cw += 2
		}
		cur += t
		cw += tw
	}
	if cw > 0 {
		out = append(out, cur)
	}
	return out
}

// wrap word-wraps text to lines of at most w cells.
func wrap(text string, w int) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(text) {
		if cur != "" && width(cur)+1+width(word) > w {
			out = append(out, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// split divides w cells into n widths that add up to w.
func split(w, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = w / n
		if i < w%n {
			out[i]++
		}
	}
	return out
}

// hjoin puts equally tall blocks side by side.
func hjoin(blocks ...[]string) []string {
	if len(blocks) == 0 {
		return nil
	}
	out := make([]string, len(blocks[0]))
	for i := range out {
		var b strings.Builder
		for _, bl := range blocks {
			if i < len(bl) {
				b.WriteString(bl[i])
			}
		}
		out[i] = b.String()
	}
	return out
}

// box frames body in a w×h rounded border with a title.
func (m *Model) box(title string, w, h int, body []string) []string {
	if h <= 0 || w <= 0 {
		return nil
	}
	out := make([]string, 0, h)
	if w < 4 || h < 2 {
		for range h {
			out = append(out, strings.Repeat(" ", w))
		}
		return out
	}
	inner := w - 2
	t := fit(" "+title+" ", inner-1, false)
	top := m.st.border.Render("╭─") + m.st.title.Render(t) + m.st.border.Render(strings.Repeat("─", max(inner-1-width(t), 0))+"╮")
	out = append(out, top)
	side := m.st.border.Render("│")
	for i := range h - 2 {
		l := ""
		if i < len(body) {
			l = body[i]
		}
		out = append(out, side+fit(l, inner, true)+side)
	}
	return append(out, m.st.border.Render("╰"+strings.Repeat("─", inner)+"╯"))
}

// header is the title line and the progress line.
func (m *Model) header(compact bool) []string {
	el := m.elapsed()
	frac, done, eta := m.progress(el)
	state := "running"
	switch {
	case m.src == nil:
		state = "starting…"
	case m.stopping:
		state = "stopping…"
	}
	if compact {
		text := fmt.Sprintf(" %3.0f%% %s", 100*frac, fmtElapsed(el))
		if eta != "" {
			text += " ETA " + eta
		}
		if m.stopping {
			text = " stopping…"
		}
		bw := max(m.width-width(text)-5, 0)
		return []string{fit(m.st.brand.Render("hail ")+m.bar(frac, bw)+text, m.width, false)}
	}
	if m.title.w != m.width || m.title.state != state {
		m.title.w, m.title.state, m.title.line = m.width, state, m.titleLine(state)
	}
	title := m.title.line
	text := fmt.Sprintf(" %5.1f%%  %s", 100*frac, done)
	if eta != "" {
		text += "  ETA " + eta
	}
	if m.stopping {
		text += "  " + m.st.warn.Render("stopping: settling in-flight requests…")
	}
	bw := max(m.width-width(text), 0)
	return []string{fit(title, m.width, false), fit(m.bar(frac, bw)+text, m.width, false)}
}

// titleLine is the first line: what is loaded, the state and the keys.
func (m *Model) titleLine(state string) string {
	model := "closed model"
	if m.cfg.Open {
		model = "open model"
		if m.cfg.Rate > 0 {
			model += ", -q " + strconv.FormatFloat(m.cfg.Rate, 'g', -1, 64)
		}
	}
	right := m.st.dim.Render(state+"  ") + m.st.value.Render("?") + m.st.dim.Render(" keys  ") + m.st.value.Render("q") + m.st.dim.Render(" stop")
	left := m.st.brand.Render("hail") + " " + m.cfg.Method + " " + m.cfg.Target + m.st.dim.Render(fmt.Sprintf(" · %d connections · %s", m.cfg.Connections, model))
	lw := m.width - width(right) - 1
	if lw < 20 {
		return left
	}
	return fit(left, lw, true) + " " + right
}

// progress returns the share of the run done, what is done as text, and
// the time left ("" when unknown).
func (m *Model) progress(el time.Duration) (float64, string, string) {
	switch {
	case m.cfg.Duration > 0:
		frac := min(float64(el)/float64(m.cfg.Duration), 1)
		return frac, fmtElapsed(el) + " / " + fmtElapsed(m.cfg.Duration), fmtElapsed(max(m.cfg.Duration-el, 0))
	case m.cfg.Requests > 0:
		n := float64(m.cfg.Requests)
		frac := min(float64(m.data.Requests)/n, 1)
		done := fmtInt(m.data.Requests) + " / " + fmtInt(int64(m.cfg.Requests)) + " requests  " + fmtElapsed(el)
		eta := ""
		if avg := m.avgRate(); avg > 0 {
			eta = fmtElapsed(time.Duration((n - float64(m.data.Requests)) / avg * float64(time.Second)))
		}
		return frac, done, eta
	}
	return 0, fmtElapsed(el), ""
}

// avgRate is requests per second over the seconds closed so far.
func (m *Model) avgRate() float64 {
	var span float64
	for _, s := range m.data.Series {
		span += s.Span
	}
	return rate(m.data.Requests, span)
}

func (m *Model) bar(frac float64, w int) string {
	if w <= 0 {
		return ""
	}
	d := min(int(frac*float64(w)+0.5), w)
	if !m.st.on {
		return strings.Repeat("█", d) + strings.Repeat("░", w-d)
	}
	done, left := m.st.paint(lipgloss.Color("12")), m.st.paint(lipgloss.Color("8"))
	return done[0] + strings.Repeat("█", d) + done[1] + left[0] + strings.Repeat("░", w-d) + left[1]
}

// footer is the keys line, or the warning when the generator limits the test.
func (m *Model) footer(hl health) string {
	if hl.Limited {
		msg := " ⚠ GENERATOR-LIMITED: the generator, not the target, is the bottleneck"
		if len(hl.Reasons) > 0 {
			msg += " — " + hl.Reasons[0]
		}
		return m.st.alert.Render(fit(msg+" ", m.width, true))
	}
	win := "all"
	if wd := windows[m.window]; wd > 0 {
		win = fmtSeconds(int(wd / time.Second))
	}
	unit := units[m.unit]
	if unit == "auto" {
		unit = "auto (" + m.latUnit() + ")"
	}
	k := m.st.value.Render
	return m.st.dim.Render(" ") + k("q") + m.st.dim.Render(" stop · ") + k("?") + m.st.dim.Render(" keys · ") +
		k("w/W") + m.st.dim.Render(" window: "+win+" · ") + k("u/U") + m.st.dim.Render(" unit: "+unit)
}

// body lays the panels out in h lines.
func (m *Model) body(h int) []string {
	W := m.width
	hl := m.health()
	if m.help {
		return append(m.box("Keys", W, h-1, m.helpLines(W-2)), m.footer(hl))
	}
	avail := h - 1
	stepsH := 0
	if n := len(m.data.Steps); n > 0 {
		stepsH = min(n+3, avail/4)
	}
	rowA := max((avail-stepsH)*11/20, 6)
	rowB := avail - stepsH - rowA
	var out []string
	aw := split(W, 2)
	out = append(out, hjoin(
		m.box("Requests/s", aw[0], rowA, m.rpsPanel(aw[0]-2, rowA-2)),
		m.box("Latency ("+m.latUnit()+")", aw[1], rowA, m.latPanel(aw[1]-2, rowA-2)),
	)...)
	if stepsH > 0 {
		out = append(out, m.box("Steps", W, stepsH, m.stepsPanel(W-2, stepsH-2))...)
	}
	if W >= 110 {
		bw := split(W, 4)
		out = append(out, hjoin(
			m.box("Latency histogram ("+m.latUnit()+")", bw[0], rowB, m.histPanel(bw[0]-2, rowB-2)),
			m.box("Status codes & errors", bw[1], rowB, m.statusPanel(bw[1]-2, rowB-2)),
			m.box("Connections & I/O", bw[2], rowB, m.connPanel()),
			m.box("Generator health", bw[3], rowB, m.genPanel(bw[3]-2, hl)),
		)...)
	} else {
		bw := split(W, 3)
		both := append(m.genPanel(bw[2]-2, hl), m.connPanel()...)
		out = append(out, hjoin(
			m.box("Latency histogram ("+m.latUnit()+")", bw[0], rowB, m.histPanel(bw[0]-2, rowB-2)),
			m.box("Status & errors", bw[1], rowB, m.statusPanel(bw[1]-2, rowB-2)),
			m.box("Generator & I/O", bw[2], rowB, both),
		)...)
	}
	return append(out, m.footer(hl))
}

func (m *Model) helpLines(w int) []string {
	k := m.st.value.Render
	out := []string{
		k("q") + ", " + k("Ctrl-C") + "  stop the run; the final report prints as with --no-tui",
		"           (press again to exit at once, as a second SIGINT does)",
		k("?") + ", " + k("h") + "       show or hide this help (" + k("Esc") + " hides it)",
		k("w") + ", " + k("]") + ", " + k("→") + "    longer chart window: 10s 30s 1m 5m 15m all",
		k("W") + ", " + k("[") + ", " + k("←") + "    shorter chart window",
		k("u") + ", " + k("U") + "       next / previous time unit: auto ns µs ms s",
		"",
		m.st.title.Render("Panels"),
	}
	for _, p := range []string{
		"Requests/s: now (the last second), average and total; requests/s and errors/s over time.",
		"Latency: the last second's p50, p90, p99, p99.9 and max, and their lines over time.",
		"Latency histogram: the whole run so far; the last row holds everything above p99.",
		"Status & errors: responses by status code and failures by kind, live.",
		"Connections & I/O: open connections, requests in flight, bytes in and out per second.",
		"Generator: hail's own CPU, schedule lag p99 and queued requests, with a warning when hail, not the target, is the bottleneck (lag p99 > 1 ms, under 95% of -q, or CPU ≥ 90% of its cores).",
		"Numbers refresh at each collector tick (once a second); the progress line every frame.",
	} {
		out = append(out, wrap(p, w)...)
	}
	return out
}

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
		l("now ") + m.st.rps.Bold(true).Render(fmtSI(rate(last.Requests, last.Span))+"/s"),
		l("avg ") + v(fmtSI(m.avgRate())+"/s"),
		l("total ") + v(fmtInt(m.data.Requests)),
		l("errors ") + errs,
	}, w)
	lines := []line{
		{"rps", colRPS, func(s stats.Second) float64 { return rate(s.Requests, s.Span) }},
	}
	secs := m.windowed()
	for _, s := range secs {
		if s.Errors > 0 {
			lines = append(lines, line{"errors", colErr, func(s stats.Second) float64 { return rate(s.Errors, s.Span) }})
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
		tok(m.st.p50, "p50", last.P50), tok(m.st.p90, "p90", last.P90), tok(m.st.p99, "p99", last.P99),
		tok(m.st.p999, "p99.9", last.P999), tok(m.st.pmax, "max", last.Max),
		m.st.dim.Render("run p99 ") + fmtLat(m.data.RunP99, u),
	}, w)
	ns := func(f func(s stats.Second) int64) func(s stats.Second) float64 {
		return func(s stats.Second) float64 { return float64(f(s)) / d }
	}
	lines := []line{ // drawn in order: later lines show on top
		{"max", colMax, ns(func(s stats.Second) int64 { return s.Max })},
		{"p99.9", colP999, ns(func(s stats.Second) int64 { return s.P999 })},
		{"p99", colP99, ns(func(s stats.Second) int64 { return s.P99 })},
		{"p90", colP90, ns(func(s stats.Second) int64 { return s.P90 })},
		{"p50", colP50, ns(func(s stats.Second) int64 { return s.P50 })},
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
		st := m.st.bad
		if code, _ := strconv.Atoi(c.Name); code >= 200 && code < 300 {
			st = m.st.good
		} else if code >= 300 && code < 400 {
			st = m.st.warn
		}
		out = append(out, st.Render("["+c.Name+"]")+" "+m.st.value.Render(fmtInt(c.N))+pct(c.N))
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
		m.kv("in", v(fmtBytes(rate(last.WireBytes, last.Span))+"/s")),
		m.kv("out", v(fmtBytes(rate(last.SentBytes, last.Span))+"/s")),
	}
}

// genPanel: the generator's own health and the bottleneck warning.
func (m *Model) genPanel(w int, hl health) []string {
	last := m.data.Last()
	v := m.st.value.Render
	cpu := 0.0
	if last.Span > 0 {
		cpu = last.CPU / float64(m.cfg.Cores)
	}
	cpuSt := m.st.value
	if cpu >= 0.9 {
		cpuSt = m.st.bad.Bold(true)
	}
	lag := m.st.dim.Render("n/a (closed)")
	if m.cfg.Open {
		lag = v(fmtLat(last.LagP99, "ms") + " ms")
		if last.LagP99 > int64(time.Millisecond) {
			lag = m.st.bad.Render(fmtLat(last.LagP99, "ms") + " ms")
		}
	}
	out := []string{
		m.kv("CPU", cpuSt.Render(fmt.Sprintf("%.0f%%", 100*cpu))+m.st.dim.Render(fmt.Sprintf(" of %d cores", m.cfg.Cores))),
		m.kv("lag p99", lag),
		m.kv("queued", v(fmtInt(m.data.Queued))),
	}
	if hl.Limited {
		out = append(out, m.st.alert.Render(" GENERATOR-LIMITED "))
		for _, r := range hl.Reasons {
			out = append(out, wrap("· "+r, w)...)
		}
	} else if len(m.data.Series) > 0 {
		for _, l := range wrap("OK: the target sets the pace", w) {
			out = append(out, m.st.good.Render(l))
		}
	}
	return out
}

// stepsPanel: one row per scenario step.
func (m *Model) stepsPanel(w, h int) []string {
	u := m.latUnit()
	out := []string{m.st.dim.Render(fmt.Sprintf("%-20s %10s %10s %8s %8s", "step", "req/s", "errors", "p50", "p99"))}
	for _, s := range m.data.Steps {
		out = append(out, fmt.Sprintf("%-20s %10s %10s %8s %8s", fit(s.Name, 20, false), fmtSI(s.RPS), fmtInt(s.Errors), fmtLat(s.P50, u), fmtLat(s.P99, u)))
	}
	if len(out) > h && h > 0 {
		out = out[:h]
	}
	return out
}

// compactBody is the small-terminal layout: the same numbers as lines.
func (m *Model) compactBody(h int) []string {
	if h <= 0 {
		return nil
	}
	w := m.width
	hl := m.health()
	v, l := m.st.value.Render, m.st.dim.Render
	footer := l(" ") + v("q") + l(" stop  ") + v("?") + l(" keys")
	if hl.Limited {
		footer = m.st.alert.Render(fit(" ⚠ GENERATOR-LIMITED", w, true))
	}
	var out []string
	if m.help {
		out = []string{
			v("q") + "/" + v("Ctrl-C") + " stop, report",
			v("?") + " help  " + v("Esc") + " close",
			v("w") + "/" + v("W") + " chart window",
			v("u") + "/" + v("U") + " time unit",
		}
	} else {
		last := m.data.Last()
		u := m.latUnit()
		out = append(out, flow([]string{
			l("req/s ") + m.st.rps.Render(fmtSI(rate(last.Requests, last.Span))),
			l("avg ") + v(fmtSI(m.avgRate())), l("total ") + v(fmtSI(float64(m.data.Requests))),
		}, w)...)
		out = append(out, flow([]string{
			l(u), m.st.p50.Render("p50") + " " + v(fmtLat(last.P50, u)), m.st.p90.Render("p90") + " " + v(fmtLat(last.P90, u)),
			m.st.p99.Render("p99") + " " + v(fmtLat(last.P99, u)), m.st.p999.Render("p99.9") + " " + v(fmtLat(last.P999, u)),
			m.st.pmax.Render("max") + " " + v(fmtLat(last.Max, u)),
		}, w)...)
		st := []string{l("status")}
		for _, c := range m.data.Status {
			st = append(st, c.Name+":"+fmtSI(float64(c.N)))
		}
		out = append(out, flow(st, w)...)
		er := []string{l("errors"), v(fmtSI(float64(m.data.Errors)))}
		for _, c := range m.data.Failures {
			er = append(er, m.st.bad.Render(c.Name+":"+fmtSI(float64(c.N))))
		}
		out = append(out, flow(er, w)...)
		out = append(out, flow([]string{
			l("conns ") + v(fmtInt(last.ConnsOpen)), l("in ") + v(fmtBytes(rate(last.WireBytes, last.Span))+"/s"),
			l("out ") + v(fmtBytes(rate(last.SentBytes, last.Span))+"/s"),
		}, w)...)
		cpu := 0.0
		if last.Span > 0 {
			cpu = last.CPU / float64(m.cfg.Cores)
		}
		lag := "-"
		if m.cfg.Open {
			lag = fmtLat(last.LagP99, "ms") + "ms"
		}
		out = append(out, flow([]string{
			l("cpu ") + v(fmt.Sprintf("%.0f%%", 100*cpu)), l("lag p99 ") + v(lag), l("queued ") + v(fmtSI(float64(m.data.Queued))),
		}, w)...)
		if len(m.data.Series) > 0 && len(out) < h-1 {
			vals := make([]float64, 0, len(m.data.Series))
			for _, s := range m.windowed() {
				vals = append(vals, rate(s.Requests, s.Span))
			}
			out = append(out, m.st.rps.Render(sparkline(vals, w)))
		}
	}
	if len(out) > h-1 {
		out = out[:max(h-1, 0)]
	}
	return append(out, footer)
}
