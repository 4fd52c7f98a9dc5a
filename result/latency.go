package result

import "time"

// StepLatency summarises a step's response latency.
type StepLatency struct {
	// Min, Mean and Max are the fastest, mean and slowest response; P50
	// to P999 percentiles.
	Min  time.Duration `json:"min" unit:"s"`
	Mean time.Duration `json:"mean" unit:"s"`
	P50  time.Duration `json:"p50" unit:"s"`
	P90  time.Duration `json:"p90" unit:"s"`
	P95  time.Duration `json:"p95" unit:"s"`
	P99  time.Duration `json:"p99" unit:"s"`
	P999 time.Duration `json:"p99.9" unit:"s"`
	Max  time.Duration `json:"max" unit:"s"`
}

// AllSent is the latency of every sent request that ended, not only of
// those that got a response: a request that failed after it was sent (a
// timeout, a reset, a failed check) counts at its elapsed time. Requests
// the run's end cut off, and requests never sent, are left out and
// counted.
type AllSent struct {
	// Requests are the sent requests it holds: Responses plus Failed.
	Requests  int64 `json:"requests"`
	Responses int64 `json:"responses"`
	Failed    int64 `json:"failed"`
	// CutOff were sent and cut off by the run's end: aborted, or
	// (Truncated of them) streams still running after the drain; NotSent
	// failed before they were sent.
	CutOff    int64 `json:"cut_off"`
	Truncated int64 `json:"truncated,omitempty"`
	NotSent   int64 `json:"not_sent"`
	// Mean, the percentiles and Max are over Requests.
	Mean  time.Duration `json:"mean" unit:"s"`
	P50   time.Duration `json:"p50" unit:"s"`
	P90   time.Duration `json:"p90" unit:"s"`
	P99   time.Duration `json:"p99" unit:"s"`
	P999  time.Duration `json:"p99.9" unit:"s"`
	P9999 time.Duration `json:"p99.99" unit:"s"`
	Max   time.Duration `json:"max" unit:"s"`
}
