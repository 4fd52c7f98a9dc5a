package result

import "github.com/hail-loadgen/hail/internal/status"

// Result is a run's outcome: the JSON report the command writes (hail -j,
// hail run -o result.json), as Go values. Its first fields are oha's keys,
// with oha's meanings (latencies of the responses only; requests that
// failed before they were sent counted as errors); Hail holds what hail
// measures beyond them: exact counts, the latency of every sent request,
// the send delay, the bottleneck verdict, the per-second series, and a
// scenario's steps and thresholds.
//
// Times are time.Duration. The JSON keeps oha's units (float seconds,
// milliseconds under latency_ms): WriteJSON and json.Marshal write a
// Result exactly as the command does, and ReadJSON and json.Unmarshal
// read back what either wrote. The json tags name each field's key.
type Result struct {
	// Summary is oha's summary block: success rate, run time, latency
	// extremes and mean, rates and sizes.
	Summary Summary `json:"summary"`
	// Metrics is oha's CI-friendly block.
	Metrics Metrics `json:"metrics"`
	// ResponseTimeHistogram counts the responses' latencies in 11 equal
	// bins from the fastest to the slowest, keyed by each bin's upper
	// edge in seconds as oha writes it ("0.0012").
	ResponseTimeHistogram map[string]int64 `json:"responseTimeHistogram"`
	// LatencyPercentiles are the responses' latency percentiles.
	LatencyPercentiles Percentiles `json:"latencyPercentiles"`
	// ResponseTimeHistogramSuccessful and LatencyPercentilesSuccessful
	// cover the successful responses (HTTP 2xx, gRPC OK: SplitCounts),
	// ResponseTimeHistogramNotSuccessful and
	// LatencyPercentilesNotSuccessful the others; all four only with
	// hail.WithSuccessBreakdown or --stats-success-breakdown (nil
	// otherwise).
	ResponseTimeHistogramSuccessful    map[string]int64 `json:"responseTimeHistogramSuccessful,omitempty"`
	LatencyPercentilesSuccessful       *Percentiles     `json:"latencyPercentilesSuccessful,omitempty"`
	ResponseTimeHistogramNotSuccessful map[string]int64 `json:"responseTimeHistogramNotSuccessful,omitempty"`
	LatencyPercentilesNotSuccessful    *Percentiles     `json:"latencyPercentilesNotSuccessful,omitempty"`
	// FirstByteHistogram and FirstBytePercentiles are the time to each
	// response's first byte, binned as ResponseTimeHistogram.
	FirstByteHistogram   map[string]int64 `json:"firstByteHistogram"`
	FirstBytePercentiles Percentiles      `json:"firstBytePercentiles"`
	// RPS summarises the requests ended in each whole second of the run.
	RPS RPS `json:"rps"`
	// Details are connection setup and first-byte times.
	Details Details `json:"details"`
	// StatusCodeDistribution counts responses by status: HTTP codes
	// ("200") and gRPC status names ("OK", "Unavailable").
	StatusCodeDistribution map[string]int64 `json:"statusCodeDistribution"`
	// ErrorDistribution counts failed requests by error kind ("connection
	// refused", "timeout", "check failed: status", "aborted due to
	// deadline").
	ErrorDistribution map[string]int64 `json:"errorDistribution"`
	// Hail is what hail measures beyond oha's keys.
	Hail HailSection `json:"hail"`
}

// SplitCounts returns the number of r's successful responses (HTTP 2xx,
// gRPC OK: what the latency breakdown's successful half holds) and of
// the others, from StatusCodeDistribution.
func (r *Result) SplitCounts() (ok, other int64) {
	for k, n := range r.StatusCodeDistribution {
		if slot, known := status.ByName(k); known && status.Success(slot) {
			ok += n
		} else {
			other += n
		}
	}
	return ok, other
}
