package report

import "github.com/hail-loadgen/hail/result"

import "fmt"

// The verdict's stream evidence: hail's own read lag, from an event's
// arrival in the kernel to hail reading it. It is the streams' measure of
// whether hail itself was slowed, beside its own send lateness: when it is
// large against the gaps between events, the gaps hail measured include
// its own delay — the symptom of a client that cannot keep up with its
// streams — so Classify counts it as evidence for the generator-side
// kinds, and inter-token latency is marked affected whatever the kind.

// Thresholds of the stream evidence.
const (
	readLagP99    = lateP99 // seconds: hail's read lag p99 above this is late...
	readLagShare  = 0.1     // ...when it is also this share of the median gap between events
	readLagEvents = 100     // fewer events prove nothing
)

// ReadLate reports whether hail read its streams' events late: a read lag
// p99 above 1 ms (Late) and above a tenth of the median gap between events,
// over 100 events or more.
func (e Evidence) ReadLate() bool {
	return e.ReadLagSamples >= readLagEvents && e.ReadLagP99 > readLagP99 && e.ReadLagP99 > readLagShare*e.ReadGap
}

// readLagEvidence fills e's read lag from r's streams (absent: none): the
// gap it is judged against is the median inter-token latency of hail llm's
// streams, else the median gap between events.
func readLagEvidence(e *Evidence, r *result.Result) {
	s := r.Hail.Stream
	if s == nil {
		return
	}
	e.ReadLagP99, e.ReadLagMax, e.ReadLagSamples, e.ReadGap = s.ReadLag.P99.Seconds(), s.ReadLag.Max.Seconds(), s.ReadLag.Samples, s.Gap.P50.Seconds()
	if l := r.Hail.LLM; l != nil && l.ITL.Samples > 0 {
		e.ReadGap, e.readTokens = l.ITL.P50.Seconds(), true
	}
}

// readLagReason is the verdict's sentence about a late read.
func readLagReason(e Evidence) string {
	what := "events"
	if e.readTokens {
		what = "tokens (ITL)"
	}
	return fmt.Sprintf("hail read the stream late: its read lag (kernel arrival to hail reading the event) p99 %s, max %s, against a median gap of %s between %s; "+
		"the gaps it measured include its own delay, so inter-token latency is affected — give hail more CPU (or fewer streams per core)",
		fmtDur(e.ReadLagP99), fmtDur(e.ReadLagMax), fmtDur(e.ReadGap), what)
}
