// Package report turns a run's measurements into a Result (package
// result's: one JSON document with oha's keys plus a "hail" section,
// which package result writes and reads) and renders Results as text,
// CSV, Markdown and HTML. Reports never re-measure: every renderer reads only
// the Result, so a saved result re-renders identically.
package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/result"
)

// Input is what Build needs from a finished run.
type Input struct {
	Totals       *stats.Totals
	Series       []stats.Second
	Elapsed      time.Duration
	Usage        stats.Usage
	Cores        int
	Engine       string
	EngineReason string
	Open         bool
	Rate         float64 // -q, 0 when closed
	Start        time.Time
	Interrupted  bool
	Config       map[string]any
	Version      string
	SuccessSplit bool // --stats-success-breakdown
	// Protocol, ALPN, Transport and TLS describe how the run connected.
	Protocol  string
	ALPN      string
	Transport string
	TLS       *result.TLSCounts
	// Intent accounts for every intended request.
	Intent Intent
	// Machine is what happened on hail's CPUs (others' use, steal, pressure).
	Machine stats.MachineUse
	// Connections is -c (for the target's sustained rate in the verdict).
	Connections int
	// Mismatch is the first server certificate not issued for the name
	// hail checked, for the hint (nil: none).
	Mismatch *CertNames
	// Stopped is when the run stopped sending (-z, an interrupt), since
	// its start; 0 when it ran out of requests. Wait says it then let
	// in-flight requests finish (-w): the rest of Elapsed was its drain.
	Stopped time.Duration
	Wait    bool
	// Addr is where connections went (host:port, a socket path), for the
	// verdict's words about an unreachable target.
	Addr string
	// Target is the target's process on this machine, if hail knew it
	// (--target-pid, hail demo's server, a loopback target's listener):
	// its CPU on hail's CPUs is already left out of Machine.Others.
	Target *result.TargetUse
}

// Intent accounts for a run's intended requests: Intended = Sent +
// NotSent + Unsent + Skipped (Build counts Sent and NotSent from the
// totals).
type Intent struct {
	Intended, Sent, Unsent, Skipped int64
	// Reason is why requests were left unsent ("" when the run ran out).
	Reason string
}

// sec is ns nanoseconds in seconds, as time.Duration.Seconds gives them:
// every time in a Result is a whole number of nanoseconds in seconds (so
// the public package's time.Duration fields read back exactly).
func sec(ns int64) float64 { return time.Duration(ns).Seconds() }

// meanNS is sum / n rounded to the nanosecond (n > 0).
func meanNS(sum, n int64) int64 { return (sum + n/2) / n }

// Build makes the Result of a run.
func Build(in Input) *result.Result {
	r := &result.Result{}
	m := snapshots{}
	buildOha(r, in, m)
	buildStream(r, in, m)
	buildHail(r, in, m)
	return r
}

// buildOha fills oha's part of r: the summary, histograms, percentiles,
// requests/s, details and the status and error distributions.
func buildOha(r *result.Result, in Input, m snapshots) {
	t := in.Totals
	lat := t.Latency()
	total := in.Elapsed.Seconds()
	responses := t.Responses()
	requests := t.Requests()
	aborted := t.CutOff() // ended by hail, not by the target: aborted requests and truncated streams
	s := &r.Summary
	s.Total = in.Elapsed
	if n := requests - aborted; n > 0 {
		s.SuccessRate = float64(responses) / float64(n)
	}
	if responses > 0 {
		sum := m.summary(lat)
		s.Slowest = time.Duration(sum.Max)
		s.Fastest = time.Duration(sum.Min)
		s.Average = time.Duration(meanNS(t.LatencySum, responses))
		s.SizePerRequest = t.BodyBytes / responses
	}
	if total > 0 {
		s.RequestsPerSec = float64(requests) / total
		s.SizePerSec = float64(t.BodyBytes) / total
	}
	s.TotalData = t.BodyBytes
	r.Metrics = result.Metrics{SuccessRate: s.SuccessRate, RequestsPerSec: s.RequestsPerSec, Latency: result.LatencyMetrics{
		Min: roundUS(s.Fastest.Seconds()), Mean: roundUS(s.Average.Seconds()), P50: ms(lat, 50), P95: ms(lat, 95), P99: ms(lat, 99), Max: roundUS(s.Slowest.Seconds())}}
	r.ResponseTimeHistogram = m.histogram(lat)
	r.LatencyPercentiles = percentiles(lat)
	if in.SuccessSplit {
		r.ResponseTimeHistogramSuccessful = m.histogram(t.LatencyOK)
		p := percentiles(t.LatencyOK)
		r.LatencyPercentilesSuccessful = &p
		r.ResponseTimeHistogramNotSuccessful = m.histogram(t.LatencyBad)
		q := percentiles(t.LatencyBad)
		r.LatencyPercentilesNotSuccessful = &q
	}
	r.FirstByteHistogram = m.histogram(t.FirstByte)
	r.FirstBytePercentiles = percentiles(t.FirstByte)
	r.RPS = rps(in.Series, float64(requests), total)
	if t.Connects > 0 {
		r.Details.DNSDialup = result.MinAvgMax{Average: time.Duration(meanNS(t.ConnectSum, t.Connects)), Fastest: time.Duration(t.ConnectMin), Slowest: time.Duration(t.ConnectMax)}
		r.Details.DNSLookup = result.MinAvgMax{Average: time.Duration(meanNS(t.DNSSum, t.Connects)), Fastest: time.Duration(t.DNSMin), Slowest: time.Duration(t.DNSMax)}
	}
	if n := t.FirstByte.TotalCount(); n > 0 {
		fb := m.summary(t.FirstByte)
		r.Details.FirstByte = result.MinAvgMax{Average: time.Duration(math.Round(fb.Mean)), Fastest: time.Duration(fb.Min), Slowest: time.Duration(fb.Max)}
	}
	r.StatusCodeDistribution = map[string]int64{}
	for code, n := range t.Status {
		if n > 0 {
			r.StatusCodeDistribution[status.Name(code)] = n
		}
	}
	r.ErrorDistribution = map[string]int64{}
	for k, n := range t.Errors {
		if n > 0 {
			r.ErrorDistribution[stats.ErrorKind(k).String()] = n
		}
	}
}

// ms is h's q-th percentile rounded as roundUS.
func ms(h *hdr.Histogram, q float64) time.Duration {
	if h.TotalCount() == 0 {
		return 0
	}
	return roundUS(sec(h.ValueAtQuantile(q)))
}

// roundUS is s seconds rounded to the microsecond, as oha's latency_ms
// holds them (written in milliseconds: k µs as k/1000, the same float
// as rounding the milliseconds themselves).
func roundUS(s float64) time.Duration { return time.Duration(math.Round(s*1e6)) * time.Microsecond }

func percentiles(h *hdr.Histogram) result.Percentiles {
	if h.TotalCount() == 0 {
		return result.Percentiles{}
	}
	q := func(p float64) time.Duration { return time.Duration(h.ValueAtQuantile(p)) }
	return result.Percentiles{P10: q(10), P25: q(25), P50: q(50), P75: q(75), P90: q(90), P95: q(95), P99: q(99), P999: q(99.9), P9999: q(99.99)}
}

// histogram bins h as oha does: 11 labels from the minimum to the maximum in
// equal steps (seconds); each label counts the values above the previous
// label up to itself, the first only the minimum. HdrHistogram's buckets
// (0.1% wide) are placed by their middle, the minimum's and the maximum's at
// the ends; latencies all in one bucket make one label.
func (m snapshots) histogram(h *hdr.Histogram) map[string]int64 {
	out := map[string]int64{}
	if h.TotalCount() == 0 {
		return out
	}
	sum := m.summary(h)
	loNS, hiNS := sum.Min, sum.Max
	lo, hi := sec(loNS), sec(hiNS)
	const bins = 11
	step := (hi - lo) / (bins - 1)
	if h.ValuesAreEquivalent(loNS, hiNS) { // one bucket: one label
		step, lo = 0, hi
	}
	counts := make([]int64, bins)
	add := func(from, to, n int64) {
		i := 0
		switch {
		case step == 0 || from <= loNS:
		case to >= hiNS:
			i = bins - 1
		default:
			v := min(max(sec((from+to)/2), lo), hi)
			i = min(int(math.Ceil((v-lo)/step)), bins-1)
		}
		counts[i] += n
	}
	if stats.Standard(h) {
		// hdr's Distribution, read from the shared copy: its bars, one per
		// counts index, are half a megabyte of garbage per histogram.
		for i, n := range m.of(h).Counts {
			if n != 0 {
				from, to := stats.Bucket(i)
				add(from, to, n)
			}
		}
	} else {
		for _, b := range h.Distribution() {
			if b.Count != 0 {
				add(b.From, b.To, b.Count)
			}
		}
	}
	for i, c := range counts {
		out[strconv.FormatFloat(lo+step*float64(i), 'f', -1, 64)] += c
	}
	return out
}

// SortedKeys returns a histogram's keys in numeric order.
func SortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, _ := strconv.ParseFloat(keys[i], 64)
		b, _ := strconv.ParseFloat(keys[j], 64)
		return a < b
	})
	return keys
}

func rps(series []stats.Second, requests, total float64) result.RPS {
	var xs []float64
	for _, s := range series {
		if s.Span.Seconds() >= 0.999 { // oha's count: requests that failed before they were sent too
			xs = append(xs, float64(s.Requests+s.NotSent)/s.Span.Seconds())
		}
	}
	if len(xs) == 0 {
		if total > 0 {
			xs = []float64{requests / total}
		} else {
			xs = []float64{0}
		}
	}
	sort.Float64s(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	out := result.RPS{Mean: mean, Min: xs[0], Max: xs[len(xs)-1]}
	if len(xs) > 1 {
		var v float64
		for _, x := range xs {
			v += (x - mean) * (x - mean)
		}
		sd := math.Sqrt(v / float64(len(xs)-1))
		out.Stddev = &sd
	}
	q := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(xs)))) - 1
		return xs[max(0, min(i, len(xs)-1))]
	}
	out.Percentiles = result.RatePercentiles{P10: q(10), P25: q(25), P50: q(50), P75: q(75), P90: q(90), P95: q(95), P99: q(99), P999: q(99.9), P9999: q(99.99)}
	return out
}

// DecodeHist decodes a histogram from a Result's Histograms field.
func DecodeHist(s string) (*hdr.Histogram, error) {
	if s == "" {
		return stats.NewHist(), nil
	}
	return hdr.Decode([]byte(s))
}

// fmtDur formats seconds with a fitting unit.
func fmtDur(s float64) string {
	switch {
	case s < 1e-3:
		return fmt.Sprintf("%.1fµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.2fms", s*1e3)
	}
	return fmt.Sprintf("%.3fs", s)
}
