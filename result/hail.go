package result

import "time"

// HailSection is the JSON report's "hail" object: what hail measures
// beyond oha's keys.
type HailSection struct {
	// Version is the hail version that ran.
	Version string `json:"version"`
	// Engine is the engine that ran ("net", "uring", "h2", "h3") and
	// EngineReason why it was chosen.
	Engine       string `json:"engine"`
	EngineReason string `json:"engine_reason"`
	// Model is "closed" (each connection sends its next request when the
	// previous one ends) or "open" (requests at fixed intended times: a
	// Rate, rate stages or bursts).
	Model string `json:"model"`
	// Start is the wall-clock time the run started, for aligning shards
	// (the JSON's start_unix_nano: Unix nanoseconds, 0 for the zero
	// Time).
	Start time.Time `json:"start_unix_nano"`
	// Interrupted is set when the run was ended early: the context was
	// cancelled, or the command got Ctrl-C.
	Interrupted bool `json:"interrupted"`
	// Counts are the exact totals the summaries derive from.
	Counts Counts `json:"counts"`
	// Histograms are the run's HdrHistograms, for exact merges.
	Histograms Histograms `json:"histograms"`
	// AllSent is the latency of every sent request, failures included at
	// their elapsed time (what thresholds judge).
	AllSent AllSent `json:"all_sent"`
	// Rates are the run's rates.
	Rates Rates `json:"rates"`
	// Drain is what ended after the run stopped sending, when it waited
	// for requests in flight (hail.Plan.WaitOngoing); nil otherwise.
	Drain *Drain `json:"drain,omitempty"`
	// Lag is SendDelay.Own under its earlier name (schedule_lag).
	Lag LagStats `json:"schedule_lag"`
	// SendDelay is how late requests were sent against their intended
	// times (open model), split into hail's own lateness and the wait for
	// a free connection.
	SendDelay SendDelay `json:"send_delay"`
	// UnsentReason says why requests were left unsent: "deadline",
	// "interrupt", "threshold" or "data" (a scenario's unique feed ran
	// out); "" when none were.
	UnsentReason string `json:"unsent_reason,omitempty"`
	// Generator is hail's own resource use.
	Generator Generator `json:"generator"`
	// Verdict says who limited the test: the target, hail, or neither.
	Verdict Verdict `json:"verdict"`
	// Hints are one line of advice per error kind with a known fix.
	Hints []string `json:"hints"`
	// Series has one entry per second of the run.
	Series []Second `json:"series"`
	// Config is the run's configuration as the report records it
	// (secrets redacted).
	Config map[string]any `json:"config"`
	// Protocol is the HTTP version spoken: "HTTP/1.1", "HTTP/1.0", "h2",
	// "h2c" or "h3"; ALPN what TLS negotiated ("" without).
	Protocol string `json:"protocol,omitempty"`
	ALPN     string `json:"alpn,omitempty"`
	// Transport is how connections travelled: "tcp", "tls", "unix",
	// "vsock", "vsock-uds", "proxy" or "quic".
	Transport string `json:"transport,omitempty"`
	// TLS counts the run's TLS handshakes (nil without TLS).
	TLS *TLSCounts `json:"tls,omitempty"`
	// Steps are a scenario's per-step results (nil for a single request).
	Steps []StepResult `json:"steps,omitempty"`
	// Origins are the per-server results of a scenario whose steps went
	// to several (nil otherwise).
	Origins []OriginResult `json:"origins,omitempty"`
	// Stages are the per-stage results of a run with rate or connection
	// stages (nil without stages).
	Stages []StageResult `json:"stages,omitempty"`
	// Thresholds are the run's pass/fail checks, each with what it
	// measured.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// StoppedBy says why the run stopped early: a failed threshold with
	// AbortOnFail ("" otherwise).
	StoppedBy string `json:"stopped_by,omitempty"`
	// Scenario names the scenario and the state of its pools and feeds at
	// the end (nil for a run without one).
	Scenario *ScenarioInfo `json:"scenario,omitempty"`
	// Setup and Teardown are a scenario's steps run once before and after
	// the load, kept apart from its numbers.
	Setup    *Phase `json:"setup,omitempty"`
	Teardown *Phase `json:"teardown,omitempty"`
	// Shard says which part of a distributed run this is (hail --shard).
	Shard *Shard `json:"shard,omitempty"`
	// Merged describes a result hail merge made from several.
	Merged *Merged `json:"merged,omitempty"`
	// Target is the target process's resource use, when hail knew it
	// (WithTargetPID).
	Target *TargetUse `json:"target,omitempty"`
	// GRPC counts the run's gRPC calls and messages (nil without one).
	GRPC *GRPCStats `json:"grpc,omitempty"`
	// Stream describes the run's streaming responses (server-sent events;
	// nil when there were none), LLM the token streams of an LLM load
	// (hail.Plan.LLM, hail llm).
	Stream *Stream `json:"stream,omitempty"`
	LLM    *LLM    `json:"llm,omitempty"`
}
