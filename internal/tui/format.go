package tui

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Time units the view can show latencies in; "auto" picks one from the
// current p50.
var units = []string{"auto", "ns", "µs", "ms", "s"}

// unitIndex maps -u's values onto units (minutes and hours show as seconds).
func unitIndex(u string) int {
	switch u {
	case "ns":
		return 1
	case "us", "µs":
		return 2
	case "ms":
		return 3
	case "s", "m", "h":
		return 4
	}
	return 0
}

// autoUnit picks the unit for a typical latency of ns nanoseconds.
func autoUnit(ns int64) string {
	switch {
	case ns <= 0:
		return "ms"
	case ns < 1_000:
		return "ns"
	case ns < 1_000_000:
		return "µs"
	case ns < 1_000_000_000:
		return "ms"
	}
	return "s"
}

// unitDiv is the number of nanoseconds in one unit.
func unitDiv(u string) float64 {
	switch u {
	case "ns":
		return 1
	case "µs":
		return 1e3
	case "ms":
		return 1e6
	}
	return 1e9
}

// fmtLat formats ns in unit u without the unit name, with about 3
// significant digits.
func fmtLat(ns int64, u string) string {
	if ns <= 0 {
		return "-"
	}
	return fmtNum(float64(ns) / unitDiv(u))
}

// fmtNum formats v with about 3 significant digits, no exponent.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// fmtSI formats a count or rate compactly: 950, 12.3k, 4.56M.
func fmtSI(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 1000:
		if a != math.Trunc(a) && a < 10 {
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a < 1e6:
		return fmtNum(v/1e3) + "k"
	case a < 1e9:
		return fmtNum(v/1e6) + "M"
	}
	return fmtNum(v/1e9) + "G"
}

// fmtInt formats n with thousands separators: 1,234,567.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// fmtBytes formats a byte count: 512 B, 1.2 KiB, 3.4 MiB.
func fmtBytes(v float64) string {
	names := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for v >= 1024 && i < len(names)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", v)
	}
	return fmtNum(v) + " " + names[i]
}

// fmtElapsed formats a duration for the progress line: 9.4s, 2m05s, 1h02m.
func fmtElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		s := int(d.Seconds())
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	m := int(d.Minutes())
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// fmtSeconds formats whole seconds for chart axes: 0s, 45s, 2m, 2m30.
func fmtSeconds(s int) string {
	switch {
	case s < 60:
		return strconv.Itoa(s) + "s"
	case s%60 == 0 && s < 3600:
		return strconv.Itoa(s/60) + "m"
	case s < 3600:
		return fmt.Sprintf("%dm%02d", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02d", s/3600, s/60%60)
}

// niceCeil rounds v up to a round number: 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8
// times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}
