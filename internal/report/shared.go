package report

import "github.com/hail-loadgen/hail/result"

// The parts of a Result that package result declares once for this
// package and package hail (each documented there); their Go form is the
// JSON's (counts, strings, rates, nanoseconds as time.Duration), or their
// times are time.Duration with a unit tag for the JSON's float seconds or
// microseconds (written so by WriteJSON, wire.go).
type (
	// Hail is the "hail" section: what hail reports beyond oha's keys.
	Hail = result.HailSection
	// Step is one step of a scenario; Phase a scenario's setup or
	// teardown.
	Step  = result.StepResult
	Phase = result.Phase
	// Counts are a run's exact totals.
	Counts = result.Counts
	// Histograms are a run's (or a step's) encoded HdrHistograms.
	Histograms = result.Histograms
	// Rates are a run's rates, each over summary.total.
	Rates = result.Rates
	// RPS summarises requests per second over the run's whole seconds.
	RPS = result.RPS
	// RatePercentiles are percentiles of a rate, in requests per second.
	RatePercentiles = result.RatePercentiles
	// StepCounts are a step's (a stage's) exact totals.
	StepCounts = result.StepCounts
	// OriginCounts are an origin's exact totals.
	OriginCounts = result.OriginCounts
	// Verdict says who limited the test.
	Verdict = result.Verdict
	// TLSCounts are a run's TLS handshakes.
	TLSCounts = result.TLSCounts
	// GRPC describes a run's gRPC calls.
	GRPC = result.GRPCStats
	// Shard says which part of a distributed run a Result is.
	Shard = result.Shard
	// Threshold is one pass/fail check of a run.
	Threshold = result.ThresholdResult
	// ScenarioInfo describes the scenario a Result came from.
	ScenarioInfo = result.ScenarioInfo
	// FeedInfo is a data feed at the end of the run.
	FeedInfo = result.FeedInfo
	// PoolInfo is a pool of captured values at the end of the run.
	PoolInfo = result.PoolInfo
	// StageLoad is what the connections did in a stage.
	StageLoad = result.StageLoad
	// StreamHistograms are hail.stream's encoded HdrHistograms.
	StreamHistograms = result.StreamHistograms
	// LLMHistograms are hail.llm's encoded HdrHistograms.
	LLMHistograms = result.LLMHistograms
	// Goodput is an LLM load's completed requests that met every objective.
	Goodput = result.Goodput
	// Drain is what ended during a -w drain.
	Drain = result.Drain
	// Generator is hail's own resource use over the run.
	Generator = result.Generator
	// Target is the target's resource use over the run.
	Target = result.TargetUse
	// TargetProcess is one process of the target over the run.
	TargetProcess = result.TargetProcess
	// Merged describes a result hail merge made from several.
	Merged = result.Merged
	// ShardOutcome is what a merge got from one shard of a run.
	ShardOutcome = result.ShardOutcome
	// SendDelay splits the open model's send delay.
	SendDelay = result.SendDelay
	// LagStats describe a delay over its samples.
	LagStats = result.LagStats
	// Stream is hail.stream: the run's streaming responses.
	Stream = result.Stream
	// LLM is hail.llm: what the token streams of an LLM load measured.
	LLM = result.LLM
	// SLO are goodput's objectives.
	SLO = result.SLO
	// VLLM are the keys of a vLLM bench serve result file.
	VLLM = result.VLLM
	// TimeDist summarises a histogram of times.
	TimeDist = result.TimeDist
	// Dist summarises a histogram of counts or rates.
	Dist = result.Dist
	// StepLatency summarises a step's (a stage's, an origin's) response latency.
	StepLatency = result.StepLatency
	// AllSent is the latency of every sent request, failures at their elapsed time.
	AllSent = result.AllSent
	// Percentiles of a latency.
	Percentiles = result.Percentiles
	// Summary is oha's summary block.
	Summary = result.Summary
	// Metrics is oha's CI-friendly block.
	Metrics = result.Metrics
	// LatencyMetrics are Metrics' latency statistics.
	LatencyMetrics = result.LatencyMetrics
	// Details are oha's connection-setup and first-byte times.
	Details = result.Details
	// MinAvgMax are the mean and extremes of a time.
	MinAvgMax = result.MinAvgMax
	// Stage is one stage of a ramp.
	Stage = result.StageResult
	// StageWarmup is the part of a stage left out of its figures.
	StageWarmup = result.StageWarmup
	// StageProcess is the target's use in a stage.
	StageProcess = result.StageProcess
	// Origin is one server of a run that sent to several.
	Origin = result.OriginResult
	// StageLLM is a stage's token streams.
	StageLLM = result.StageLLM
)

// The bottleneck kinds of a Verdict.
const (
	// BottleneckNone: nothing but the intended load limited the test.
	BottleneckNone = result.BottleneckNone
	// BottleneckTarget: the target was the limit (every connection busy,
	// or it stalled), or it could not be reached at all.
	BottleneckTarget = result.BottleneckTarget
	// BottleneckGenerator: hail's own CPU was the limit.
	BottleneckGenerator = result.BottleneckGenerator
	// BottleneckOthers: other processes (or the hypervisor) took hail's CPU.
	BottleneckOthers = result.BottleneckOthers
	// BottleneckWakeup: an otherwise idle machine woke hail late.
	BottleneckWakeup = result.BottleneckWakeup
)
