package report

import "fmt"

// The verdict's stream evidence: hail's own read lag (from an event's
// arrival in the kernel to hail reading it). When it is large against the
// gaps between events, the gaps hail measured include its own delay — the
// symptom of a client that cannot keep up with its streams — so the
// verdict names the generator and inter-token latency is marked affected.
// It adds to the verdict Classify made; it does not change Classify.

// Thresholds of the stream evidence.
const (
	readLagP99    = 0.001 // seconds: hail's read lag p99 above this is late...
	readLagShare  = 0.1   // ...when it is also this share of the median gap between events
	readLagEvents = 100   // fewer events prove nothing
)

// streamVerdict adds the stream evidence to r's verdict.
func streamVerdict(r *Result) {
	s := r.Hail.Stream
	if s == nil || s.ReadLag.Samples < readLagEvents {
		return
	}
	gap, what := s.Gap.P50, "events"
	if l := r.Hail.LLM; l != nil && l.ITL.Samples > 0 {
		gap, what = l.ITL.P50, "tokens (ITL)"
	}
	lag := s.ReadLag.P99
	if lag <= readLagP99 || lag <= readLagShare*gap {
		return
	}
	v := &r.Hail.Verdict
	why := fmt.Sprintf("hail read stream events late: its read lag (kernel arrival to hail reading the event) p99 %s, max %s, against a median gap of %s between %s; "+
		"the gaps it measured include its own delay, so inter-token latency is affected — give hail more CPU (or fewer streams per core)",
		fmtDur(lag), fmtDur(s.ReadLag.Max), fmtDur(gap), what)
	if !GeneratorSide(v.Bottleneck) {
		v.Bottleneck, v.GeneratorLimited = BottleneckGenerator, true
		v.Reasons = append([]string{why}, v.Reasons...)
	} else {
		v.Reasons = append(v.Reasons, why)
	}
	if l := r.Hail.LLM; l != nil {
		l.ITLAffected = true
	}
}
