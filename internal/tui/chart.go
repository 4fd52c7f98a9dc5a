// The braille line charts of the Requests/s and Latency panels, with their
// axes and labels; sparklines and bars for small spaces.

package tui

import (
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/hail-loadgen/hail/internal/stats"
)

// line is one data set of a chart: a value per second shown, drawn in a
// terminal color ("9": bright red, ...).
type line struct {
	name  string
	color lipgloss.Color
	val   func(s stats.Second) float64
}

// windowed returns the seconds the charts show: the last window's worth,
// or all of them.
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

// chart draws lines over secs in a w×h braille line chart: y labels and
// axis on the left, the time axis and its labels in the last two rows.
// Each cell holds 2×4 dots; where lines cross, the dots of both show and
// the cell takes the color of the line drawn last. Too small an area gets
// a sparkline of the first line instead.
func (m *Model) chart(w, h int, secs []stats.Second, lines []line, yfmt func(float64) string) []string {
	if w <= 0 || h <= 0 {
		return nil
	}
	if len(secs) == 0 {
		return []string{m.st.dim.Render("waiting for the first second…")}
	}
	spark := func() []string {
		vals := make([]float64, len(secs))
		for i, s := range secs {
			vals[i] = chartValue(lines[0], s)
		}
		return []string{m.colored(lines[0].color, sparkline(vals, w))}
	}
	if w < 16 || h < 4 {
		return spark()
	}
	var top float64
	for _, s := range secs {
		for _, l := range lines {
			top = max(top, chartValue(l, s))
		}
	}
	ph := h - 2 // plot rows
	labels, lw, ymax := yLabels(top, ph, yfmt)
	pw := w - lw - 1 // plot columns
	if pw < 8 {
		return spark()
	}
	x0, x1 := secs[0].Index, secs[len(secs)-1].Index
	if wd := windows[m.window]; wd > 0 {
		x0 = min(x0, max(x1-int(wd/time.Second)+1, 0))
	}
	if x1-x0 < 2 {
		x1 = x0 + 2
	}
	g := dotGrid{pw: pw, ph: ph, x0: x0, x1: x1, ymax: ymax}
	g.plot(secs, lines)
	out := m.plotRows(&g, lines, labels, lw)
	axis := m.paints(lipgloss.Color("8"))
	out = append(out, axis[0]+strings.Repeat(" ", lw-width(labels[ph]))+labels[ph]+"└"+strings.Repeat("─", pw)+axis[1])
	return append(out, axis[0]+strings.Repeat(" ", lw+1)+timeLabels(x0, x1, pw)+axis[1])
}

// chartValue is l's value at s, with what cannot be drawn (NaN, infinite,
// negative) as 0.
func chartValue(l line, s stats.Second) float64 {
	v := l.val(s)
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}

// yLabels puts labels on round numbers every few of ph plot rows, for
// values up to top. It returns them by row from the top (labels[ph] sits
// on the axis), their width, and the value at the top of the plot.
func yLabels(top float64, ph int, yfmt func(float64) string) ([]string, int, float64) {
	ystep := max(2, ph/3)
	inc := niceCeil(top * float64(ystep) / float64(ph))
	ymax := inc * float64(ph) / float64(ystep)
	labels := make([]string, ph+1)
	lw := 0
	for k := 0; k*ystep <= ph; k++ {
		t := trimZeros(yfmt(float64(k) * inc))
		labels[ph-k*ystep] = t
		lw = max(lw, width(t))
	}
	return labels, lw, ymax
}

// dotGrid is a chart's plot area of pw×ph braille cells: seconds x0…x1
// across, values 0…ymax up.
type dotGrid struct {
	pw, ph, x0, x1 int
	ymax           float64
	mask           []uint8 // the dots set in each cell
	color          []int8  // the line that last set a dot in each cell, -1 for none
}

// plot draws each line over secs into the grid, in order.
func (g *dotGrid) plot(secs []stats.Second, lines []line) {
	dotsX, dotsY := g.pw*2, g.ph*4
	g.mask = make([]uint8, g.pw*g.ph)
	g.color = make([]int8, g.pw*g.ph)
	for i := range g.color {
		g.color[i] = -1
	}
	for li, l := range lines {
		set := func(x, y int) {
			if x < 0 || y < 0 || x >= dotsX || y >= dotsY {
				return
			}
			c := (y/4)*g.pw + x/2
			g.mask[c] |= brailleBit[x%2][y%4]
			g.color[c] = int8(li)
		}
		px, py := -1, -1
		for _, s := range secs {
			x := int(math.Round(float64(s.Index-g.x0) / float64(g.x1-g.x0) * float64(dotsX-1)))
			y := dotsY - 1 - int(math.Round(min(chartValue(l, s)/g.ymax, 1)*float64(dotsY-1)))
			if px < 0 {
				set(x, y)
			} else {
				drawLine(px, py, x, y, set)
			}
			px, py = x, y
		}
	}
}

// plotRows renders the grid's rows, each after its y label (lw cells) and
// the axis, changing color only where the line does.
func (m *Model) plotRows(g *dotGrid, lines []line, labels []string, lw int) []string {
	out := make([]string, 0, g.ph+2)
	var b strings.Builder
	axis := m.paints(lipgloss.Color("8"))
	for r := range g.ph {
		b.Reset()
		b.WriteString(axis[0])
		b.WriteString(strings.Repeat(" ", lw-width(labels[r])))
		b.WriteString(labels[r])
		b.WriteString("│")
		b.WriteString(axis[1])
		cur := int8(-1)
		for c := range g.pw {
			i := r*g.pw + c
			if g.mask[i] != 0 && g.color[i] != cur || g.mask[i] == 0 && cur >= 0 {
				if cur >= 0 {
					b.WriteString(m.paints(lines[cur].color)[1])
				}
				cur = -1
				if g.mask[i] != 0 {
					cur = g.color[i]
					b.WriteString(m.paints(lines[cur].color)[0])
				}
			}
			if g.mask[i] == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteRune(rune(0x2800 + int(g.mask[i])))
			}
		}
		if cur >= 0 {
			b.WriteString(m.paints(lines[cur].color)[1])
		}
		out = append(out, b.String())
	}
	return out
}

// timeLabels is the row under the time axis: seconds x0…x1 labeled about
// every 8 of pw columns, never overlapping.
func timeLabels(x0, x1, pw int) string {
	row := []byte(strings.Repeat(" ", pw))
	last, next := "", 0
	for c := 0; c < pw; c += 8 {
		t := fmtSeconds(int(math.Round(float64(x0) + float64(x1-x0)*float64(c)/float64(pw-1))))
		if t == last || c < next || c+len(t) > pw {
			continue
		}
		copy(row[c:], t)
		last, next = t, c+len(t)+1
	}
	return string(row)
}

// brailleBit is the bit of each dot of a braille cell, by column and row.
var brailleBit = [2][4]uint8{{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}}

// drawLine calls set for every dot on the line from (x0, y0) to (x1, y1)
// (Bresenham).
func drawLine(x0, y0, x1, y1 int, set func(x, y int)) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	e := dx + dy
	for {
		set(x0, y0)
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x0 += sx
		} else {
			e += dx
			y0 += sy
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// paints returns the codes that start and end color c ("" with colors off).
func (m *Model) paints(c lipgloss.Color) [2]string {
	if !m.st.on {
		return [2]string{}
	}
	return m.st.paint(c)
}

// colored paints s in c (plain with colors off).
func (m *Model) colored(c lipgloss.Color, s string) string {
	p := m.paints(c)
	return p[0] + s + p[1]
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
