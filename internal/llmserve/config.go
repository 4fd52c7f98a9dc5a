package llmserve

import (
	"fmt"
	"io"
	"time"
)

// Defaults used when the corresponding Config field is zero.
const (
	// DefaultAddr is the default listen address (loopback, vLLM's port).
	DefaultAddr = "127.0.0.1:8000"
	// DefaultModel is the model name the mock reports when a request names none.
	DefaultModel = "mock"
	// DefaultSlots is the default number of batch slots (vLLM's max_num_seqs).
	DefaultSlots = 256
	// DefaultMaxTokens is the output length of a request without max_tokens
	// (OpenAI's default for /v1/completions).
	DefaultMaxTokens = 16
	// DefaultMaxBodyBytes caps a request body.
	DefaultMaxBodyBytes = 32 << 20
	// maxOutputTokens caps max_tokens.
	maxOutputTokens = 1 << 20
	// maxTokensPerChunk caps TokensPerChunk.
	maxTokensPerChunk = 1024
	// maxSlots caps Slots.
	maxSlots = 1 << 20
)

// Config configures a Server. The zero value is usable: tokens back to back
// (no prefill cost, no time between tokens), DefaultSlots slots, one token
// per chunk, usage on, no faults, no log.
type Config struct {
	// Addr is the listen address, default DefaultAddr.
	Addr string

	// Model is the model name listed by /v1/models and reported in
	// responses to requests that name none (requests naming a model get it
	// back). Default DefaultModel.
	Model string

	// Slots is the number of requests generating at once (batch slots);
	// further requests wait in a FIFO queue. Default DefaultSlots.
	Slots int

	// PrefillPerToken is the prefill cost per prompt token: a request's
	// first token comes PrefillPerToken × prompt tokens after it takes a
	// slot.
	PrefillPerToken time.Duration

	// PrefixCacheTokens, if above zero, gives the mock a prefix cache of
	// that many prompt tokens: a prompt's leading blocks of BlockTokens
	// tokens that an earlier prompt had are not prefilled again (their
	// PrefillPerToken is saved), as vLLM's and SGLang's prefix caching
	// does; the least recently used blocks are evicted.
	PrefixCacheTokens int

	// ITL is the time between two output tokens, drawn per token.
	ITL Dist

	// Stagger delays each request's first token by a uniform draw in
	// [0, mean ITL), as a request joining a running batch waits for the
	// decode step in progress; streams that arrive together then do not
	// all send their tokens at the same instants.
	Stagger bool

	// Tick is the scheduler's granularity: it wakes at most once per Tick
	// and sends everything due by then, so a chunk goes out up to Tick
	// late (its timeline stays absolute: lateness does not add up). Fewer
	// wake-ups is what keeps the mock's CPU per chunk low. Zero picks
	// DefaultTick(ITL); a negative Tick wakes for every chunk.
	Tick time.Duration

	// TokensPerChunk is how many tokens each streamed chunk after the first
	// carries (the first carries one), default 1.
	TokensPerChunk int

	// NoUsage leaves out token usage: no usage object in non-streaming
	// responses and no usage chunk in streams, whatever the request asks.
	NoUsage bool

	// DefaultMaxTokens is the output length of a request that sets no
	// max_tokens (or max_completion_tokens), default DefaultMaxTokens.
	DefaultMaxTokens int

	// EOSPercent is the chance, per token after min_tokens, that the "model"
	// ends its output there (finish_reason "stop") in requests that do not
	// set ignore_eos. 0: outputs always run to max_tokens.
	EOSPercent float64

	// Faults is the fault mix: each request gets at most one fault, the
	// entries taking consecutive shares of the requests (the percentages
	// add up to at most 100).
	Faults []Fault

	// Log, if set, receives one CSV line per request (see the package
	// documentation); Close flushes it.
	Log io.Writer

	// SendTime adds "hail_sent_ns", the Unix time in nanoseconds at which
	// the chunk was written, to every streamed chunk's JSON, for clients
	// that measure their own read lag.
	SendTime bool

	// MaxBodyBytes caps a request body, default DefaultMaxBodyBytes.
	MaxBodyBytes int

	// Seed seeds the draws (inter-token times, stagger, faults, EOS);
	// request i's draws depend only on Seed and i. Zero picks a random seed.
	Seed uint64
}

// maxTick caps the automatic tick.
const maxTick = 2 * time.Millisecond

// DefaultTick is the tick used when Config.Tick is zero: a 25th of the mean
// inter-token time (4%), at most 2 ms.
func DefaultTick(itl Dist) time.Duration { return min(itl.Mean()/25, maxTick) }

// check validates the configuration.
func (c *Config) check() error {
	if c.Slots < 0 || c.Slots > maxSlots {
		return fmt.Errorf("slots %d: between 1 and %d", c.Slots, maxSlots)
	}
	if c.TokensPerChunk < 0 || c.TokensPerChunk > maxTokensPerChunk {
		return fmt.Errorf("tokens per chunk %d: between 1 and %d", c.TokensPerChunk, maxTokensPerChunk)
	}
	if c.DefaultMaxTokens < 0 || c.DefaultMaxTokens > maxOutputTokens {
		return fmt.Errorf("default max tokens %d: between 1 and %d", c.DefaultMaxTokens, maxOutputTokens)
	}
	if c.PrefillPerToken < 0 || c.PrefillPerToken > time.Second {
		return fmt.Errorf("prefill per token %v: between 0 and 1s", c.PrefillPerToken)
	}
	if c.EOSPercent < 0 || c.EOSPercent > 100 || c.EOSPercent != c.EOSPercent {
		return fmt.Errorf("EOS percent %v: between 0 and 100", c.EOSPercent)
	}
	var sum float64
	for _, f := range c.Faults {
		if f.Kind == faultNone || f.Kind > FaultDrop || f.Percent <= 0 || f.Percent > 100 {
			return fmt.Errorf("fault %v: not a fault (KIND:PERCENT[:DURATION])", f)
		}
		sum += f.Percent
	}
	if sum > 100+1e-9 {
		return fmt.Errorf("the fault percentages add up to %g%%, more than 100%%", sum)
	}
	if c.Tick > maxDuration {
		return fmt.Errorf("tick %v: at most %v", c.Tick, maxDuration)
	}
	if c.PrefixCacheTokens < 0 || c.PrefixCacheTokens > 1<<30 {
		return fmt.Errorf("prefix cache %d tokens: between 0 (none) and %d", c.PrefixCacheTokens, 1<<30)
	}
	if c.MaxBodyBytes < 0 {
		return fmt.Errorf("max body bytes %d: must be positive", c.MaxBodyBytes)
	}
	return nil
}

// withDefaults returns c with its zero fields replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Slots == 0 {
		c.Slots = DefaultSlots
	}
	if c.TokensPerChunk == 0 {
		c.TokensPerChunk = 1
	}
	if c.DefaultMaxTokens == 0 {
		c.DefaultMaxTokens = DefaultMaxTokens
	}
	switch {
	case c.Tick == 0:
		c.Tick = DefaultTick(c.ITL)
	case c.Tick < 0:
		c.Tick = 0
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return c
}
