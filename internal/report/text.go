package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// TextOptions control the text report.
type TextOptions struct {
	// Unit is the time unit for latencies: "ns", "us", "ms", "s", or "" to
	// pick one from the average latency.
	Unit string
	// Color enables ANSI colors.
	Color bool
}

// Units are the time units -u accepts.
var Units = []string{"ns", "us", "ms", "s", "m", "h"}

func unitScale(u string) (float64, string) {
	switch u {
	case "ns":
		return 1e9, "ns"
	case "us", "µs":
		return 1e6, "µs"
	case "ms":
		return 1e3, "ms"
	case "m":
		return 1.0 / 60, "min"
	case "h":
		return 1.0 / 3600, "h"
	}
	return 1, "secs"
}

func autoUnit(avg float64) string {
	switch {
	case avg == 0:
		return "ms"
	case avg < 1e-3:
		return "us"
	case avg < 1:
		return "ms"
	}
	return "s"
}

// WriteText writes the human-readable report, laid out as oha's.
func WriteText(w io.Writer, r *Result, o TextOptions) error {
	unit := o.Unit
	if unit == "" {
		unit = autoUnit(r.Summary.Average)
	}
	scale, name := unitScale(unit)
	d := func(s float64) string { return fmt.Sprintf("%.4f %s", s*scale, name) }
	c := colorer{on: o.Color}
	b := &strings.Builder{}
	writeSummaryText(b, r, scale, d, c)
	writeOutcomesText(b, r, c)
	h := r.Hail
	for _, hint := range h.Hints {
		fmt.Fprintf(b, "  hint: %s\n", hint)
	}
	if len(h.Steps) > 0 {
		fmt.Fprintln(b)
		writeSteps(b, r, d, c)
	}
	writeGeneratorText(b, r, d)
	writeResultsText(b, r) // merge.go: shard, merge notes, target process
	if head, warn := h.Verdict.Headline(); h.Verdict.Bottleneck != "" {
		if warn {
			head = c.warn(head)
		}
		fmt.Fprintf(b, "\n%s\n", head)
		for _, why := range h.Verdict.Reasons {
			fmt.Fprintf(b, "  - %s\n", why)
		}
	}
	if len(h.Thresholds) > 0 || h.StoppedBy != "" {
		fmt.Fprintln(b)
		writeThresholds(b, r, c)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSummaryText writes oha's sections: the summary, the response time
// histogram and distributions, requests/s over the run and the details; d
// formats seconds in the chosen unit, scale converts to it.
func writeSummaryText(b *strings.Builder, r *Result, scale float64, d func(float64) string, c colorer) {
	s := r.Summary
	fmt.Fprintf(b, "Summary:\n")
	fmt.Fprintf(b, "  Success rate:\t%s\n", c.rate(s.SuccessRate))
	fmt.Fprintf(b, "  Total:\t%.4f secs\n", s.Total)
	fmt.Fprintf(b, "  Slowest:\t%s\n", d(s.Slowest))
	fmt.Fprintf(b, "  Fastest:\t%s\n", d(s.Fastest))
	fmt.Fprintf(b, "  Average:\t%s\n", d(s.Average))
	fmt.Fprintf(b, "  Requests/sec:\t%.4f\n\n", s.RequestsPerSec)
	fmt.Fprintf(b, "  Total data:\t%s\n", bytesHuman(float64(s.TotalData)))
	fmt.Fprintf(b, "  Size/request:\t%s\n", bytesHuman(float64(s.SizePerRequest)))
	fmt.Fprintf(b, "  Size/sec:\t%s\n\n", bytesHuman(s.SizePerSec))

	if len(r.ResponseTimeHistogram) > 0 {
		fmt.Fprintf(b, "Response time histogram:\n")
		writeHist(b, r.ResponseTimeHistogram, scale)
		fmt.Fprintf(b, "\nResponse time distribution:\n")
		writePercentiles(b, r.LatencyPercentiles, d)
		if r.LatencyPercentileSuccessful != nil {
			fmt.Fprintf(b, "\nResponse time distribution (2xx):\n")
			writePercentiles(b, *r.LatencyPercentileSuccessful, d)
			fmt.Fprintf(b, "\nResponse time distribution (not 2xx):\n")
			writePercentiles(b, *r.LatencyPercentileNotSuccessful, d)
		}
		fmt.Fprintln(b)
	}
	if r.RPS.Mean > 0 {
		sd := "n/a"
		if r.RPS.Stddev != nil {
			sd = fmt.Sprintf("%.2f", *r.RPS.Stddev)
		}
		fmt.Fprintf(b, "Requests/sec over the run (per second):\n  mean %.2f, stddev %s, min %.2f, p50 %.2f, p90 %.2f, max %.2f\n\n",
			r.RPS.Mean, sd, r.RPS.Min, r.RPS.Percentiles.P50, r.RPS.Percentiles.P90, r.RPS.Max)
	}
	dt := r.Details
	fmt.Fprintf(b, "Details (average, fastest, slowest):\n")
	fmt.Fprintf(b, "  DNS+dialup:\t%s, %s, %s\n", d(dt.DNSDialup.Average), d(dt.DNSDialup.Fastest), d(dt.DNSDialup.Slowest))
	fmt.Fprintf(b, "  DNS-lookup:\t%s, %s, %s\n", d(dt.DNSLookup.Average), d(dt.DNSLookup.Fastest), d(dt.DNSLookup.Slowest))
	fmt.Fprintf(b, "  First byte:\t%s, %s, %s\n\n", d(dt.FirstByte.Average), d(dt.FirstByte.Fastest), d(dt.FirstByte.Slowest))

}

// writeOutcomesText writes the status code and error distributions.
func writeOutcomesText(b *strings.Builder, r *Result, c colorer) {
	fmt.Fprintf(b, "Status code distribution:\n")
	for _, k := range sortedByCount(r.StatusCodeDistribution) {
		code, _ := strconv.Atoi(k)
		fmt.Fprintf(b, "  %s %d responses\n", c.status(code, "["+k+"]"), r.StatusCodeDistribution[k])
	}
	if len(r.ErrorDistribution) > 0 {
		fmt.Fprintf(b, "\nError distribution:\n")
		for _, k := range sortedByCount(r.ErrorDistribution) {
			fmt.Fprintf(b, "  [%d] %s\n", r.ErrorDistribution[k], k)
		}
	}
}

// writeGeneratorText writes hail's generator section: engine, connection,
// CPU, context switches, RSS, and in the open model schedule lag and
// queueing.
func writeGeneratorText(b *strings.Builder, r *Result, d func(float64) string) {
	h := r.Hail
	fmt.Fprintf(b, "\nGenerator (hail %s, engine %s, %s model):\n", h.Version, h.Engine, h.Model)
	if h.EngineReason != "" {
		fmt.Fprintf(b, "  Engine choice:\t%s\n", h.EngineReason)
	}
	if h.Protocol != "" {
		conn := h.Protocol + " over " + h.Transport
		if h.ALPN != "" {
			conn += " (ALPN " + h.ALPN + ")"
		}
		if h.TLS != nil {
			conn += fmt.Sprintf("; TLS handshakes %d, resumed %d", h.TLS.Handshakes, h.TLS.Resumptions)
		}
		fmt.Fprintf(b, "  Connection:\t%s\n", conn)
	}
	g := h.Generator
	fmt.Fprintf(b, "  CPU:\t%.2fs user, %.2fs system, %.2f µs/request, %.0f%% of %d core(s)\n",
		g.UserSeconds, g.SystemSeconds, g.CPUPerRequestUS, 100*g.Utilization, g.Cores)
	fmt.Fprintf(b, "  Context switches:\t%d voluntary, %d involuntary\n", g.VoluntarySwitches, g.ForcedSwitches)
	fmt.Fprintf(b, "  Peak RSS:\t%s\n", bytesHuman(float64(g.MaxRSSBytes)))
	if g.OthersCPU > 0 || g.Steal > 0 {
		fmt.Fprintf(b, "  Its CPUs:\tothers used %.0f%%, steal %.0f%%", 100*g.OthersCPU, 100*g.Steal)
		if g.CPUPressure >= 0 {
			fmt.Fprintf(b, ", machine CPU pressure %.0f%%", 100*g.CPUPressure)
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintf(b, "  Requests:\t%s\n", accounting(&h))
	if h.Model == "open" {
		own, wait := sendDelay(&h, d)
		fmt.Fprintf(b, "  Send delay, hail's own:\t%s\n", own)
		fmt.Fprintf(b, "  Send delay, connection wait:\t%s\n", wait)
	}
	if h.Interrupted {
		fmt.Fprintf(b, "  Interrupted:\tthe run was stopped by a signal; the numbers cover what was done\n")
	}
}

func writePercentiles(b *strings.Builder, p Percentiles, d func(float64) string) {
	rows := []struct {
		name string
		v    float64
	}{{"10.00%", p.P10}, {"25.00%", p.P25}, {"50.00%", p.P50}, {"75.00%", p.P75}, {"90.00%", p.P90},
		{"95.00%", p.P95}, {"99.00%", p.P99}, {"99.90%", p.P999}, {"99.99%", p.P9999}}
	for _, r := range rows {
		fmt.Fprintf(b, "  %s in %s\n", r.name, d(r.v))
	}
}

func writeHist(b *strings.Builder, h map[string]int64, scale float64) {
	keys := SortedKeys(h)
	var top int64
	for _, k := range keys {
		top = max(top, h[k])
	}
	for _, k := range keys {
		v, _ := strconv.ParseFloat(k, 64)
		n := h[k]
		bar := 0
		if top > 0 {
			bar = int(math.Round(32 * float64(n) / float64(top)))
		}
		fmt.Fprintf(b, "  %10.3f [%d]\t|%s\n", v*scale, n, strings.Repeat("■", bar))
	}
}

func sortedByCount(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func bytesHuman(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", n, units[i])
	}
	return fmt.Sprintf("%.2f %s", n, units[i])
}

type colorer struct{ on bool }

func (c colorer) paint(code, s string) string {
	if !c.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (c colorer) rate(r float64) string {
	s := fmt.Sprintf("%.2f%%", 100*r)
	switch {
	case r >= 0.999:
		return c.paint("32", s)
	case r >= 0.9:
		return c.paint("33", s)
	}
	return c.paint("31", s)
}

func (c colorer) status(code int, s string) string {
	switch {
	case code >= 200 && code < 300:
		return c.paint("32", s)
	case code >= 300 && code < 400:
		return c.paint("33", s)
	}
	return c.paint("31", s)
}

func (c colorer) warn(s string) string { return c.paint("1;33", s) }
