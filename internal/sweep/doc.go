// Package sweep finds the highest request rate at which an LLM server
// meets its objectives (hail llm --sweep): a closed-model run finds the
// throughput ceiling, open-model runs at fixed steps below it find the
// first rate that fails, and a bisection between the last rate that
// passed and that one narrows the answer. A rate passes when at least
// 99% of the requests meant to be sent in its measurement window (its
// warm-up excluded) met every objective.
//
// Each step is measured from its requests' own records (the per-request
// trace: intended send, first token, end), not from the run's histograms,
// so its warm-up is left out exactly. Search is the strategy alone, given
// a function that runs one step; Window measures a step.
package sweep
