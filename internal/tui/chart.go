package tui

import (
	"math"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	tslc "github.com/NimbleMarkets/ntcharts/linechart/timeserieslinechart"
	"github.com/charmbracelet/lipgloss"

	"hail/internal/stats"
)

// line is one data set of a chart: a value per second shown.
type line struct {
	name  string
	style lipgloss.Style
	val   func(s stats.Second) float64
}

// window returns the seconds the charts show: the last window's worth, or
// all of them.
func (m *Model) windowed() []stats.Second {
	s := m.data.Series
	wd := windows[m.window]
	if wd <= 0 || len(s) == 0 {
		return s
	}
	from := s[len(s)-1].Index - int(wd/time.Second) + 1
	i := len(s)
	for i > 0 && s[i-1].Index >= from {
		i--
	}
	return s[i:]
}

// chart draws lines over secs in a w×h braille chart with axes (ntcharts).
// Too small an area gets a sparkline of the first line instead.
func (m *Model) chart(w, h int, secs []stats.Second, lines []line, yfmt func(float64) string) []string {
	if w <= 0 || h <= 0 {
		return nil
	}
	if len(secs) == 0 {
		return []string{m.st.dim.Render("waiting for the first second…")}
	}
	if w < 16 || h < 4 {
		vals := make([]float64, len(secs))
		for i, s := range secs {
			vals[i] = lines[0].val(s)
		}
		return []string{lines[0].style.Render(sparkline(vals, w))}
	}
	var top float64
	for _, s := range secs {
		for _, l := range lines {
			if v := l.val(s); v > top && !math.IsInf(v, 0) {
				top = v
			}
		}
	}
	// Labels every ystep rows fall on round numbers: the x axis and its
	// labels take the chart's last two rows.
	rows := h - 2
	ystep := max(2, rows/3)
	inc := niceCeil(top * float64(ystep) / float64(rows))
	top = inc * float64(rows) / float64(ystep)
	x0, x1 := secs[0].Index, secs[len(secs)-1].Index
	if wd := windows[m.window]; wd > 0 {
		x0 = min(x0, max(x1-int(wd/time.Second)+1, 0))
	}
	if x1-x0 < 2 {
		x1 = x0 + 2
	}
	opts := []tslc.Option{
		tslc.WithXYSteps(8, ystep),
		tslc.WithYRange(0, top),
		tslc.WithTimeRange(time.Unix(int64(x0), 0), time.Unix(int64(x1), 0)),
		tslc.WithAxesStyles(m.st.axis, m.st.axis),
		tslc.WithXLabelFormatter(func(_ int, v float64) string { return fmtSeconds(int(math.Round(v))) }),
		tslc.WithYLabelFormatter(func(_ int, v float64) string { return trimZeros(yfmt(v)) }),
	}
	names := make([]string, len(lines))
	for i, l := range lines {
		names[i] = l.name
		opts = append(opts, tslc.WithDataSetStyle(l.name, l.style))
	}
	c := tslc.New(w, h, opts...)
	for _, s := range secs {
		t := time.Unix(int64(s.Index), 0)
		for _, l := range lines {
			v := l.val(s)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			c.PushDataSet(l.name, tslc.TimePoint{Time: t, Value: min(v, top)})
		}
	}
	c.DrawBrailleDataSets(names)
	return m.canvasLines(&c.Canvas)
}

// canvasLines renders a chart's canvas, styling each run of cells of one
// color once (ntcharts' own View styles every cell, which costs ~50× more).
func (m *Model) canvasLines(cv *canvas.Model) []string {
	out := make([]string, 0, cv.Height())
	var run strings.Builder
	for y := range cv.Height() {
		var b strings.Builder
		var cur lipgloss.TerminalColor = lipgloss.NoColor{}
		flush := func() {
			if run.Len() == 0 {
				return
			}
			if _, none := cur.(lipgloss.NoColor); none || !m.st.on {
				b.WriteString(run.String())
			} else {
				ps := m.st.paint(cur)
				b.WriteString(ps[0])
				b.WriteString(run.String())
				b.WriteString(ps[1])
			}
			run.Reset()
		}
		for x := range cv.Width() {
			cell := cv.Cell(canvas.Point{X: x, Y: y})
			if fg := cell.Style.GetForeground(); fg != cur {
				flush()
				cur = fg
			}
			if cell.Rune == 0 {
				run.WriteByte(' ')
			} else {
				run.WriteRune(cell.Rune)
			}
		}
		flush()
		out = append(out, b.String())
	}
	return out
}

// sparkline draws the last w values with block heights.
func sparkline(vals []float64, w int) string {
	if w <= 0 {
		return ""
	}
	if len(vals) > w {
		vals = vals[len(vals)-w:]
	}
	var top float64
	for _, v := range vals {
		top = max(top, v)
	}
	ticks := []rune("▁▂▃▄▅▆▇█")
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if top > 0 {
			i = min(int(v/top*float64(len(ticks)-1)+0.5), len(ticks)-1)
		}
		b.WriteRune(ticks[max(i, 0)])
	}
	return b.String()
}

// hbar draws a horizontal bar of frac×w cells with eighth-cell precision.
func hbar(frac float64, w int) string {
	if w <= 0 || frac <= 0 || math.IsNaN(frac) {
		return ""
	}
	eighths := int(math.Round(min(frac, 1) * float64(w) * 8))
	if eighths == 0 {
		eighths = 1 // anything counted shows
	}
	s := strings.Repeat("█", eighths/8)
	if r := eighths % 8; r > 0 {
		s += string([]rune("▏▎▍▌▋▊▉")[r-1])
	}
	return s
}

// rate is n per second over span seconds.
func rate(n int64, span float64) float64 {
	if span <= 0 {
		return 0
	}
	return float64(n) / span
}

// trimZeros drops a number's trailing decimal zeros: 4.00k → 4k, 2.50 → 2.5.
func trimZeros(s string) string {
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return s
	}
	j := len(s)
	for j > i && (s[j-1] < '0' || s[j-1] > '9') {
		j--
	}
	num, suffix := s[:j], s[j:]
	num = strings.TrimRight(num, "0")
	num = strings.TrimSuffix(num, ".")
	return num + suffix
}
