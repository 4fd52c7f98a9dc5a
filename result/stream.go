package result

import "time"

// StreamHistograms are hail.stream's encoded HdrHistograms (as
// Histograms).
type StreamHistograms struct {
	// FirstEvent, Gap, LongestStall and ReadLag are Stream's
	// distributions of the same names.
	FirstEvent   string `json:"first_event"`
	Gap          string `json:"gap"`
	LongestStall string `json:"longest_stall"`
	ReadLag      string `json:"read_lag"`
}

// Goodput is the completed requests that met every objective, with their
// output tokens, in all and per second.
type Goodput struct {
	// Requests and Tokens are the completed requests that met every
	// objective and their output tokens; RequestsPerSec and TokensPerSec
	// the same over the run.
	Requests       int64   `json:"requests"`
	Tokens         int64   `json:"tokens"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	TokensPerSec   float64 `json:"tokens_per_sec"`
}

// LLMHistograms are hail.llm's encoded HdrHistograms (as Histograms).
type LLMHistograms struct {
	// TTFT to RequestRate are LLM's distributions of the same names
	// (OutputTokens and InputTokens per request: tokens; RequestRate:
	// thousandths of tokens per second; the others nanoseconds).
	TTFT         string `json:"ttft"`
	TTFTFromSend string `json:"ttft_from_send"`
	TPOT         string `json:"tpot"`
	ITL          string `json:"itl"`
	ChunkGap     string `json:"inter_chunk_gap"`
	E2E          string `json:"e2e"`
	E2EFromSend  string `json:"e2e_from_send"`
	OutputTokens string `json:"output_tokens"`
	InputTokens  string `json:"input_tokens"`
	RequestRate  string `json:"output_tokens_per_sec_per_request"`
}

// Stream is the report's hail.stream: the run's streaming responses
// (server-sent events), docs/llm.md.
type Stream struct {
	// Streams were responses that turned out to be streams (Content-Type
	// text/event-stream, or any 2xx with Plan.SSE); Completed ended well;
	// Truncated were cut when the run ended after its drain (sent
	// requests, not errors); Failed ended in an error.
	Streams   int64 `json:"streams"`
	Completed int64 `json:"completed"`
	Truncated int64 `json:"truncated"`
	Failed    int64 `json:"failed"`
	// Events is how many events they delivered; EventsPerSec over the run.
	Events       int64   `json:"events"`
	EventsPerSec float64 `json:"events_per_sec"`
	// FirstEvent is the time from each request's intended send time to its
	// first event (completed and truncated streams); Gap the time between
	// consecutive events; LongestStall each completed stream's longest time
	// without an event (from its response head).
	FirstEvent   TimeDist `json:"time_to_first_event"`
	Gap          TimeDist `json:"inter_event_gap"`
	LongestStall TimeDist `json:"longest_stall"`
	// ReadLag is, per event, the time from its bytes' arrival in the kernel
	// to hail reading them; no samples where the engine cannot see the
	// kernel's receive time.
	ReadLag TimeDist `json:"read_lag"`
	// Histograms are the above as encoded HdrHistograms (ns), for exact
	// merges.
	Histograms StreamHistograms `json:"histograms"`
}

// TimeDist summarises a histogram of times: its count, mean, standard
// deviation, percentiles and extremes.
type TimeDist struct {
	Samples int64         `json:"samples"`
	Mean    time.Duration `json:"mean" unit:"s"`
	Stddev  time.Duration `json:"stddev" unit:"s"`
	Min     time.Duration `json:"min" unit:"s"`
	P50     time.Duration `json:"p50" unit:"s"`
	P90     time.Duration `json:"p90" unit:"s"`
	P95     time.Duration `json:"p95" unit:"s"`
	P99     time.Duration `json:"p99" unit:"s"`
	P999    time.Duration `json:"p99.9" unit:"s"`
	Max     time.Duration `json:"max" unit:"s"`
}

// Dist summarises a histogram of counts (tokens) or rates (tokens per
// second) as TimeDist does times.
type Dist struct {
	Samples int64   `json:"samples"`
	Mean    float64 `json:"mean"`
	Stddev  float64 `json:"stddev"`
	Min     float64 `json:"min"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P95     float64 `json:"p95"`
	P99     float64 `json:"p99"`
	P999    float64 `json:"p99.9"`
	Max     float64 `json:"max"`
}

// LLM is the report's hail.llm: what the token streams of an LLM load
// measured (Plan.LLM, hail llm; docs/llm.md defines every number), with
// the keys of a vLLM bench serve result file beside them (VLLM).
type LLM struct {
	// API is "completions" or "chat"; Model the model asked for;
	// InputAsked and OutputAsked the token lengths asked for, as given.
	API         string `json:"api,omitempty"`
	Model       string `json:"model,omitempty"`
	InputAsked  string `json:"input_tokens_asked,omitempty"`
	OutputAsked string `json:"output_tokens_asked,omitempty"`
	// SLO are goodput's objectives (nil without).
	SLO *SLO `json:"slo,omitempty"`
	// Arrivals is how the open model's requests arrived: "poisson",
	// "constant", "gamma:B" or "bursts"; "" in the closed model.
	Arrivals string `json:"arrivals,omitempty"`
	// Truncated streams were cut when the run ended (they count in TTFT
	// only); OtherLength completed requests whose output length differed
	// from the one asked for.
	Truncated   int64 `json:"truncated"`
	OtherLength int64 `json:"other_length"`
	// TokenSource counts completed requests by where their output tokens
	// came from: "usage" (the server's usage in every chunk),
	// "usage_spread" (its usage at the end, spread over the content
	// chunks), "content_deltas" (no usage: one token per content chunk).
	TokenSource map[string]int64 `json:"token_source"`
	// TTFT is the time to the first content token from the request's
	// intended send time (coordinated-omission correct), TTFTFromSend from
	// its actual send; TPOT is (last token − first token) ÷ (output tokens
	// − 1); ITL is per token (a chunk of k tokens after a gap g counts k
	// gaps of g/k); ChunkGap the gaps between content chunks; E2E the
	// latency from the intended send to the response's end, E2EFromSend
	// from the actual send.
	TTFT         TimeDist `json:"ttft"`
	TTFTFromSend TimeDist `json:"ttft_from_send"`
	TPOT         TimeDist `json:"tpot"`
	ITL          TimeDist `json:"itl"`
	ChunkGap     TimeDist `json:"inter_chunk_gap"`
	E2E          TimeDist `json:"e2e"`
	E2EFromSend  TimeDist `json:"e2e_from_send"`
	// OutputTokens and InputTokens are per request; RequestRate each
	// request's output tokens per second of its E2EFromSend.
	OutputTokens Dist `json:"output_tokens_per_request"`
	InputTokens  Dist `json:"input_tokens_per_request"`
	RequestRate  Dist `json:"output_tokens_per_sec_per_request"`
	// Goodput is the completed requests that met every objective.
	Goodput Goodput `json:"goodput"`
	// ITLAffected is set when hail's own read lag was large enough to
	// distort inter-token latencies (Verdict.ReadLate).
	ITLAffected bool `json:"itl_affected"`
	// Histograms are the above as encoded HdrHistograms (ns; tokens;
	// thousandths of tokens per second), for exact merges.
	Histograms LLMHistograms `json:"histograms"`

	VLLM
}

// SLO are goodput's objectives (0: none).
type SLO struct {
	TTFT time.Duration `json:"ttft,omitempty" unit:"s"`
	TPOT time.Duration `json:"tpot,omitempty" unit:"s"`
	E2E  time.Duration `json:"e2e,omitempty" unit:"s"`
}

// VLLM are the keys of a vLLM bench serve result file, with vLLM's
// meanings: times from each request's actual send (as vLLM measures;
// milliseconds in the JSON). Its differences from vLLM's own file are
// docs/llm.md's: ITL per token, E2EL to the response's end, HdrHistogram
// percentiles, MaxConcurrentRequests sampled once a second, goodput's
// objectives from the intended send. Completed are the streams that
// ended well; Failed the requests that ended otherwise, except those the
// run's end cut off.
type VLLM struct {
	Duration              time.Duration `json:"duration" unit:"s"`
	Completed             int64         `json:"completed"`
	Failed                int64         `json:"failed"`
	TotalInputTokens      int64         `json:"total_input_tokens"`
	TotalOutputTokens     int64         `json:"total_output_tokens"`
	RequestThroughput     float64       `json:"request_throughput"`
	RequestGoodput        *float64      `json:"request_goodput"`
	OutputThroughput      float64       `json:"output_throughput"`
	TotalTokenThroughput  float64       `json:"total_token_throughput"`
	MaxOutputTokensPerS   float64       `json:"max_output_tokens_per_s"`
	MaxConcurrentRequests int64         `json:"max_concurrent_requests"`

	MeanTTFT   time.Duration `json:"mean_ttft_ms" unit:"ms"`
	MedianTTFT time.Duration `json:"median_ttft_ms" unit:"ms"`
	StdTTFT    time.Duration `json:"std_ttft_ms" unit:"ms"`
	P90TTFT    time.Duration `json:"p90_ttft_ms" unit:"ms"`
	P95TTFT    time.Duration `json:"p95_ttft_ms" unit:"ms"`
	P99TTFT    time.Duration `json:"p99_ttft_ms" unit:"ms"`
	P999TTFT   time.Duration `json:"p99.9_ttft_ms" unit:"ms"`

	MeanTPOT   time.Duration `json:"mean_tpot_ms" unit:"ms"`
	MedianTPOT time.Duration `json:"median_tpot_ms" unit:"ms"`
	StdTPOT    time.Duration `json:"std_tpot_ms" unit:"ms"`
	P90TPOT    time.Duration `json:"p90_tpot_ms" unit:"ms"`
	P95TPOT    time.Duration `json:"p95_tpot_ms" unit:"ms"`
	P99TPOT    time.Duration `json:"p99_tpot_ms" unit:"ms"`
	P999TPOT   time.Duration `json:"p99.9_tpot_ms" unit:"ms"`

	MeanITL   time.Duration `json:"mean_itl_ms" unit:"ms"`
	MedianITL time.Duration `json:"median_itl_ms" unit:"ms"`
	StdITL    time.Duration `json:"std_itl_ms" unit:"ms"`
	P90ITL    time.Duration `json:"p90_itl_ms" unit:"ms"`
	P95ITL    time.Duration `json:"p95_itl_ms" unit:"ms"`
	P99ITL    time.Duration `json:"p99_itl_ms" unit:"ms"`
	P999ITL   time.Duration `json:"p99.9_itl_ms" unit:"ms"`

	MeanE2EL   time.Duration `json:"mean_e2el_ms" unit:"ms"`
	MedianE2EL time.Duration `json:"median_e2el_ms" unit:"ms"`
	StdE2EL    time.Duration `json:"std_e2el_ms" unit:"ms"`
	P90E2EL    time.Duration `json:"p90_e2el_ms" unit:"ms"`
	P95E2EL    time.Duration `json:"p95_e2el_ms" unit:"ms"`
	P99E2EL    time.Duration `json:"p99_e2el_ms" unit:"ms"`
	P999E2EL   time.Duration `json:"p99.9_e2el_ms" unit:"ms"`
}

// SetSLO records goodput's objectives (0: none) and vLLM's
// request_goodput, which is null without objectives.
func (l *LLM) SetSLO(ttft, tpot, e2e time.Duration) {
	if ttft == 0 && tpot == 0 && e2e == 0 {
		l.SLO, l.RequestGoodput = nil, nil
		return
	}
	l.SLO = &SLO{TTFT: ttft, TPOT: tpot, E2E: e2e}
	g := l.Goodput.RequestsPerSec
	l.RequestGoodput = &g
}

// KeepAsked copies into l what src said the requests asked (API, model,
// lengths, arrivals, objectives): a merged or rebuilt entry keeps them.
func (l *LLM) KeepAsked(src *LLM) {
	l.API, l.Model, l.InputAsked, l.OutputAsked, l.Arrivals = src.API, src.Model, src.InputAsked, src.OutputAsked, src.Arrivals
	if s := src.SLO; s != nil {
		l.SetSLO(s.TTFT, s.TPOT, s.E2E)
	}
}

// StageLLM is a stage's token streams (an LLM load with RateStages,
// hail llm --stages): as Result.Hail.LLM, over the requests intended in
// the stage after its warmup; rates per second of its Measured time.
type StageLLM struct {
	// Completed streams ended well; Truncated were cut by the run's end
	// (they count in TTFT only); OtherLength completed with another output
	// length than asked.
	Completed   int64 `json:"completed"`
	Truncated   int64 `json:"truncated"`
	OtherLength int64 `json:"other_length"`
	// TotalOutputTokens and TotalInputTokens are the completed requests'.
	TotalOutputTokens int64 `json:"total_output_tokens"`
	TotalInputTokens  int64 `json:"total_input_tokens"`
	// RequestThroughput is completed requests per second, OutputThroughput
	// their output tokens per second.
	RequestThroughput float64 `json:"request_throughput"`
	OutputThroughput  float64 `json:"output_throughput"`
	// TTFT (from the intended send), TTFTFromSend, TPOT, ITL (per token),
	// E2E (from the intended send) and E2EFromSend, as LLM defines them.
	TTFT         TimeDist `json:"ttft"`
	TTFTFromSend TimeDist `json:"ttft_from_send"`
	TPOT         TimeDist `json:"tpot"`
	ITL          TimeDist `json:"itl"`
	E2E          TimeDist `json:"e2e"`
	E2EFromSend  TimeDist `json:"e2e_from_send"`
	// Goodput is the completed requests that met every objective.
	Goodput Goodput `json:"goodput"`
	// Histograms are the stage's encoded HdrHistograms, for exact merges.
	Histograms LLMHistograms `json:"histograms"`
}
