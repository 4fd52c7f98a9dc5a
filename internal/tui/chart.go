package tui

import (
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"hail/internal/stats"
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
	value := func(l line, s stats.Second) float64 {
		v := l.val(s)
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return 0
		}
		return v
	}
	spark := func() []string {
		vals := make([]float64, len(secs))
		for i, s := range secs {
			vals[i] = value(lines[0], s)
		}
		return []string{m.colored(lines[0].color, sparkline(vals, w))}
	}
	if w < 16 || h < 4 {
		return spark()
	}
	var top float64
	for _, s := range secs {
		for _, l := range lines {
			top = max(top, value(l, s))
		}
	}
	// Labels every ystep rows fall on round numbers.
	ph := h - 2 // plot rows
	ystep := max(2, ph/3)
	inc := niceCeil(top * float64(ystep) / float64(ph))
	ymax := inc * float64(ph) / float64(ystep)
	labels := make([]string, ph+1) // by row from the top; labels[ph] sits on the axis
	lw := 0
	for k := 0; k*ystep <= ph; k++ {
		t := trimZeros(yfmt(float64(k) * inc))
		labels[ph-k*ystep] = t
		lw = max(lw, width(t))
	}
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
	// Plot each line into the dot grid.
	dotsX, dotsY := pw*2, ph*4
	mask := make([]uint8, pw*ph)
	color := make([]int8, pw*ph) // index into lines, -1 for none
	for i := range color {
		color[i] = -1
	}
	for li, l := range lines {
		set := func(x, y int) {
			if x < 0 || y < 0 || x >= dotsX || y >= dotsY {
				return
			}
			c := (y/4)*pw + x/2
			mask[c] |= brailleBit[x%2][y%4]
			color[c] = int8(li)
		}
		px, py := -1, -1
		for _, s := range secs {
			x := int(math.Round(float64(s.Index-x0) / float64(x1-x0) * float64(dotsX-1)))
			y := dotsY - 1 - int(math.Round(min(value(l, s)/ymax, 1)*float64(dotsY-1)))
			if px < 0 {
				set(x, y)
			} else {
				drawLine(px, py, x, y, set)
			}
			px, py = x, y
		}
	}
	out := make([]string, 0, h)
	var b strings.Builder
	axis := m.paints(lipgloss.Color("8"))
	for r := range ph {
		b.Reset()
		b.WriteString(axis[0])
		b.WriteString(strings.Repeat(" ", lw-width(labels[r])))
		b.WriteString(labels[r])
		b.WriteString("│")
		b.WriteString(axis[1])
		cur := int8(-1)
		for c := range pw {
			i := r*pw + c
			if mask[i] != 0 && color[i] != cur || mask[i] == 0 && cur >= 0 {
				if cur >= 0 {
					b.WriteString(m.paints(lines[cur].color)[1])
				}
				cur = -1
				if mask[i] != 0 {
					cur = color[i]
					b.WriteString(m.paints(lines[cur].color)[0])
				}
			}
			if mask[i] == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteRune(rune(0x2800 + int(mask[i])))
			}
		}
		if cur >= 0 {
			b.WriteString(m.paints(lines[cur].color)[1])
		}
		out = append(out, b.String())
	}
	out = append(out, axis[0]+strings.Repeat(" ", lw-width(labels[ph]))+labels[ph]+"└"+strings.Repeat("─", pw)+axis[1])
	// Time labels under the axis, about every 8 columns, never overlapping.
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
	out = append(out, axis[0]+strings.Repeat(" ", lw+1)+string(row)+axis[1])
	return out
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
