package report

// The Result's "hail" section, what hail reports beyond oha's keys: its
// types and how Build fills it.

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/result"
)

// buildHail fills r's "hail" section: exact counts, encoded histograms,
// schedule lag, the generator's resource use, the verdict and hints, the
// series and the configuration. It runs after buildOha: the verdict reads
// the summary.
func buildHail(r *result.Result, in Input, m snapshots) {
	t := in.Totals
	total := in.Elapsed.Seconds()
	requests, responses, aborted := t.Requests(), t.Responses(), t.Errors[stats.ErrAborted]
	h := &r.Hail
	h.Version = in.Version
	h.Engine, h.EngineReason = in.Engine, in.EngineReason
	h.Model = "closed"
	if in.Open {
		h.Model = "open"
	}
	h.Start = time.Unix(0, in.Start.UnixNano()) // as the JSON holds it: no monotonic reading
	h.Interrupted = in.Interrupted
	sent := t.Sent()
	in.Intent.Sent = sent
	in.Intent.Intended = max(in.Intent.Intended, requests+in.Intent.Unsent+in.Intent.Skipped)
	unsent := in.Intent.Intended - requests - in.Intent.Skipped
	h.Counts = result.Counts{Intended: in.Intent.Intended, Sent: sent, NotSent: t.NotSent, Unsent: unsent, Skipped: in.Intent.Skipped,
		Requests: requests, Responses: responses, Errors: t.ErrorCount(), Aborted: aborted, Truncated: t.Truncated(), Expected: t.Expected,
		BodyBytes: t.BodyBytes, WireBytes: t.WireBytes, SentBytes: t.SentBytes, LatencySum: time.Duration(t.LatencySum), FailedSum: time.Duration(t.FailedSum),
		Queued: t.Queued, QueueWait: time.Duration(t.QueueWait), Reconnects: t.Reconnects, Connects: t.Connects, ConnectSum: time.Duration(t.ConnectSum),
		DNSSum: time.Duration(t.DNSSum)}
	if t.Connects > 0 {
		h.Counts.ConnectMin, h.Counts.ConnectMax = time.Duration(t.ConnectMin), time.Duration(t.ConnectMax)
		h.Counts.DNSMin, h.Counts.DNSMax = time.Duration(t.DNSMin), time.Duration(t.DNSMax)
	}
	if unsent > 0 {
		h.UnsentReason = in.Intent.Reason
	}
	h.Histograms = result.Histograms{LatencyOK: m.encode(t.LatencyOK), LatencyBad: m.encode(t.LatencyBad),
		FirstByte: m.encode(t.FirstByte), Lag: m.encode(t.Lag), ConnWait: m.encode(t.ConnWait), Failed: m.encode(t.Failed)}
	h.AllSent = allSent(t)
	h.Rates = rates(t, total)
	if d := in.Elapsed - in.Stopped; in.Wait && in.Stopped > 0 && d > 0 {
		h.Drain = &result.Drain{Duration: d, Requests: t.Drained, InRates: true}
	}
	h.SendDelay = result.SendDelay{Own: lagStats(t.Lag), ConnWait: lagStats(t.ConnWait)}
	h.Lag = h.SendDelay.Own
	g := &h.Generator
	g.User, g.System = in.Usage.User, in.Usage.System
	g.Cores = in.Cores
	if requests > 0 {
		g.CPUPerRequest = time.Duration(meanNS(int64(in.Usage.CPU()), requests))
	}
	if total > 0 && in.Cores > 0 {
		g.Utilization = in.Usage.CPU().Seconds() / total / float64(in.Cores)
	}
	g.VoluntarySwitches, g.ForcedSwitches, g.MaxRSSBytes = in.Usage.Voluntary, in.Usage.Involuntary, in.Usage.MaxRSS
	g.OthersCPU, g.Steal, g.CPUPressure = in.Machine.Others, in.Machine.Steal, in.Machine.Pressure
	h.Target = in.Target
	h.Verdict = verdict(in, r)
	h.Hints = hints(t, in.Mismatch)
	h.Series = in.Series
	if h.Series == nil {
		h.Series = []stats.Second{}
	}
	h.Config = in.Config
	h.Protocol, h.ALPN, h.Transport, h.TLS = in.Protocol, in.ALPN, in.Transport, in.TLS
}

// allSent summarises every sent request of t.
func allSent(t *stats.Totals) result.AllSent {
	h := t.AllSent()
	a := result.AllSent{Requests: h.TotalCount(), Responses: t.Responses(), Failed: t.Failed.TotalCount(), CutOff: t.CutOff(), Truncated: t.Truncated(), NotSent: t.NotSent}
	if a.Requests == 0 {
		return a
	}
	q := quantiles(h, []float64{50, 90, 99, 99.9, 99.99, 100})
	a.Mean = time.Duration(meanNS(t.LatencySum+t.FailedSum, a.Requests))
	a.P50, a.P90, a.P99, a.P999, a.P9999, a.Max = time.Duration(q[0]), time.Duration(q[1]), time.Duration(q[2]), time.Duration(q[3]), time.Duration(q[4]), time.Duration(q[5])
	return a
}

// rates are t's rates over total seconds.
func rates(t *stats.Totals, total float64) result.Rates {
	if total <= 0 {
		return result.Rates{}
	}
	return result.Rates{RequestsPerSec: float64(t.Requests()) / total, CompletedPerSec: float64(t.Responses()) / total,
		SuccessfulPerSec: float64(successes(t)) / total}
}

// successes counts t's successful responses: those whose status does not
// count as failed, and failed ones their step expects. (Responses that
// failed a check are errors, not responses.)
func successes(t *stats.Totals) int64 {
	n := t.Expected
	for code, c := range t.Status {
		if !status.Failed(code) {
			n += c
		}
	}
	return n
}

// lagStats summarises a histogram of ns values.
func lagStats(h *hdr.Histogram) result.LagStats {
	q := quantiles(h, []float64{50, 90, 99, 99.9, 100})
	return result.LagStats{Samples: h.TotalCount(), P50: time.Duration(q[0]), P90: time.Duration(q[1]), P99: time.Duration(q[2]),
		P999: time.Duration(q[3]), Max: time.Duration(q[4])}
}
