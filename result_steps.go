package hail

import "time"

// StepResult is one step of a scenario: its own counts, status codes,
// errors, latency and histograms. The run's totals are the sum of its
// steps.
type StepResult struct {
	// Name is the step's name.
	Name string `json:"name"`
	// Counts are the step's exact totals.
	Counts StepCounts `json:"counts"`
	// Share is the step's part of all requests (0 to 1).
	Share float64 `json:"share"`
	// RPS is the step's requests ended per second over the run.
	RPS float64 `json:"rps"`
	// ErrorRate is Failed / (Requests − Aborted).
	ErrorRate float64 `json:"error_rate"`
	// Latency is of the step's responses (as oha's keys).
	Latency StepLatency `json:"latency"`
	// AllSent is the latency of every sent request of the step, failures
	// at their elapsed time (what its thresholds judge).
	AllSent AllSent `json:"all_sent"`
	// StatusCodeDistribution and ErrorDistribution are the step's, as the
	// Result's.
	StatusCodeDistribution map[string]int64 `json:"statusCodeDistribution"`
	ErrorDistribution      map[string]int64 `json:"errorDistribution"`
	// Histograms are the step's HdrHistograms.
	Histograms Histograms `json:"histograms"`
	// Yields counts the times the step was chosen but could not be built
	// (an empty pool, no captured value yet) and another ran instead;
	// YieldReasons breaks them down.
	Yields       int64            `json:"yields"`
	YieldReasons map[string]int64 `json:"yield_reasons,omitempty"`
	// Stopped says why the step was no longer chosen before the run
	// ended: a unique feed it needs was used up ("" when it was not).
	Stopped string `json:"stopped,omitempty"`
	// Captures counts values captured from the step's responses;
	// CaptureMisses responses where a capture found nothing.
	Captures      int64 `json:"captures"`
	CaptureMisses int64 `json:"capture_misses"`
	// CheckFailures counts the responses that failed each of the step's
	// checks, by check ("status 201, 202", `json id = "x"`).
	CheckFailures map[string]int64 `json:"check_failures,omitempty"`
	// Series is the step's per-second series.
	Series []Second `json:"series"`
	// LLM is what the step's token streams measured (a scenario's llm
	// step), as Hail.LLM says it of a run; nil for other steps.
	LLM *LLM `json:"llm,omitempty"`
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

// StepLatency summarises a step's response latency.
type StepLatency struct {
	// Min, Mean and Max are the fastest, mean and slowest response; P50
	// to P999 percentiles.
	Min  time.Duration `json:"min"`
	Mean time.Duration `json:"mean"`
	P50  time.Duration `json:"p50"`
	P90  time.Duration `json:"p90"`
	P95  time.Duration `json:"p95"`
	P99  time.Duration `json:"p99"`
	P999 time.Duration `json:"p99.9"`
	Max  time.Duration `json:"max"`
}

// ThresholdResult is one pass/fail check of a run and what it measured.
type ThresholdResult struct {
	// Expr is the expression as written ("p99 < 12ms").
	Expr string `json:"expr"`
	// Step is the step it judged; "" for the whole run.
	Step string `json:"step,omitempty"`
	// Stage is the stage it judged, as it was named (its number from 1,
	// or its name); "" for none.
	Stage string `json:"stage,omitempty"`
	// Value is the measured value in the metric's unit: seconds for
	// latencies, a fraction for error_rate, requests per second for rps,
	// a count for errors and requests.
	Value float64 `json:"value"`
	// Measured is Value as the report prints it ("12.3ms").
	Measured string `json:"measured"`
	// Pass says whether the run met it.
	Pass bool `json:"pass"`
	// AbortOnFail is set when its failure stops the run.
	AbortOnFail bool `json:"abort_on_fail,omitempty"`
}

// ScenarioInfo describes the scenario a Result came from.
type ScenarioInfo struct {
	// Name is the scenario's name key, File the file it was loaded from.
	Name string `json:"name,omitempty"`
	File string `json:"file,omitempty"`
	// Pools and Feeds are their state at the end of the load.
	Pools []PoolInfo `json:"pools,omitempty"`
	Feeds []FeedInfo `json:"feeds,omitempty"`
	// EndedBy says why the run ended before its length: its data ran out.
	EndedBy string `json:"ended_by,omitempty"`
}

// FeedInfo is a data feed at the end of the run.
type FeedInfo struct {
	// Name and Order ("sequential", "random", "unique") are the feed's.
	Name  string `json:"name"`
	Order string `json:"order"`
	// Rows are its rows, Used how many were handed out, Refused how many
	// requests found a unique feed used up.
	Rows    int   `json:"rows"`
	Used    int64 `json:"used"`
	Refused int64 `json:"refused,omitempty"`
}

// PoolInfo is a pool of captured values at the end of the run.
type PoolInfo struct {
	// Name is the pool's; Live its values, Max its capacity, Dropped the
	// values it dropped for new ones when full.
	Name    string `json:"name"`
	Live    int    `json:"live"`
	Max     int    `json:"max"`
	Dropped int64  `json:"dropped"`
}

// Phase is a scenario's setup or teardown: steps run once, in order, on a
// connection of their own.
type Phase struct {
	// Steps are the phase's steps (without per-second series).
	Steps []StepResult `json:"steps"`
	// Duration is how long the phase took.
	Duration time.Duration `json:"seconds"`
	// Failed names the step that stopped the phase, and why ("" when
	// every step ran).
	Failed string `json:"failed,omitempty"`
}
