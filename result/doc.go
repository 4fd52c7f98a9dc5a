// Package result holds the types of hail's JSON result document (hail -j,
// hail run -o result.json, hail merge) that internal/report builds, merges
// and renders and that package hail returns, declared once for both: the
// exact counts, histograms, rates, verdict, thresholds, scenario state,
// shards and the stream and LLM blocks' histograms. Their JSON keys are
// the document's; a time in them is a time.Duration written as integer
// nanoseconds (the *_ns keys).
//
// The document's parts that hold times in seconds or milliseconds
// (oha's summary, percentiles, a step's, stage's or origin's latency, the
// stream and LLM time distributions) are still declared twice: in package
// hail as time.Duration (Result, Summary, StepResult, …) and in
// internal/report in the JSON's float units, converted at one boundary by
// JSON key (hail's convert.go). Package hail names every type here by an
// alias (hail.Counts is result.Counts), so either name serves.
package result
