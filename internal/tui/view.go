// The screen: View assembles the header (title and progress, redrawn every
// frame) over the panels (cached until the data, the size or a key changes
// them), in the full layout of boxes or the compact one for small terminals;
// the footer and the help. The panels are in panels.go, text layout in
// layout.go, charts in chart.go.

package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/hail-loadgen/hail/internal/stats"
)

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
	stage := m.stageText(el)
	if m.title.w != m.width || m.title.state != state || m.title.stage != stage {
		m.title.w, m.title.state, m.title.stage, m.title.line = m.width, state, stage, m.titleLine(state, stage)
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

// titleLine is the first line: what is loaded (a scenario: its name, its
// method mix and its stage), the state and the keys.
func (m *Model) titleLine(state, stage string) string {
	model := "closed model"
	if m.cfg.Open {
		model = "open model"
		if m.cfg.Rate > 0 {
			model += ", -q " + strconv.FormatFloat(m.cfg.Rate, 'g', -1, 64)
		}
	}
	right := m.st.dim.Render(state+"  ") + m.st.value.Render("?") + m.st.dim.Render(" keys  ") + m.st.value.Render("q") + m.st.dim.Render(" stop")
	if stage != "" { // rate stages of a plain run: the stage in progress names the rate
		model = stage
	}
	left := m.st.brand.Render("hail") + " " + m.cfg.Method + " " + m.cfg.Target + m.st.dim.Render(fmt.Sprintf(" · %d connections · %s", m.cfg.Connections, model))
	if sc := m.cfg.Scenario; sc != nil {
		// The stage (its unit names the model) before the mix: narrow
		// terminals cut the end of the line.
		if stage == "" {
			stage = fmt.Sprintf("%d connections · %s", m.cfg.Connections, model)
		}
		left = m.st.brand.Render("hail") + " " + m.st.value.Render(sc.Name) + m.st.dim.Render(" · ") + stage
		if sc.Mix != "" {
			left += m.st.dim.Render(" · ") + sc.Mix
		}
	}
	lw := m.width - width(right) - 1
	if lw < 20 {
		return left
	}
	return fit(left, lw, true) + " " + right
}

// stageText is the stage in progress, as "stage 2/3: 87 / 256
// connections" (the target now / at the stage's end), or "".
func (m *Model) stageText(el time.Duration) string {
	at := m.cfg.Stage
	if sc := m.cfg.Scenario; sc != nil {
		at = sc.Stage
	}
	if at == nil {
		return ""
	}
	s := at(el)
	if s.Of == 0 {
		return ""
	}
	return fmt.Sprintf("stage %d/%d: %s / %s %s", s.Index, s.Of, fmtSI(math.Floor(s.Now)), fmtSI(s.Target), s.Unit)
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
		span += s.Span.Seconds()
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
		stepsH = min(n+3, avail/3)
	}
	// The target process: a third box beside the charts on wide
	// terminals, else a row of its own (its numbers only, when short).
	target := m.cfg.TargetPID > 0
	targetRow := 0
	if target && W < 150 {
		targetRow = 3
		if avail-stepsH >= 30 {
			targetRow = min(10, avail/4)
		}
	}
	llmH := 0
	if m.data.LLM != nil {
		llmH = max((avail-stepsH-targetRow)/3, 6)
	}
	rowA := max((avail-stepsH-targetRow-llmH)*11/20, 6)
	rowB := avail - stepsH - targetRow - llmH - rowA
	targetTitle := fmt.Sprintf("Target process (pid %d)", m.cfg.TargetPID)
	var out []string
	if target && targetRow == 0 {
		aw := split(W, 3)
		out = append(out, hjoin(
			m.box("Requests/s", aw[0], rowA, m.rpsPanel(aw[0]-2, rowA-2)),
			m.box("Latency ("+m.latUnit()+")", aw[1], rowA, m.latPanel(aw[1]-2, rowA-2)),
			m.box(targetTitle, aw[2], rowA, m.targetPanel(aw[2]-2, rowA-2)),
		)...)
	} else {
		aw := split(W, 2)
		out = append(out, hjoin(
			m.box("Requests/s", aw[0], rowA, m.rpsPanel(aw[0]-2, rowA-2)),
			m.box("Latency ("+m.latUnit()+")", aw[1], rowA, m.latPanel(aw[1]-2, rowA-2)),
		)...)
	}
	if llmH > 0 {
		lw := split(W, 3)
		out = append(out, hjoin(
			m.box("Time to first token ("+m.llmUnit(m.data.LLM.TTFTP99)+")", lw[0], llmH, m.ttftPanel(lw[0]-2, llmH-2)),
			m.box("Inter-token latency ("+m.llmUnit(m.data.LLM.ITLP99)+")", lw[1], llmH, m.itlPanel(lw[1]-2, llmH-2)),
			m.box("Output tokens/s & streams", lw[2], llmH, m.tokensPanel(lw[2]-2, llmH-2)),
		)...)
	}
	if stepsH > 0 {
		out = append(out, m.box("Steps", W, stepsH, m.stepsPanel(W-2, stepsH-2))...)
	}
	if targetRow > 0 {
		out = append(out, m.box(targetTitle, W, targetRow, m.targetPanel(W-2, targetRow-2))...)
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
		"Steps (scenarios): per step its requests, req/s now, errors and failed checks, p50 and p99, capture misses, yields and status codes.",
		"Target process (--target-pid): its RSS and CPU now, and both over time.",
		"Time to first token, Inter-token latency (token streams: hail llm): the run's p50 and p99 (TTFT from the intended send, and p99 from the actual send; ITL per token, and TPOT p99), and each second's p50 and p99 over time.",
		"Output tokens/s & streams: output tokens per second now, on average and in all, and over time; streams in flight, done, truncated by the run's end and failed; with --slo, goodput (requests meeting every objective) per second and its share.",
		"Generator: hail's own CPU (and others' on its cores), its own send lateness p99 (lag), the wait for a free connection p99 (wait), queued, unsent and not-sent requests, and the bottleneck as the final report names it: TARGET-BOUND when every connection is busy, GENERATOR-LIMITED when hail's CPU, other processes or late wake-ups hold it back.",
		"Numbers refresh at each collector tick (once a second); the progress line every frame.",
	} {
		out = append(out, wrap(p, w)...)
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
		out = m.compactStats(h)
	}
	if len(out) > h-1 {
		out = out[:max(h-1, 0)]
	}
	return append(out, footer)
}

// compactStats are compactBody's lines of numbers, flowed to the width:
// the traffic, hail's and the target's load, the scenario's stage and
// steps and, if there is room for it in h lines (the footer's included), a
// sparkline of requests per second.
func (m *Model) compactStats(h int) []string {
	w := m.width
	last := m.data.Last()
	out := m.compactTraffic(last)
	out = append(out, m.compactLLM()...)
	out = append(out, m.compactLoad(last)...)
	if sc := m.cfg.Scenario; sc != nil {
		v, l := m.st.value.Render, m.st.dim.Render
		toks := []string{l("scenario ") + v(sc.Name)}
		if st := m.stageText(m.elapsed()); st != "" {
			toks = append(toks, st)
		}
		out = append(out, flow(toks, w)...)
		for _, s := range m.data.Steps {
			out = append(out, flow([]string{v(s.Name), fmtSI(s.RPS) + l("/s"), l("err ") + fmtSI(float64(s.Errors))}, w)...)
		}
	}
	if len(m.data.Series) > 0 && len(out) < h-1 {
		vals := make([]float64, 0, len(m.data.Series))
		for _, s := range m.windowed() {
			vals = append(vals, rate(s.Requests, s.Span.Seconds()))
		}
		out = append(out, m.st.rps.Render(sparkline(vals, w)))
	}
	return out
}

// compactTraffic are the lines of requests/s, latency, statuses, errors
// and bytes/s, last the latest second.
func (m *Model) compactTraffic(last stats.Second) []string {
	w := m.width
	v, l := m.st.value.Render, m.st.dim.Render
	u := m.latUnit()
	out := flow([]string{
		l("req/s ") + m.st.rps.Render(fmtSI(rate(last.Requests, last.Span.Seconds()))),
		l("avg ") + v(fmtSI(m.avgRate())), l("total ") + v(fmtSI(float64(m.data.Requests))),
	}, w)
	out = append(out, flow([]string{
		l(u), m.st.p50.Render("p50") + " " + v(fmtLat(int64(last.P50), u)), m.st.p90.Render("p90") + " " + v(fmtLat(int64(last.P90), u)),
		m.st.p99.Render("p99") + " " + v(fmtLat(int64(last.P99), u)), m.st.p999.Render("p99.9") + " " + v(fmtLat(int64(last.P999), u)),
		m.st.pmax.Render("max") + " " + v(fmtLat(int64(last.Max), u)),
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
	return append(out, flow([]string{
		l("conns ") + v(fmtInt(last.ConnsOpen)), l("in ") + v(fmtBytes(rate(last.WireBytes, last.Span.Seconds()))+"/s"),
		l("out ") + v(fmtBytes(rate(last.SentBytes, last.Span.Seconds()))+"/s"),
	}, w)...)
}

// compactLoad are the lines of hail's CPU, send lag and queue and, when
// one is watched, the target's memory and CPU, last the latest second.
func (m *Model) compactLoad(last stats.Second) []string {
	w := m.width
	v, l := m.st.value.Render, m.st.dim.Render
	cpu := 0.0
	if last.Span.Seconds() > 0 {
		cpu = last.CPU / float64(m.cfg.Cores)
	}
	lag, wait := "-", "-"
	if m.cfg.Open {
		lag, wait = fmtLat(int64(last.LagP99), "ms")+"ms", fmtLat(int64(last.WaitP99), "ms")+"ms"
	}
	out := flow([]string{
		l("cpu ") + v(fmt.Sprintf("%.0f%%", 100*cpu)), l("lag p99 ") + v(lag), l("wait p99 ") + v(wait),
		l("queued ") + v(fmtSI(float64(m.data.Queued))),
	}, w)
	if m.cfg.TargetPID > 0 {
		out = append(out, flow([]string{l("target rss ") + v(fmtBytes(float64(last.TargetRSS))),
			l("cpu ") + v(fmt.Sprintf("%.0f%%", 100*last.TargetCPU))}, w)...)
	}
	return out
}
