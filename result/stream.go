package result

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
