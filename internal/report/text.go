package report

import (
	"fmt"
	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/result"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// TextOptions control the text report.
type TextOptions struct {
	// Unit is the time unit for latencies: "ns", "us", "ms", "s", "m", "h",
	// or "" to pick one from the slowest request, as oha does.
	Unit string
	// Color enables ANSI colors (oha's: headings, success rate, slowest,
	// fastest and average, latencies by size, status codes by class).
	Color bool
}

// Units are the time units -u accepts.
var Units = []string{"ns", "us", "ms", "s", "m", "h"}

// timeScale is a unit of the text report: its length in seconds and oha's
// label for it.
type timeScale struct {
	secs  float64
	label string
}

// scales are the text report's units, longest first.
var scales = []timeScale{{3600, "hr"}, {60, "min"}, {1, "sec"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}}

// scaleFor returns the scale -u names ("" or unknown: none).
func scaleFor(u string) (timeScale, bool) {
	for i, name := range []string{"h", "m", "s", "ms", "us", "ns"} {
		if u == name {
			return scales[i], true
		}
	}
	return timeScale{}, false
}

// autoScale picks the unit from the slowest request as oha does: the
// longest unit the slowest latency exceeds, nanoseconds when it exceeds
// none (or there was no response). oha also has "10 sec" and "10 min"
// scales; hail shows those latencies in seconds and minutes.
func autoScale(slowest float64) timeScale {
	for _, s := range scales {
		if slowest > s.secs {
			return s
		}
	}
	return scales[len(scales)-1]
}

// WriteText writes the human-readable report, laid out as oha's: summary,
// response time histogram and distribution (and their 2xx and 4xx + 5xx
// breakdowns with --stats-success-breakdown), details, status codes and
// errors; then hail's own sections.
func WriteText(w io.Writer, r *result.Result, o TextOptions) error {
	ts, ok := scaleFor(o.Unit)
	if !ok {
		ts = autoScale(r.Summary.Slowest.Seconds())
		if r.Hail.Counts.Responses == 0 {
			ts = autoScale(math.NaN())
		}
	}
	d := func(s float64) string {
		if math.IsNaN(s) {
			return "n/a" // no value (oha prints NaN)
		}
		return fmt.Sprintf("%.4f %s", s/ts.secs, ts.label)
	}
	c := colorer{on: o.Color}
	b := &strings.Builder{}
	if head := FailureHeadline(r); head != "" {
		fmt.Fprintf(b, "%s\n\n", c.warn(head))
	}
	writeLLMText(b, r, c) // llm.go: hail llm's numbers first
	writeSummaryText(b, r, ts, d, c)
	writeOutcomesText(b, r, c)
	writeStreamText(b, r, c) // stream.go
	h := r.Hail
	for _, hint := range h.Hints {
		fmt.Fprintf(b, "  hint: %s\n", hint)
	}
	if len(h.Steps) > 0 {
		fmt.Fprintln(b)
		writeSteps(b, r, d, c)
	}
	if len(h.Origins) > 0 {
		fmt.Fprintln(b)
		writeOrigins(b, r, d, c) // origins.go
	}
	if len(h.Stages) > 0 {
		fmt.Fprintln(b)
		writeStagesText(b, r, d, c) // stages.go
	}
	writePhasesText(b, r, c) // phase.go: a scenario's setup and teardown
	writeGeneratorText(b, r, d, c)
	writeResultsText(b, r) // merge.go: shard, merge notes, target process
	if head, warn := Headline(h.Verdict); h.Verdict.Bottleneck != "" {
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
// histograms and distributions, then hail's latency of every sent request
// and its rates, and the details; ts is the report's unit and d formats
// seconds in it. Without a value (no responses) it prints n/a where oha
// prints NaN.
func writeSummaryText(b *strings.Builder, r *result.Result, ts timeScale, d func(float64) string, c colorer) {
	noResp := r.Hail.Counts.Responses == 0
	lat := func(s float64) string {
		if noResp {
			return d(math.NaN())
		}
		return d(s)
	}
	s := r.Summary
	fmt.Fprintln(b, c.heading("Summary:"))
	rate, rateText := 100*s.SuccessRate, fmt.Sprintf("%.2f%%", 100*s.SuccessRate)
	if r.Hail.Counts.Requests-r.Hail.Counts.Aborted-r.Hail.Counts.Truncated == 0 {
		rate, rateText = math.NaN(), "n/a"
	}
	fmt.Fprintln(b, c.rate("  Success rate:\t"+rateText, rate))
	fmt.Fprintf(b, "  Total:\t%s\n", d(s.Total.Seconds()))
	fmt.Fprintln(b, c.paint("33", "  Slowest:\t"+lat(s.Slowest.Seconds())+slowestWhich(r, d)))
	fmt.Fprintln(b, c.paint("32", "  Fastest:\t"+lat(s.Fastest.Seconds())))
	fmt.Fprintln(b, c.paint("36", "  Average:\t"+lat(s.Average.Seconds())))
	fmt.Fprintf(b, "  Requests/sec:\t%.4f\n\n", s.RequestsPerSec)
	fmt.Fprintf(b, "  Total data:\t%s\n", bytesHuman(float64(s.TotalData)))
	if noResp {
		fmt.Fprintf(b, "  Size/request:\tn/a\n")
	} else {
		fmt.Fprintf(b, "  Size/request:\t%s\n", bytesHuman(float64(s.SizePerRequest)))
	}
	fmt.Fprintf(b, "  Size/sec:\t%s\n\n", bytesHuman(s.SizePerSec))

	ok2xx, other := r.SplitCounts()
	section := func(title string, hist map[string]int64, p result.Percentiles, empty bool) {
		fmt.Fprintln(b, c.heading("Response time histogram"+title+":"))
		writeHist(b, hist, ts, c)
		fmt.Fprintln(b)
		fmt.Fprintln(b, c.heading("Response time distribution"+title+":"))
		writePercentiles(b, p, empty, d, c)
		fmt.Fprintln(b)
	}
	section("", r.ResponseTimeHistogram, r.LatencyPercentiles, noResp)
	writeAllSentText(b, r, d, c)
	if r.LatencyPercentilesSuccessful != nil && r.LatencyPercentilesNotSuccessful != nil {
		section(" (2xx only)", r.ResponseTimeHistogramSuccessful, *r.LatencyPercentilesSuccessful, ok2xx == 0)
		section(" (4xx + 5xx only)", r.ResponseTimeHistogramNotSuccessful, *r.LatencyPercentilesNotSuccessful, other == 0)
	}
	if r.RPS.Mean > 0 {
		sd := "n/a"
		if r.RPS.Stddev != nil {
			sd = fmt.Sprintf("%.2f", *r.RPS.Stddev)
		}
		fmt.Fprintf(b, "%s\n  mean %.2f, stddev %s, min %.2f, p50 %.2f, p90 %.2f, max %.2f\n",
			c.heading("Requests/sec over the run (per second):"), r.RPS.Mean, sd, r.RPS.Min, r.RPS.Percentiles.P50, r.RPS.Percentiles.P90, r.RPS.Max)
	}
	writeRatesText(b, r, c)
	fmt.Fprintln(b)
	writeDetails(b, r, d, c)
}

// slowestWhich says what the Slowest line measures: oha's slowest
// response, and the slowest of every sent request when that differs.
func slowestWhich(r *result.Result, d func(float64) string) string {
	a := r.Hail.AllSent
	switch {
	case a.Requests == 0: // nothing sent ended, or a result from before all_sent
		return ""
	case a.Failed == 0:
		return " (responses; every sent request that ended had one)"
	}
	return fmt.Sprintf(" (responses only; of all sent: %s)", d(a.Max.Seconds()))
}

// writeAllSentText writes the latency of every sent request, failures at
// their elapsed time, with what it holds and leaves out.
func writeAllSentText(b *strings.Builder, r *result.Result, d func(float64) string, c colorer) {
	a := r.Hail.AllSent
	if a.Requests+a.CutOff+a.NotSent == 0 {
		return
	}
	fmt.Fprintln(b, c.heading("Latency of all sent requests (a failure at its elapsed time):"))
	if a.Requests == 0 {
		fmt.Fprintf(b, "  p50 n/a, p90 n/a, p99 n/a, p99.9 n/a, max n/a\n")
	} else {
		fmt.Fprintf(b, "  p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n", d(a.P50.Seconds()), d(a.P90.Seconds()), d(a.P99.Seconds()), d(a.P999.Seconds()), d(a.Max.Seconds()))
	}
	fmt.Fprintf(b, "  %s\n\n", allSentLine(a))
}

// writeRatesText writes the run's rates (over its whole time) and, after
// a -w drain, what ended in it.
func writeRatesText(b *strings.Builder, r *result.Result, c colorer) {
	rt := r.Hail.Rates
	fmt.Fprintln(b, c.heading("Rates (per second of the run's total time):"))
	fmt.Fprintf(b, "  requests %.2f (every request that ended, as Requests/sec), completed %.2f (sent, answered), successful %.2f\n",
		rt.RequestsPerSec, rt.CompletedPerSec, rt.SuccessfulPerSec)
	if dr := r.Hail.Drain; dr != nil {
		fmt.Fprintf(b, "  drain (-w): %d requests ended in the %.3f s after the run stopped sending; Total and every rate include them\n", dr.Requests, dr.Duration.Seconds())
	}
}

// writeOutcomesText writes the status code and error distributions, status
// codes coloured by class.
func writeOutcomesText(b *strings.Builder, r *result.Result, c colorer) {
	fmt.Fprintln(b, c.heading("Status code distribution:"))
	for _, k := range sortedByCount(r.StatusCodeDistribution) {
		code, _ := status.ByName(k)
		fmt.Fprintln(b, c.status(code, fmt.Sprintf("  [%s] %d responses", k, r.StatusCodeDistribution[k])))
	}
	if len(r.ErrorDistribution) > 0 {
		fmt.Fprintf(b, "\nError distribution:\n")
		for _, k := range sortedByCount(r.ErrorDistribution) {
			fmt.Fprintf(b, "  [%d] %s\n", r.ErrorDistribution[k], k)
		}
	}
}

// writeDetails writes oha's details (connection setup; NaN when no
// request opened a connection) and hail's first-byte line.
func writeDetails(b *strings.Builder, r *result.Result, d func(float64) string, c colorer) {
	triple := func(t result.MinAvgMax, empty bool) string {
		if empty {
			nan := d(math.NaN())
			return nan + ", " + nan + ", " + nan
		}
		return d(t.Average.Seconds()) + ", " + d(t.Fastest.Seconds()) + ", " + d(t.Slowest.Seconds())
	}
	dt := r.Details
	noConn, noFirst := r.Hail.Counts.Connects == 0, r.Hail.Counts.Responses == 0
	fmt.Fprintln(b, c.heading("Details (average, fastest, slowest):"))
	fmt.Fprintf(b, "  DNS+dialup:\t%s\n", triple(dt.DNSDialup, noConn))
	fmt.Fprintf(b, "  DNS-lookup:\t%s\n", triple(dt.DNSLookup, noConn))
	fmt.Fprintf(b, "  First byte:\t%s\n\n", triple(dt.FirstByte, noFirst))
}

// writeGeneratorText writes hail's generator section: engine, connection,
// CPU, context switches, RSS, and in the open model schedule lag and
// queueing.
func writeGeneratorText(b *strings.Builder, r *result.Result, d func(float64) string, c colorer) {
	h := r.Hail
	fmt.Fprintf(b, "\n%s\n", c.heading(fmt.Sprintf("Generator (hail %s, engine %s, %s model):", h.Version, h.Engine, h.Model)))
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
	if rg := h.GRPC; rg != nil {
		retries := ""
		if rg.Retries > 0 {
			retries = fmt.Sprintf(" (%d sent again on a new connection)", rg.Retries)
		}
		fmt.Fprintf(b, "  gRPC:\t%s%d calls%s, %d messages sent, %d received\n", grpcCall(rg), rg.Calls, retries, rg.MessagesSent, rg.MessagesReceived)
	}
	g := h.Generator
	fmt.Fprintf(b, "  CPU:\t%.2fs user, %.2fs system, %.2f µs/request, %.0f%% of %d core(s)\n",
		g.User.Seconds(), g.System.Seconds(), micros(g.CPUPerRequest), 100*g.Utilization, g.Cores)
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

// writePercentiles writes oha's latency distribution: p10 … p99.99, each
// line coloured by its latency; NaN when empty.
func writePercentiles(b *strings.Builder, p result.Percentiles, empty bool, d func(float64) string, c colorer) {
	rows := []struct {
		name string
		v    float64
	}{{"10.00%", p.P10.Seconds()}, {"25.00%", p.P25.Seconds()}, {"50.00%", p.P50.Seconds()}, {"75.00%", p.P75.Seconds()}, {"90.00%", p.P90.Seconds()},
		{"95.00%", p.P95.Seconds()}, {"99.00%", p.P99.Seconds()}, {"99.90%", p.P999.Seconds()}, {"99.99%", p.P9999.Seconds()}}
	for _, r := range rows {
		v := r.v
		if empty {
			v = math.NaN()
		}
		fmt.Fprintln(b, c.latency("  "+r.name+" in "+d(v), v))
	}
}

// writeHist writes a response time histogram as oha does: each label in
// the report's unit right-aligned to the widest, its count in brackets
// padded to the widest count, and a bar of up to 32 squares, coloured by
// the label's latency.
func writeHist(b *strings.Builder, h map[string]int64, ts timeScale, c colorer) {
	keys := SortedKeys(h)
	var top int64
	intw, cntw := 0, 0
	for _, k := range keys {
		v, _ := strconv.ParseFloat(k, 64)
		top = max(top, h[k])
		intw = max(intw, len(strconv.FormatUint(uint64(v/ts.secs), 10)))
		cntw = max(cntw, len(strconv.FormatInt(h[k], 10)))
	}
	for _, k := range keys {
		v, _ := strconv.ParseFloat(k, 64)
		n := h[k]
		cs := strconv.FormatInt(n, 10)
		label := fmt.Sprintf("  %*.3f %s [%s]%s |", intw+4, v/ts.secs, ts.label, cs, strings.Repeat(" ", cntw-len(cs)))
		bar := ""
		if top > 0 {
			bar = strings.Repeat("■", int(32*float64(n)/float64(top)))
		}
		fmt.Fprintln(b, c.latency(label, v)+c.latency(bar, v))
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

// colorer paints text with ANSI escapes when on, with oha's colour scheme.
type colorer struct{ on bool }

func (c colorer) paint(code, s string) string {
	if !c.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// heading is bold and underlined.
func (c colorer) heading(s string) string { return c.paint("1;4", s) }

// rate paints the success-rate line (pct in percent): bold green at 100%,
// bold yellow from 99%, bold red below.
func (c colorer) rate(s string, pct float64) string {
	switch {
	case pct >= 100:
		return c.paint("1;32", s)
	case pct >= 99:
		return c.paint("1;33", s)
	}
	return c.paint("1;31", s)
}

// latency paints by a latency in seconds: green up to 100 ms, yellow up to
// 400 ms, red above.
func (c colorer) latency(s string, secs float64) string {
	switch {
	case secs <= 0.1:
		return c.paint("32", s)
	case secs <= 0.4:
		return c.paint("33", s)
	}
	return c.paint("31", s)
}

// status paints by status class: 2xx green, 4xx yellow, 5xx red, others
// white.
func (c colorer) status(code int, s string) string {
	switch {
	case status.Success(code):
		return c.paint("32", s)
	case code >= 400 && code < 500:
		return c.paint("33", s)
	case code >= 500 && code < 600:
		return c.paint("31", s)
	}
	return c.paint("37", s)
}

func (c colorer) warn(s string) string { return c.paint("1;33", s) }

// grpcCall names a gRPC run's method for the text report ("" for a
// scenario's several).
func grpcCall(g *result.GRPCStats) string {
	if g.Call == "" {
		return ""
	}
	return fmt.Sprintf("%s (%s): ", g.Call, g.Kind)
}
