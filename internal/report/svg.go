// The SVG chart kit behind the HTML report: axes (linear and log, with
// round ticks), a chart frame with grid, labels and legend, polylines and
// hover columns carrying tooltips. HTML charts are inline SVG drawn here: a
// few line and bar charts need far less than a plotting library, and the
// page stays one self-contained file that opens offline. It knows nothing
// of Results; charts.go draws the report's charts with it.

package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The frame of every chart, in SVG user units: width, height and the
// padding around the plot area.
const (
	chartW   = 920
	chartH   = 280
	padLeft  = 78
	padRight = 24
	padTop   = 34
	padBot   = 44
)

// palette is the charts' colors.
var palette = struct{ blue, green, orange, red, purple, grey, teal string }{
	"#2563eb", "#16a34a", "#ea580c", "#dc2626", "#7c3aed", "#6b7280", "#0d9488"}

// line is one data series: a y per x of the chart (NaN: no point).
type line struct {
	name, color string
	ys          []float64
	dash        bool
}

// tick is a labeled value on an axis.
type tick struct {
	v     float64
	label string
}

// axis maps values in [lo, hi] (log10 when log) onto a pixel range.
type axis struct {
	lo, hi float64
	log    bool
	ticks  []tick
}

// pos places v on the pixel range [from, to], clamped to it.
func (a axis) pos(v float64, from, to float64) float64 {
	var f float64
	if a.log {
		if v <= 0 {
			v = a.lo
		}
		f = (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	} else {
		f = (v - a.lo) / (a.hi - a.lo)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	f = math.Max(0, math.Min(1, f))
	return from + f*(to-from)
}

// linearAxis makes a 0-based axis up to a round number above hi, with
// ticks every 1, 2 or 5 times a power of ten.
func linearAxis(hi float64, format func(float64) string) axis {
	if hi <= 0 {
		hi = 1
	}
	step := niceStep(hi / 4)
	top := tidy(math.Ceil(hi/step-1e-12)*step, step)
	return axis{lo: 0, hi: top, ticks: stepTicks(top, step, format)}
}

// byteAxis is linearAxis for byte counts: ticks at round numbers of the
// unit (KiB, MiB, GiB) the top falls in, labeled "20 MiB".
func byteAxis(hi float64) axis {
	unit, name := 1.0, "B"
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if hi < unit*1024 {
			break
		}
		unit, name = unit*1024, u
	}
	a := linearAxis(hi/unit, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " " + name })
	a.hi *= unit
	for i := range a.ticks {
		a.ticks[i].v *= unit
	}
	return a
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	e := int(math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v := tidy(m*math.Pow10(e), math.Pow10(e)); v >= x*(1-1e-12) {
			return v
		}
	}
	return math.Pow10(e + 1)
}

// stepTicks are the multiples of step from 0 to top, labeled by format.
func stepTicks(top, step float64, format func(float64) string) []tick {
	var ts []tick
	for i := 0; ; i++ {
		v := tidy(float64(i)*step, step)
		if v > top*(1+1e-9)+1e-300 {
			break
		}
		ts = append(ts, tick{v, format(v)})
	}
	return ts
}

// tidy is the float nearest to v written with as many decimals as step
// has: 3 × 0.1 is 0.3, not 0.30000000000000004, so labels show no noise.
func tidy(v, step float64) float64 {
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	t, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', dec, 64), 64)
	if err != nil {
		return v
	}
	return t
}

// logAxis makes a log axis over [lo, hi] with 1-2-5 ticks.
func logAxis(lo, hi float64, format func(float64) string) axis {
	if lo <= 0 {
		lo = hi / 1000
	}
	if hi <= lo {
		hi = lo * 10
	}
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	a := axis{lo: math.Pow10(e0), hi: math.Pow10(e1), log: true}
	mults := []float64{1, 2, 5}
	if e1-e0 > 4 {
		mults = []float64{1}
	}
	for e := e0; e <= e1; e++ {
		for _, m := range mults {
			if v := tidy(m*math.Pow10(e), math.Pow10(e)); v <= a.hi*1.0001 {
				a.ticks = append(a.ticks, tick{v, format(v)})
			}
		}
	}
	return a
}

// chart is one SVG chart being drawn: its frame and axes, and the markup
// so far.
type chart struct {
	b              *strings.Builder
	id, title      string
	x, y           axis
	left, right    float64
	top, bottom    float64
	xLabel, yLabel string
	markEnd        float64 // where the last stage label ends (boundary)
}

// newChart starts a chart: the figure, title, grid, ticks, axes and labels.
func newChart(id, title string, x, y axis, xLabel, yLabel string) *chart {
	// The y tick labels end 6 units left of the plot, the rotated axis
	// title stands 10 units left of the longest: the plot moves right when
	// the labels are long, so the two never overlap.
	labelW := 0.0
	for _, t := range y.ticks {
		labelW = math.Max(labelW, textWidth(t.label, 11))
	}
	left := math.Max(padLeft, 6+labelW+10+16)
	c := &chart{b: &strings.Builder{}, id: id, title: title, x: x, y: y, left: left, right: chartW - padRight,
		top: padTop, bottom: chartH - padBot, xLabel: xLabel, yLabel: yLabel}
	fmt.Fprintf(c.b, "<figure class=\"fig\"><svg class=\"chart\" id=\"%s\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\" xmlns=\"http://www.w3.org/2000/svg\">", esc(id), chartW, chartH, esc(title))
	fmt.Fprintf(c.b, "<text class=\"title\" x=\"%.1f\" y=\"20\">%s</text>", c.left, esc(title))
	for _, t := range y.ticks {
		py := y.pos(t.v, c.bottom, c.top)
		fmt.Fprintf(c.b, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c.left, c.right, py, py)
		fmt.Fprintf(c.b, "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\">%s</text>", c.left-6, py+4, esc(t.label))
	}
	for _, t := range x.ticks {
		px := x.pos(t.v, c.left, c.right)
		fmt.Fprintf(c.b, "<line class=\"xgrid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", px, px, c.top, c.bottom)
		fmt.Fprintf(c.b, "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\">%s</text>", px, c.bottom+19, esc(t.label)) // clear of the lowest y label
	}
	fmt.Fprintf(c.b, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c.left, c.right, c.bottom, c.bottom)
	fmt.Fprintf(c.b, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c.left, c.left, c.top, c.bottom)
	if xLabel != "" {
		fmt.Fprintf(c.b, "<text class=\"xlabel\" x=\"%.1f\" y=\"%d\">%s</text>", (c.left+c.right)/2, chartH-6, esc(xLabel))
	}
	if yLabel != "" {
		fmt.Fprintf(c.b, "<text class=\"ylabel\" transform=\"translate(%.1f %.1f) rotate(-90)\">%s</text>", c.left-6-labelW-10-4, (c.top+c.bottom)/2, esc(yLabel))
	}
	return c
}

// polyline draws l over xs (a single point as a dot), skipping NaNs.
func (c *chart) polyline(xs []float64, l line) {
	var pts []string
	for i, y := range l.ys {
		if i >= len(xs) || math.IsNaN(y) {
			continue
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", c.x.pos(xs[i], c.left, c.right), c.y.pos(y, c.bottom, c.top)))
	}
	if len(pts) == 0 {
		return
	}
	dash := ""
	if l.dash {
		dash = ` stroke-dasharray="5 4"`
	}
	if len(pts) == 1 {
		var x, y string
		x, y, _ = strings.Cut(pts[0], ",")
		fmt.Fprintf(c.b, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\"/>", x, y, l.color)
		return
	}
	fmt.Fprintf(c.b, "<polyline class=\"line\" fill=\"none\" stroke=\"%s\"%s points=\"%s\"/>", l.color, dash, strings.Join(pts, " "))
}

// hoverColumns adds invisible per-x hit areas carrying a tooltip.
func (c *chart) hoverColumns(xs []float64, tips []string) {
	if len(xs) == 0 {
		return
	}
	w := (c.right - c.left) / float64(max(len(xs), 1))
	for i, x := range xs {
		if i >= len(tips) {
			break
		}
		px := c.x.pos(x, c.left, c.right)
		fmt.Fprintf(c.b, "<rect class=\"hit\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-tip=\"%s\"><title>%s</title></rect>",
			px-w/2, c.top, w, c.bottom-c.top, esc(tips[i]), esc(tips[i]))
	}
}

// legend names the lines at the top right.
func (c *chart) legend(ls []line) {
	x := c.right
	for i := len(ls) - 1; i >= 0; i-- {
		l := ls[i]
		wd := float64(len(l.name))*7 + 26
		x -= wd
		fmt.Fprintf(c.b, "<rect x=\"%.1f\" y=\"10\" width=\"14\" height=\"4\" fill=\"%s\"/><text class=\"legend\" x=\"%.1f\" y=\"16\">%s</text>", x, l.color, x+18, esc(l.name))
	}
}

// empty writes msg in the middle of the plot area.
func (c *chart) empty(msg string) {
	fmt.Fprintf(c.b, "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\">%s</text>", (c.left+c.right)/2, (c.top+c.bottom)/2, esc(msg))
}

// done closes the chart and returns its markup, with the tooltip line.
func (c *chart) done() string {
	c.b.WriteString("</svg><div class=\"tip\"></div></figure>\n")
	return c.b.String()
}

// textWidth estimates the width of s in SVG units at font size px (a
// generous average glyph width of the report's sans-serif font), for
// layout that must not overlap.
func textWidth(s string, px float64) float64 {
	return float64(len([]rune(s))) * px * 0.62
}

// compactNum formats an axis count: 1500 as 1.5k, 2000000 as 2M.
func compactNum(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// fmtDurShort formats seconds compactly for axis labels.
func fmtDurShort(s float64) string {
	trim := func(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
	switch {
	case s == 0:
		return "0"
	case s < 1e-3:
		return trim(s*1e6) + "µs"
	case s < 1:
		return trim(s*1e3) + "ms"
	}
	return trim(s) + "s"
}

// band shades the plot between x0 and x1 (clamped to the x axis) in class
// cls, with label at its top left ("" for none): a stage's warmup, a drain.
func (c *chart) band(x0, x1 float64, cls, label string) {
	p0, p1 := c.x.pos(x0, c.left, c.right), c.x.pos(x1, c.left, c.right)
	if p1-p0 < 0.5 {
		return
	}
	fmt.Fprintf(c.b, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>%s</title></rect>", cls, p0, c.top, p1-p0, c.bottom-c.top, esc(label))
	if label != "" && textWidth(label, 11) < p1-p0 {
		fmt.Fprintf(c.b, "<text class=\"bandlabel\" x=\"%.1f\" y=\"%.1f\">%s</text>", p0+3, c.bottom-6, esc(label))
	}
}

// boundary draws a vertical dashed line at x with label beside its top:
// the start of a stage. A label that would run into the previous one is
// left out (its line stays; its tooltip names it).
func (c *chart) boundary(x float64, label string) {
	px := c.x.pos(x, c.left, c.right)
	fmt.Fprintf(c.b, "<line class=\"boundary\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"><title>%s</title></line>", px, px, c.top, c.bottom, esc(label))
	if label != "" && px+3 >= c.markEnd+4 {
		fmt.Fprintf(c.b, "<text class=\"stagelabel\" x=\"%.1f\" y=\"%.1f\">%s</text>", px+3, c.top+11, esc(label))
		c.markEnd = px + 3 + textWidth(label, 11)
	}
}
