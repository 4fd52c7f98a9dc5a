// Package result holds hail's JSON result document (hail -j, hail run -o
// result.json, hail merge): the Result that internal/report builds, merges
// and renders and that package hail returns, and every type in it,
// declared once:
//
//   - oha's Summary, Metrics (LatencyMetrics), latency Percentiles and
//     connection Details (MinAvgMax);
//   - the exact counts, histograms, rates, verdict, thresholds, scenario
//     state, shards and merges, hail's and the target's resource use and
//     the send delay;
//   - the latency summaries of a step, stage or origin (StepLatency) and of
//     every sent request (AllSent);
//   - the per-second series (Second), which internal/stats' collector fills;
//   - a scenario's steps (StepResult) and its setup and teardown (Phase);
//   - the "hail" section around them (HailSection), its start a time.Time
//     (Unix nanoseconds in the document);
//   - a ramp's stages (StageResult with its StageWarmup, StageProcess,
//     StageLoad and StageLLM) and the origins of a run that sent to several
//     servers (OriginResult);
//   - the stream and LLM blocks (Stream, LLM with its vLLM keys and
//     objectives, their TimeDist and Dist distributions and histograms).
//
// Package hail names Result and every type here by an alias (hail.Counts
// is result.Counts), so either name serves.
//
// Their JSON keys are the document's, in their tags. Every time is a
// time.Duration: under a *_ns key it is written as integer nanoseconds (as
// encoding/json writes a Duration); a key the document holds in float
// seconds, milliseconds or microseconds has a unit tag (unit:"s",
// unit:"ms", unit:"us"), and the document's writer and reader (WriteJSON
// and ReadJSON here, which Result's MarshalJSON and UnmarshalJSON call, so
// encoding/json writes a Result as the command does; through
// internal/wire) write and read it in that unit. Encoded alone with
// encoding/json, a value of the other types writes its times in
// nanoseconds.
package result
