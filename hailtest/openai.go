package hailtest

import (
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/llmserve"
)

// OpenAIServer is a running mock inference server, hail serve --openai:
// /v1/completions and /v1/chat/completions, streamed or not, over
// HTTP/1.1 and h2c, with batch slots and a queue, a prefill time per
// prompt token and a time between tokens — a server whose timing is known
// exactly, to point a Plan.LLM load at (docs/llm.md).
type OpenAIServer struct {
	// URL is its base URL, http://127.0.0.1:PORT (the APIs are under
	// /v1).
	URL string
	s   *llmserve.Server
}

// OpenAIConfig is how the mock behaves; the zero value streams tokens
// back to back from 256 slots, one token per chunk, with usage.
type OpenAIConfig struct {
	// Model is the model /v1/models lists ("" is "mock").
	Model string
	// Slots is how many requests generate at once; the rest wait first in,
	// first out (0 is 256).
	Slots int
	// PrefillPerToken is the time to the first token per prompt token,
	// after a request takes a slot.
	PrefillPerToken time.Duration
	// ITL is the time between two output tokens.
	ITL time.Duration
	// TokensPerChunk is the tokens each streamed chunk after the first
	// carries (0 is 1).
	TokensPerChunk int
	// NoUsage leaves token usage out of every response.
	NoUsage bool
}

// OpenAIStats are the mock's own counts.
type OpenAIStats struct {
	// Requests counts generation requests received; Completed those whose
	// every token was sent; ClientGone those whose client went away first.
	Requests, Completed, ClientGone uint64
	// Tokens are the output tokens sent, Chunks the streamed chunks that
	// carried them.
	Tokens, Chunks uint64
	// Running requests hold a slot now; Queued wait for one.
	Running, Queued int64
}

// NewOpenAIServer starts the mock until tb ends.
func NewOpenAIServer(tb testing.TB, cfg OpenAIConfig) *OpenAIServer {
	tb.Helper()
	s, err := StartOpenAI(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// StartOpenAI starts the mock on a free loopback port; Close stops it.
func StartOpenAI(cfg OpenAIConfig) (*OpenAIServer, error) {
	itl, err := llmserve.ParseDist(cfg.ITL.String())
	if err != nil {
		return nil, err
	}
	s, err := llmserve.New(llmserve.Config{Addr: "127.0.0.1:0", Model: cfg.Model, Slots: cfg.Slots, PrefillPerToken: cfg.PrefillPerToken,
		ITL: itl, TokensPerChunk: cfg.TokensPerChunk, NoUsage: cfg.NoUsage})
	if err != nil {
		return nil, err
	}
	addr, err := s.Listen()
	if err != nil {
		s.Close()
		return nil, err
	}
	go s.Serve()
	return &OpenAIServer{URL: "http://" + addr.String(), s: s}, nil
}

// Close stops the mock and closes its connections.
func (s *OpenAIServer) Close() error { return s.s.Close() }

// Stats returns the mock's counts so far.
func (s *OpenAIServer) Stats() OpenAIStats {
	st := s.s.Stats()
	return OpenAIStats{Requests: st.Requests, Completed: st.Completed, ClientGone: st.ClientGone, Tokens: st.Tokens, Chunks: st.Chunks,
		Running: st.Running, Queued: st.Queued}
}
