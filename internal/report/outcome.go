package report

import (
	"fmt"
	"strings"

	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/result"
)

// successfulResponses counts r's successful responses: those whose status does not
// count as failed (HTTP below 400, gRPC OK) and failed ones their
// scenario step expects. Responses that failed a check are errors.
func successfulResponses(r *result.Result) int64 {
	n := r.Hail.Counts.Expected
	for k, c := range r.StatusCodeDistribution {
		if code, ok := status.ByName(k); ok && !status.Failed(code) {
			n += c
		}
	}
	return n
}

// Failure says why no request of r succeeded, in one line with the likely
// cause ("nothing is listening on 127.0.0.1:1"); "" when one did, or none
// was made. Every report says it first, and hail exits with a code of its
// own (3).
func Failure(r *result.Result) string {
	c := r.Hail.Counts
	if c.Requests == 0 || successfulResponses(r) > 0 {
		return ""
	}
	v := r.Hail.Verdict
	switch {
	case c.Responses == 0 && (c.NotSent > 0 || r.Hail.AllSent.Failed > 0) && v.Bottleneck == result.BottleneckTarget && len(v.Reasons) > 0:
		return strings.Join(v.Reasons, "; ")
	case c.Responses > 0:
		return fmt.Sprintf("every response had a failed status: %s", countList(r.StatusCodeDistribution))
	case c.Aborted+c.Truncated == c.Requests:
		s := fmt.Sprintf("no request completed before the run ended: the %d sent were cut off (%s)", c.Aborted+c.Truncated, unsentWhy(r.Hail.UnsentReason))
		if c.Truncated > 0 {
			s += fmt.Sprintf(", %d of them streams truncated after the drain (their first events are measured)", c.Truncated)
		}
		return s
	}
	return "every request failed: " + countList(r.ErrorDistribution)
}

// unsentWhy names why a run stopped, for a sentence.
func unsentWhy(reason string) string {
	if reason == "" {
		return "the run's end"
	}
	return reason
}

// FailureHeadline is the line every report puts first for a run in which
// no request succeeded ("" otherwise).
func FailureHeadline(r *result.Result) string {
	if f := Failure(r); f != "" {
		return "NO REQUEST SUCCEEDED: " + f
	}
	return ""
}

// allSentLine is the all-sent block's count line: how many sent requests
// the percentiles hold, how many failed, how many were cut off and left
// out, and how many could not be sent.
func allSentLine(a result.AllSent) string {
	s := fmt.Sprintf("%d sent: %d responses, %d failed (at their elapsed time), %d cut off by the run's end (left out", a.Requests+a.CutOff, a.Responses, a.Failed, a.CutOff)
	if a.Truncated > 0 {
		s += fmt.Sprintf("; %d of them streams truncated, in the time to first event and token only", a.Truncated)
	}
	s += ")"
	if a.NotSent > 0 {
		s += fmt.Sprintf("; %d more failed before they were sent (not in any latency)", a.NotSent)
	}
	return s
}
