package result

import "time"

// Percentiles of a latency: P999 is the 99.9th, P9999 the 99.99th. Exact
// to HdrHistogram's three significant digits.
type Percentiles struct {
	// P10 to P9999 are the 10th to the 99.99th percentile.
	P10   time.Duration `json:"p10" unit:"s"`
	P25   time.Duration `json:"p25" unit:"s"`
	P50   time.Duration `json:"p50" unit:"s"`
	P75   time.Duration `json:"p75" unit:"s"`
	P90   time.Duration `json:"p90" unit:"s"`
	P95   time.Duration `json:"p95" unit:"s"`
	P99   time.Duration `json:"p99" unit:"s"`
	P999  time.Duration `json:"p99.9" unit:"s"`
	P9999 time.Duration `json:"p99.99" unit:"s"`
}

// Details are oha's connection-setup and first-byte times.
type Details struct {
	// DNSDialup is each connection's setup (name lookup, connect, TLS),
	// DNSLookup its name lookup alone (zero without a connection).
	DNSDialup MinAvgMax `json:"DNSDialup"`
	DNSLookup MinAvgMax `json:"DNSLookup"`
	// FirstByte is the time to each response's first byte.
	FirstByte MinAvgMax `json:"firstByte"`
}

// MinAvgMax are the mean and extremes of a time.
type MinAvgMax struct {
	// Average is the mean, Fastest the least and Slowest the greatest.
	Average time.Duration `json:"average" unit:"s"`
	Fastest time.Duration `json:"fastest" unit:"s"`
	Slowest time.Duration `json:"slowest" unit:"s"`
}

// Summary is oha's summary block. Its latencies are of the responses;
// Hail.AllSent has every sent request's.
type Summary struct {
	// SuccessRate is responses over the requests not cut off by the run's
	// end (0 to 1; null in the JSON when there were none).
	SuccessRate float64 `json:"successRate"`
	// Total is the run's length: from its start until its last request
	// ended (a drain included).
	Total time.Duration `json:"total" unit:"s"`
	// Slowest, Fastest and Average are the responses' latencies (null in
	// the JSON without a response).
	Slowest time.Duration `json:"slowest" unit:"s"`
	Fastest time.Duration `json:"fastest" unit:"s"`
	Average time.Duration `json:"average" unit:"s"`
	// RequestsPerSec is every request that ended (responses and errors)
	// over Total.
	RequestsPerSec float64 `json:"requestsPerSec"`
	// TotalData is the response body bytes received, SizePerRequest per
	// response, SizePerSec per second of Total.
	TotalData      int64   `json:"totalData"`
	SizePerRequest int64   `json:"sizePerRequest"`
	SizePerSec     float64 `json:"sizePerSec"`
}

// Metrics is oha's CI-friendly block.
type Metrics struct {
	// SuccessRate and RequestsPerSec are Summary's.
	SuccessRate    float64 `json:"success_rate"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	// Latency are the responses' latency statistics, in milliseconds
	// rounded to the microsecond in the JSON (latency_ms).
	Latency LatencyMetrics `json:"latency_ms"`
}

// LatencyMetrics are Metrics' latency statistics, each a whole number of
// microseconds.
type LatencyMetrics struct {
	// Min, Mean and Max are the fastest, mean and slowest response.
	Min  time.Duration `json:"min" unit:"ms"`
	Mean time.Duration `json:"mean" unit:"ms"`
	// P50, P95 and P99 are percentiles.
	P50 time.Duration `json:"p50" unit:"ms"`
	P95 time.Duration `json:"p95" unit:"ms"`
	P99 time.Duration `json:"p99" unit:"ms"`
	Max time.Duration `json:"max" unit:"ms"`
}
