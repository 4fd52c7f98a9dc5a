package result

import "time"

// Counts are exact totals. Every intended request ended as exactly one
// of: sent (its first byte was written on an established connection; then
// a response, an error or a truncated stream), not sent (its connection could not be set up:
// an error, counted in Requests and Errors as oha counts it, but never
// sent), unsent (still in hail when the run stopped: not a request at
// all), or skipped (a request number no scenario step could serve).
// Intended = Sent + NotSent + Unsent + Skipped; Requests = Sent + NotSent =
// Responses + Errors + Truncated.
type Counts struct {
	// Intended, Sent, NotSent, Unsent and Skipped account for every
	// intended request, as above.
	Intended int64 `json:"intended"`
	Sent     int64 `json:"sent"`
	NotSent  int64 `json:"not_sent"`
	Unsent   int64 `json:"unsent"`
	Skipped  int64 `json:"skipped,omitempty"`
	// Reconnects are requests sent again, once, on a new connection
	// because the server had closed their idle keep-alive connection
	// without answering: not errors.
	Reconnects int64 `json:"reconnects"`
	// Requests are the requests that ended (oha's count), Responses of
	// them got a response, Errors failed, Aborted of the errors were cut
	// off by the run's end.
	Requests  int64 `json:"requests"`
	Responses int64 `json:"responses"`
	Errors    int64 `json:"errors"`
	Aborted   int64 `json:"aborted"`
	// Truncated are streams the run's end cut after its drain (a stream
	// still running): sent requests that are neither responses nor
	// errors, cut off like the Aborted.
	Truncated int64 `json:"truncated,omitempty"`
	// Expected are responses whose status counts as failed (HTTP ≥ 400,
	// gRPC not OK) but that their scenario step expects: responses, not
	// failures.
	Expected int64 `json:"expected,omitempty"`
	// BodyBytes are response body bytes, WireBytes every byte read,
	// SentBytes every byte written.
	BodyBytes int64 `json:"body_bytes"`
	WireBytes int64 `json:"wire_bytes"`
	SentBytes int64 `json:"sent_bytes"`
	// LatencySum sums the responses' latencies; FailedSum the elapsed
	// times of the sent requests that failed (not cut off).
	LatencySum time.Duration `json:"latency_sum_ns"`
	FailedSum  time.Duration `json:"failed_sum_ns,omitempty"`
	// Queued are requests that waited for a free connection (open
	// model), QueueWait their total wait.
	Queued    int64         `json:"queued"`
	QueueWait time.Duration `json:"queue_wait_ns"`
	// Connects are connections set up; ConnectSum, ConnectMin and
	// ConnectMax their setup times, DNSSum, DNSMin and DNSMax their name
	// lookups.
	Connects   int64         `json:"connects"`
	ConnectSum time.Duration `json:"connect_sum_ns"`
	ConnectMin time.Duration `json:"connect_min_ns"`
	ConnectMax time.Duration `json:"connect_max_ns"`
	DNSSum     time.Duration `json:"dns_sum_ns"`
	DNSMin     time.Duration `json:"dns_min_ns"`
	DNSMax     time.Duration `json:"dns_max_ns"`
}

// Histograms are a run's (or a step's) HdrHistograms of nanosecond values,
// each V2-compressed and base64-encoded as HdrHistogram's Encode writes
// them (github.com/HdrHistogram/hdrhistogram-go's Decode reads them).
type Histograms struct {
	// LatencyOK and LatencyBad are the latencies of the successful and the
	// other responses.
	LatencyOK  string `json:"latency_2xx"`
	LatencyBad string `json:"latency_other"`
	// FirstByte is the time to each response's first byte.
	FirstByte string `json:"first_byte"`
	// Lag is hail's own send lateness, ConnWait the wait for a free
	// connection.
	Lag      string `json:"schedule_lag"`
	ConnWait string `json:"conn_wait,omitempty"`
	// Failed holds the sent requests that failed (not cut off) at their
	// elapsed time.
	Failed string `json:"failed,omitempty"`
}

// Rates are a run's rates over Summary.Total.
type Rates struct {
	// RequestsPerSec is oha's requests/s: every request that ended.
	RequestsPerSec float64 `json:"requests_per_sec"`
	// CompletedPerSec counts responses (any status).
	CompletedPerSec float64 `json:"completed_per_sec"`
	// SuccessfulPerSec counts successful responses: HTTP below 400, gRPC
	// OK, a scenario step's expected statuses, no failed check.
	SuccessfulPerSec float64 `json:"successful_per_sec"`
}

// StepCounts are a step's exact totals.
type StepCounts struct {
	// Requests ended (responses, errors and truncated streams); NotSent
	// of them failed before they were sent.
	Requests int64 `json:"requests"`
	NotSent  int64 `json:"not_sent,omitempty"`
	// Responses, Errors and Truncated split Requests; Aborted of the
	// errors were cut off by the run's end, and so were the Truncated
	// streams (--stream-drain), which are not errors.
	Responses int64 `json:"responses"`
	Errors    int64 `json:"errors"`
	Aborted   int64 `json:"aborted"`
	Truncated int64 `json:"truncated,omitempty"`
	// Expected are responses with a failed status the step expects.
	Expected int64 `json:"expected,omitempty"`
	// Failed are errors other than cut-off requests, plus responses with
	// a failed status the step does not expect.
	Failed int64 `json:"failed"`
	// BodyBytes and SentBytes are bytes received in bodies and written.
	BodyBytes int64 `json:"body_bytes"`
	SentBytes int64 `json:"sent_bytes"`
	// LatencySum sums the responses' latencies, FailedSum the failed sent
	// requests' elapsed times.
	LatencySum time.Duration `json:"latency_sum_ns"`
	FailedSum  time.Duration `json:"failed_sum_ns,omitempty"`
}

// OriginCounts are an origin's exact totals: a step's, and its part of
// the run's intended and unsent requests.
type OriginCounts struct {
	StepCounts
	Intended int64 `json:"intended"`
	Unsent   int64 `json:"unsent"`
}

// RPS summarises requests per second over the run's whole seconds (the
// whole run when it lasted under a second).
type RPS struct {
	// Mean, Max and Min are over the seconds.
	Mean float64 `json:"mean"`
	// Stddev is the sample standard deviation; nil with fewer than two
	// seconds.
	Stddev *float64 `json:"stddev"`
	Max    float64  `json:"max"`
	Min    float64  `json:"min"`
	// Percentiles are of the per-second rates.
	Percentiles RatePercentiles `json:"percentiles"`
}

// RatePercentiles are percentiles of a rate, in requests per second.
type RatePercentiles struct {
	// P10 to P9999 are the 10th to the 99.99th percentile.
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	P9999 float64 `json:"p99.99"`
}

// Drain is what ended after the run stopped sending, while it let
// requests in flight finish within a grace (Plan.WaitOngoing).
type Drain struct {
	// Duration is the drain's length: from the stop to the run's end.
	Duration time.Duration `json:"seconds" unit:"s"`
	// Requests are the sent requests that ended in the drain.
	Requests int64 `json:"requests"`
	// InRates says that the rates and Summary.Total include the drain
	// (always).
	InRates bool `json:"in_rates"`
}

// SendDelay splits the open model's send delay.
type SendDelay struct {
	// Own is hail's own lateness: a connection was free, or the request
	// had not even been taken yet.
	Own LagStats `json:"own"`
	// ConnWait is the wait because every connection had a request in
	// flight: the target's backpressure.
	ConnWait LagStats `json:"conn_wait"`
}

// LagStats describe a delay over its samples.
type LagStats struct {
	// Samples is how many requests it covers; P50 to Max are over them.
	Samples int64         `json:"samples"`
	P50     time.Duration `json:"p50" unit:"s"`
	P90     time.Duration `json:"p90" unit:"s"`
	P99     time.Duration `json:"p99" unit:"s"`
	P999    time.Duration `json:"p99.9" unit:"s"`
	Max     time.Duration `json:"max" unit:"s"`
}
