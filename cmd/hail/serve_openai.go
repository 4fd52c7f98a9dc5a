package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/llmserve"
	"github.com/hail-loadgen/hail/internal/serve"
)

// openaiHelp is the --openai part of hail serve --help.
const openaiHelp = `
With --openai it serves a mock OpenAI-compatible inference server at --addr instead
(default 127.0.0.1:8000, vLLM's port; HTTP/1.1 and h2c on one port; docs/llm.md):

  POST /v1/completions, /v1/chat/completions   streaming (SSE) or not
  GET /v1/models, /health, /stats
  --slots 256                  requests generating at once; the rest queue
  --prefill-per-token 100us    time to first token = queue wait + this × prompt tokens
  --prefix-cache 65536         cache the prompts' 16-token blocks: a cached prefix is not prefilled
  --itl 20ms                   time between tokens: 20ms, uniform:10ms,30ms,
                               normal:20ms,5ms, lognormal:20ms,10ms
  --fault 429:5 --fault error:1 --fault stall:1:2s --fault drop:1 --fault 503:2:3s
  --request-log FILE           one CSV line per request (kernel arrival time,
                               first token, tokens sent)`

// openaiFlags are hail serve's --openai settings.
type openaiFlags struct {
	on         bool
	model      string
	slots      int
	prefill    time.Duration
	prefix     int
	itl        string
	stagger    bool
	perChunk   int
	tick       time.Duration
	usage      bool
	defaultMax int
	eos        float64
	faults     []string
	logPath    string
	sendTime   bool
	seed       uint64
}

// addOpenAIFlags registers the --openai flags on hail serve.
func addOpenAIFlags(fs *pflag.FlagSet) *openaiFlags {
	o := &openaiFlags{}
	fs.BoolVar(&o.on, "openai", false, "serve a mock OpenAI-compatible inference server at --addr (default 127.0.0.1:8000) instead of the built-in target")
	fs.StringVar(&o.model, "model", llmserve.DefaultModel, "--openai: the model name /v1/models lists (requests naming another get theirs back)")
	fs.IntVar(&o.slots, "slots", llmserve.DefaultSlots, "--openai: batch slots (requests generating at once); further requests queue")
	fs.DurationVar(&o.prefill, "prefill-per-token", 100*time.Microsecond, "--openai: prefill time per prompt token (prompt tokens = whitespace-separated pieces)")
	fs.IntVar(&o.prefix, "prefix-cache", 0, "--openai: a prefix cache of this many prompt tokens (16-token blocks, least recently used evicted): a prompt's cached leading blocks are not prefilled (0: none)")
	fs.StringVar(&o.itl, "itl", "20ms", "--openai: time between output tokens: 20ms, uniform:MIN,MAX, normal:MEAN,SD or lognormal:MEAN,SD")
	fs.BoolVar(&o.stagger, "stagger", true, "--openai: delay each first token by a uniform part of one mean ITL, so that streams do not tick together (on; --stagger=false: off)")
	fs.DurationVar(&o.tick, "tick", 0, "--openai: the scheduler wakes at most once per tick; chunks due in between go out together, up to a tick late (0: ITL's mean ÷ 25, at most 2ms)")
	fs.IntVar(&o.perChunk, "tokens-per-chunk", 1, "--openai: tokens per streamed chunk after the first")
	fs.BoolVar(&o.usage, "usage", true, "--openai: report token usage when asked (on; --usage=false: never, whatever the request asks)")
	fs.IntVar(&o.defaultMax, "default-max-tokens", llmserve.DefaultMaxTokens, "--openai: output tokens of a request without max_tokens")
	fs.Float64Var(&o.eos, "eos", 0, "--openai: percent chance per token after min_tokens that the output ends there, unless the request sets ignore_eos")
	fs.StringArrayVar(&o.faults, "fault", nil, "--openai: fault mix, repeatable: 429:PCT[:RETRY], 503:PCT[:RETRY], error:PCT, stall:PCT:DUR, drop:PCT")
	fs.StringVar(&o.logPath, "request-log", "", "--openai: write one CSV line per request to this file (docs/llm.md has the columns)")
	fs.BoolVar(&o.sendTime, "send-time", false, `--openai: add "hail_sent_ns" (when the chunk was written) to every streamed chunk`)
	fs.Uint64Var(&o.seed, "seed", 0, "--openai: seed of the draws (0: random)")
	return o
}

// openaiOnly are the flags that mean nothing without --openai.
var openaiOnly = []string{"model", "slots", "prefill-per-token", "prefix-cache", "itl", "stagger", "tick", "tokens-per-chunk", "usage",
	"default-max-tokens", "eos", "fault", "request-log", "send-time", "seed"}

// checkOpenAIFlags rejects --openai settings given without --openai.
func checkOpenAIFlags(cmd *cobra.Command, o *openaiFlags) error {
	if o.on {
		return nil
	}
	for _, name := range openaiOnly {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s applies to the mock inference server: add --openai", name)
		}
	}
	return nil
}

// config turns the flags into the mock's configuration.
func (o *openaiFlags) config(addr string) (llmserve.Config, error) {
	cfg := llmserve.Config{
		Addr: addr, Model: o.model, Slots: o.slots, PrefillPerToken: o.prefill, PrefixCacheTokens: o.prefix, Stagger: o.stagger,
		Tick: o.tick, TokensPerChunk: o.perChunk, NoUsage: !o.usage, DefaultMaxTokens: o.defaultMax, EOSPercent: o.eos,
		SendTime: o.sendTime, Seed: o.seed,
	}
	var err error
	if cfg.ITL, err = llmserve.ParseDist(o.itl); err != nil {
		return cfg, fmt.Errorf("--itl %s", err)
	}
	for _, s := range o.faults {
		f, err := llmserve.ParseFault(s)
		if err != nil {
			return cfg, fmt.Errorf("--fault %s", err)
		}
		cfg.Faults = append(cfg.Faults, f)
	}
	switch {
	case o.slots < 1:
		return cfg, fmt.Errorf("--slots %d: at least 1", o.slots)
	case o.tick < 0:
		return cfg, fmt.Errorf("--tick %v: 0 (automatic) or more", o.tick)
	case o.perChunk < 1:
		return cfg, fmt.Errorf("--tokens-per-chunk %d: at least 1", o.perChunk)
	case o.defaultMax < 1:
		return cfg, fmt.Errorf("--default-max-tokens %d: at least 1", o.defaultMax)
	case o.eos < 0 || o.eos > 100:
		return cfg, fmt.Errorf("--eos %g: a percentage between 0 and 100", o.eos)
	}
	return cfg, nil
}

// runOpenAI serves the mock inference server (and gRPC and HTTP/3 when
// asked) until SIGINT or SIGTERM.
func runOpenAI(o *openaiFlags, addr, grpcAddr, h3addr string) error {
	cfg, err := o.config(addr)
	if err != nil {
		return err
	}
	var logFile *os.File
	if o.logPath != "" {
		if logFile, err = os.Create(o.logPath); err != nil {
			return fmt.Errorf("--request-log: %v", err)
		}
		cfg.Log = logFile
	}
	s, err := llmserve.New(cfg)
	if err != nil {
		if logFile != nil {
			logFile.Close()
			os.Remove(o.logPath)
		}
		return fmt.Errorf("--openai: %v", err)
	}
	a, err := s.Listen()
	if err != nil {
		s.Close()
		if logFile != nil {
			logFile.Close()
			os.Remove(o.logPath)
		}
		return fmt.Errorf("--addr %s: %v", addr, err)
	}
	if !serve.IsLoopback(addr) {
		fmt.Fprintf(os.Stderr, "hail: warning: --addr %s is reachable from other machines; use 127.0.0.1 unless you mean it\n", addr)
	}
	fmt.Fprintf(os.Stderr, "hail serve: mock OpenAI server on %s (model %s, %d slots, itl %s, prefill %v/token)\n", a, cfg.Model, cfg.Slots, cfg.ITL, cfg.PrefillPerToken)
	serr := serveUntilSignal(s, grpcAddr, h3addr)
	cerr := s.Close()
	if logFile != nil {
		if err := logFile.Close(); cerr == nil {
			cerr = err
		}
	}
	if serr != nil {
		return serr
	}
	if cerr != nil {
		return fmt.Errorf("--request-log %s: %v", o.logPath, cerr)
	}
	return nil
}
