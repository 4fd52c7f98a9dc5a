package hail

import "github.com/hail-loadgen/hail/result"

// The parts of a Result that package result declares once for package
// hail and internal/report (each documented there).
type (
	// HailSection is the JSON report's "hail" object: what hail measures
	// beyond oha's keys.
	HailSection = result.HailSection
	// Counts are a run's exact totals.
	Counts = result.Counts
	// Histograms are a run's (or a step's) encoded HdrHistograms.
	Histograms = result.Histograms
	// Rates are a run's rates.
	Rates = result.Rates
	// RPS summarises requests per second over the run's whole seconds.
	RPS = result.RPS
	// RatePercentiles are percentiles of a rate.
	RatePercentiles = result.RatePercentiles
	// StepCounts are a step's (a stage's) exact totals.
	StepCounts = result.StepCounts
	// OriginCounts are an origin's exact totals.
	OriginCounts = result.OriginCounts
	// Verdict says who limited the test, with the evidence.
	Verdict = result.Verdict
	// TLSCounts are a run's TLS handshakes.
	TLSCounts = result.TLSCounts
	// GRPCStats describe a run's gRPC calls.
	GRPCStats = result.GRPCStats
	// Shard says which part of a distributed run a Result is.
	Shard = result.Shard
	// ThresholdResult is one pass/fail check of a run.
	ThresholdResult = result.ThresholdResult
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
	// Goodput is an LLM load's completed requests that met every
	// objective.
	Goodput = result.Goodput
	// Drain is what ended during a drain (Plan.WaitOngoing).
	Drain = result.Drain
	// Generator is hail's own resource use over the run.
	Generator = result.Generator
	// TargetUse is the target's resource use over the run.
	TargetUse = result.TargetUse
	// TargetProcess is one process of the target over the run.
	TargetProcess = result.TargetProcess
	// Merged describes a Result that hail merge made from several.
	Merged = result.Merged
	// ShardOutcome is what a merge got from one shard of a run.
	ShardOutcome = result.ShardOutcome
	// Second is one second of a run's (or a step's) per-second series.
	Second = result.Second
	// SendDelay splits the open model's send delay.
	SendDelay = result.SendDelay
	// LagStats describe a delay over its samples.
	LagStats = result.LagStats
	// Stream is the report's hail.stream: the run's streaming responses.
	Stream = result.Stream
	// LLM is the report's hail.llm: what the token streams of an LLM
	// load measured.
	LLM = result.LLM
	// SLO are goodput's objectives (0: none).
	SLO = result.SLO
	// VLLM are the keys of a vLLM bench serve result file.
	VLLM = result.VLLM
	// TimeDist summarises a histogram of times.
	TimeDist = result.TimeDist
	// Dist summarises a histogram of counts (tokens) or rates.
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
	// StageResult is one stage of a ramp.
	StageResult = result.StageResult
	// StageWarmup is the part of a stage left out of its figures.
	StageWarmup = result.StageWarmup
	// StageProcess is the target's use in a stage.
	StageProcess = result.StageProcess
	// OriginResult is one server of a run that sent to several.
	OriginResult = result.OriginResult
	// StageLLM is a stage's token streams.
	StageLLM = result.StageLLM
)

// The bottleneck kinds of a Verdict.
const (
	// BottleneckNone: nothing limited the test; the target kept up.
	BottleneckNone = result.BottleneckNone
	// BottleneckTarget: the target limited the test.
	BottleneckTarget = result.BottleneckTarget
	// BottleneckGenerator: hail itself was too busy to send on time.
	BottleneckGenerator = result.BottleneckGenerator
	// BottleneckOthers: other processes took hail's CPUs (or the target's
	// own process, or the hypervisor: Verdict.TakenBy).
	BottleneckOthers = result.BottleneckOthers
	// BottleneckWakeup: the operating system woke hail late.
	BottleneckWakeup = result.BottleneckWakeup
)

// Who took hail's CPUs in an other-processes verdict (Verdict.TakenBy);
// "" is other processes.
const (
	// TakenByTarget: the target's own process.
	TakenByTarget = result.TakenByTarget
	// TakenByHypervisor: the hypervisor's steal (other guests on the
	// host).
	TakenByHypervisor = result.TakenByHypervisor
)
