package result

import "time"

// StepResult is one step of a scenario: its own counts, status codes,
// errors, latency and histograms. The run's totals (the Result's top
// level) are the sum of its steps.
type StepResult struct {
	// Name is the step's name.
	Name string `json:"name"`
	// Counts are the step's exact totals: Failed are errors other than
	// deadline aborts plus responses with status ≥ 400 that the step does
	// not expect.
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
	// checks (expect:), by check ("status 201, 202", `json id = "x"`).
	CheckFailures map[string]int64 `json:"check_failures,omitempty"`
	// Series is the step's per-second series.
	Series []Second `json:"series"`
	// LLM is what the step's token streams measured (a scenario's llm
	// step), as the hail section's LLM says it of a run; nil for other
	// steps.
	LLM *LLM `json:"llm,omitempty"`
}

// Phase is a scenario's setup or teardown: steps run once, in order, on a
// connection of their own.
type Phase struct {
	// Steps are the phase's steps, each with its counts, latency, status
	// codes and errors (no per-second series).
	Steps []StepResult `json:"steps"`
	// Duration is how long the phase took.
	Duration time.Duration `json:"seconds" unit:"s"`
	// Failed names the step that stopped the phase, and why ("" when
	// every step ran).
	Failed string `json:"failed,omitempty"`
}
