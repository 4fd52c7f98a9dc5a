package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
)

// groupLLM is the help group of hail llm's own flags.
const groupLLM = "LLM"

// llmFlags are hail llm's flags: its own (what to ask the model), and the
// load command's for load, streams, transport, output and results.
type llmFlags struct {
	api          string
	modelName    string
	inputTokens  string
	outputTokens string
	exact        bool
	extraBody    string
	slo          string
	arrivals     string
	seed         uint64
	dataset      string
	datasetOrder string
	traceSpeedup float64
	tokenizer    string
	stages       string
	multiTurn    bool
	turns        int
	maxContext   int
	think        time.Duration
	sweep        sweepFlags
	headers      []string
	timeout      time.Duration
	connTimeout  time.Duration
	model        modelFlags
	strm         streamFlags
	tr           transportFlags
	outputFlags
	results resultFlags
}

// llmFormats are hail llm's --output-format values: the load command's and
// vLLM's result file.
var llmFormats = append(append([]string(nil), loadFormats...), "vllm")

const llmFormatHelp = "text (the LLM numbers first, then hail's report), json (oha's keys + hail, with hail.llm), " +
	"vllm (a vLLM bench serve result file), csv (one row per request), csv-seconds, markdown, html or quiet"

func newLLMCmd() *cobra.Command {
	f := &llmFlags{inputTokens: "1024", outputTokens: "128", exact: true, arrivals: "poisson", seed: 1, outputFlags: defaultOutputFlags(),
		sweep: sweepFlags{steps: 5, duration: 30 * time.Second, warmup: 5 * time.Second, precision: 0.02}}
	cmd := &cobra.Command{
		Use:   "llm [flags] URL",
		Short: "load an OpenAI-compatible LLM server: TTFT from the intended time, TPOT, ITL, goodput",
		Long: `hail llm sends streaming completions to an OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp,
an inference gateway) and measures each stream as it arrives: time to first token from the
request's intended send time (the queue included: coordinated-omission correct) and from its
actual send, time per output token, inter-token latency per token, end-to-end latency,
tokens/s, and goodput against --slo. The URL's path names the API: .../v1/completions or
.../v1/chat/completions (a URL without one uses --api, chat by default).

Every request asks for exactly its output length (max_tokens, with min_tokens and ignore_eos
unless --exact=false) with a prompt of its input length, both fixed or drawn from a
distribution; tokens are counted from the server's usage (asked for with stream_options), or
one per content chunk when it sends none. -q is the open model, with Poisson arrivals by
default; -c alone the closed one. See docs/llm.md for every metric and how it compares with
vLLM's bench serve, guidellm and inference-perf.`,
		Example: `  hail llm -q 4 -z 60s --model meta-llama/Llama-3.1-8B-Instruct http://127.0.0.1:8000/v1/chat/completions
  hail llm -c 32 -n 1000 --input-tokens 512 --output-tokens 64-256 http://127.0.0.1:8000/v1/completions
  hail llm -q 10 -z 5m --slo ttft=500ms,tpot=50ms --output-format vllm -o result.json https://gateway/v1/chat/completions
  hail llm -q 5 -z 10m --dataset sharegpt:ShareGPT_V3_unfiltered_cleaned_split.json http://127.0.0.1:8000/v1/chat/completions
  hail llm --dataset azure:AzureLLMInferenceTrace_conv.csv --trace-speedup 4 -z 10m http://127.0.0.1:8000/v1/completions`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLLM(cmd, f, args)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) { writeHelp(c.OutOrStdout(), c) })
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.Var(choiceValue{&f.api, []string{"completions", "chat"}}, "api", "the API when the URL's path does not name one: completions or chat (default chat)")
	fl.StringVar(&f.modelName, "model", "", "the model to ask for (default: the first the server's /v1/models lists)")
	fl.StringVar(&f.inputTokens, "input-tokens", f.inputTokens, "prompt length in tokens: N, LOW-HIGH (uniform), N:WEIGHT,M:WEIGHT or normal:MEAN,SD")
	fl.StringVar(&f.outputTokens, "output-tokens", f.outputTokens, "output length in tokens, asked for exactly: N, LOW-HIGH, N:WEIGHT,M:WEIGHT or normal:MEAN,SD")
	fl.BoolVar(&f.exact, "exact", f.exact, "ask for exactly the output length: min_tokens and ignore_eos beside max_tokens (--exact=false: max_tokens only)")
	fl.StringVar(&f.extraBody, "extra-body", "", `JSON object whose members every request also carries, e.g. '{"temperature":0}'`)
	fl.StringVar(&f.slo, "slo", "", "goodput's objectives: ttft=D,tpot=D,e2e=D (a plain number is milliseconds); TTFT and E2E count from the intended send")
	fl.StringVar(&f.arrivals, "arrivals", f.arrivals, "with -q: poisson, constant (evenly spaced), or gamma:B (vLLM's burstiness B: below 1 burstier)")
	fl.StringVar(&f.stages, "stages", "", "rate steps instead of -q: DURATION:RATE[:WARMUP],… e.g. 30s:5,60s:10:10s (each stage's own results leave its warm-up out)")
	fl.StringVar(&f.dataset, "dataset", "random", "where prompts come from: random (made up, --input-tokens long), shared-prefix:groups=G,prefix=P, jsonl:FILE, sharegpt:FILE, or azure:FILE (an Azure LLM inference trace: lengths and arrival times)")
	fl.StringVar(&f.datasetOrder, "dataset-order", "shuffle", "how a jsonl or sharegpt file's records are taken: shuffle (each once per pass, seeded), sequential, or random (with replacement)")
	fl.Float64Var(&f.traceSpeedup, "trace-speedup", 1, "replay an azure trace this many times faster (0.5: twice as slow)")
	fl.BoolVar(&f.multiTurn, "multi-turn", false, "every connection a user holding conversations (chat API, closed model): turn n+1 when turn n's reply ends, with the history so far")
	fl.IntVar(&f.turns, "turns", 0, "--multi-turn: user turns of a made-up conversation (default 4; a sharegpt conversation has its own)")
	fl.IntVar(&f.maxContext, "max-context-tokens", 0, "--multi-turn: drop a conversation's oldest turns beyond this many tokens (0: no bound)")
	fl.Var(zeroDurationValue{&f.think}, "think-time", "--multi-turn: a user's pause between a reply's end and its next turn")
	fl.StringVar(&f.tokenizer, "tokenizer", "", "a Hugging Face tokenizer.json to count tokens with (default: whitespace-separated words)")
	fl.Uint64Var(&f.seed, "seed", f.seed, "seed of every draw: arrival times, lengths, prompt words, the dataset's order and groups")
	fl.BoolVar(&f.sweep.on, "sweep", false, "find the highest rate at which ≥ 99% of requests meet every --slo: a closed run (-c) for the ceiling, open-model steps below it, a bisection; prints the table")
	fl.IntVar(&f.sweep.steps, "sweep-steps", f.sweep.steps, "--sweep: open-model rates tried below the ceiling before the bisection (1/N, 2/N, … of it)")
	fl.Var(durationValue{&f.sweep.duration, "a sweep's step must last: give --sweep-step-duration a positive duration, e.g. 30s"}, "sweep-step-duration", "--sweep: how long each step sends (default 30s)")
	fl.Var(zeroDurationValue{&f.sweep.warmup}, "sweep-warmup", "--sweep: the first part of each step, not measured (default 5s)")
	fl.Float64Var(&f.sweep.precision, "sweep-precision", f.sweep.precision, "--sweep: the bisection stops when the rates that pass and fail are within this fraction")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "extra header 'Name: value' (repeatable); Authorization: Bearer $OPENAI_API_KEY is sent when set and no -H gives one")
	fl.VarP(zeroDurationValue{&f.timeout}, "timeout", "t", "each request's whole time, stream included (default: none; 0 for none; --idle-timeout bounds a silent stream)")
	fl.Var(durationValue{&f.connTimeout, zeroConnectTimeout}, "connect-timeout", "timeout for DNS + connect + TLS handshake")
	setGroup(fl, groupLLM, "api", "model", "input-tokens", "output-tokens", "dataset", "dataset-order", "trace-speedup", "multi-turn", "turns", "max-context-tokens", "think-time", "tokenizer", "exact", "extra-body", "slo", "arrivals", "stages", "seed", "sweep", "sweep-steps", "sweep-step-duration", "sweep-warmup", "sweep-precision", "header", "timeout", "connect-timeout")
	addModelFlags(fl, &f.model)
	addStreamFlags(fl, &f.strm, false)
	addTransportFlags(fl, &f.tr)
	addOutputFlags(fl, &f.outputFlags, llmFormatHelp)
	fl.Lookup("output-format").Value = choiceValue{&f.format, llmFormats}
	addResultFlags(fl, &f.results)
	return cmd
}

func runLLM(cmd *cobra.Command, f *llmFlags, args []string) error {
	if err := checkSweep(cmd, f); err != nil {
		return err
	}
	l, err := prepareLLM(cmd, f, args)
	if err != nil {
		return err
	}
	defer l.Close()
	if f.sweep.on {
		return runSweep(cmd, f, l)
	}
	p := l.plan
	color, err := f.settle(&f.results, p)
	if err != nil {
		return err
	}
	announcePlan(cmd, p, true)
	out, err := openOutput(f.output, cmd.OutOrStdout())
	if err != nil {
		return err
	}
	defer out.Discard()
	results, err := prepareResults(&f.results, f.format, p, l.Workload, out, requestURLs{})
	if err != nil {
		return err
	}
	interrupt, stop, release := handleSignals(out)
	defer release()
	opts := run.Options{Interrupt: interrupt, SuccessBreakdown: f.successSplit, Config: l.config(), Workload: l.Workload}
	res, err := execute(p, &f.outputFlags, stop, out, results, opts, nil)
	if err != nil {
		return err
	}
	l.Describe(res)
	if err := writeReport(out, res, afterRun(f.format), report.TextOptions{Unit: f.unit, Color: color}); err != nil {
		return err
	}
	return out.Commit()
}
