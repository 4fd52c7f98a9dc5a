package result

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// StageLoad is what the connections did in a stage, from the per-second
// samples taken inside its measured part.
type StageLoad struct {
	// Samples is how many seconds were sampled.
	Samples int `json:"seconds"`
	// ConnsOpenMean and ConnsOpenMax are the connections open; InFlight
	// the requests in flight.
	ConnsOpenMean float64 `json:"conns_open_mean"`
	ConnsOpenMax  int64   `json:"conns_open_max"`
	InFlightMean  float64 `json:"in_flight_mean"`
	InFlightMax   int64   `json:"in_flight_max"`
}

// StageResult is one stage of a ramp (Plan.RateStages,
// Plan.ConnectionStages, a scenario's stages): the requests intended in it
// (by their intended send time in the open model, the time they were
// taken in the closed one) after its warmup, with their own counts, rates,
// latency and histograms. The stages and their warmups add up exactly to
// the run's counts and histograms.
type StageResult struct {
	// Stage is its number, from 1; Name its name ("" when it has none).
	Stage int    `json:"stage"`
	Name  string `json:"name,omitempty"`
	// Kind is "connections" (closed model) or "rate" (open model,
	// requests per second): what From and Target count.
	Kind string `json:"kind"`
	// From is the target at its start (the previous stage's), Target the
	// one at its end; Ramp is "linear" or "step".
	From   float64 `json:"from"`
	Target float64 `json:"target"`
	Ramp   string  `json:"ramp"`
	// Start and End are when it begins and ends, from the run's start
	// (the last stage kept ends at the run's planned length).
	Start time.Duration `json:"start" unit:"s"`
	End   time.Duration `json:"end" unit:"s"`
	// Measured is the time its figures cover: from the end of its warmup
	// to its end, or to when the run stopped sending (0: not reached).
	// Its rates are per second of it.
	Measured time.Duration `json:"seconds" unit:"s"`
	// Warmup is the stage's first part, left out of its figures (nil
	// when it has none).
	Warmup *StageWarmup `json:"warmup,omitempty"`
	// Counts are the stage's exact totals.
	Counts StepCounts `json:"counts"`
	// Rates are per second of Measured.
	Rates Rates `json:"rates"`
	// ErrorRate is Failed / (Requests − Aborted).
	ErrorRate float64 `json:"error_rate"`
	// Latency is of its responses, AllSent of every sent request (a
	// failure at its elapsed time: what a stage's thresholds judge).
	Latency StepLatency `json:"latency"`
	AllSent AllSent     `json:"all_sent"`
	// StatusCodeDistribution and ErrorDistribution are the stage's.
	StatusCodeDistribution map[string]int64 `json:"statusCodeDistribution"`
	ErrorDistribution      map[string]int64 `json:"errorDistribution"`
	// Histograms are the stage's HdrHistograms.
	Histograms Histograms `json:"histograms"`
	// Load is what the connections did in the stage (nil when no
	// per-second sample was taken inside it).
	Load *StageLoad `json:"load,omitempty"`
	// Process is the target's memory and CPU in the stage (nil when it
	// was not sampled: WithTargetPID, WithTargetCmd, WithTargetCgroup).
	Process *StageProcess `json:"target_process,omitempty"`
	// LLM is what the stage's token streams measured (an LLM load; nil
	// otherwise), its warmup left out as from its other figures.
	LLM *StageLLM `json:"llm,omitempty"`
}

// StageWarmup is the part of a stage left out of its figures.
type StageWarmup struct {
	// Duration is its length; Counts and Histograms its requests'.
	Duration   time.Duration `json:"seconds" unit:"s"`
	Counts     StepCounts    `json:"counts"`
	Histograms Histograms    `json:"histograms"`
	// LLM is what its token streams measured (an LLM load; nil
	// otherwise), its rates per second of Duration: with the stages'
	// blocks it adds up to the run's hail.llm.
	LLM *StageLLM `json:"llm,omitempty"`
}

// StageProcess is the target's use in a stage (all its processes), from
// its per-second samples that lie in the stage's measured part.
type StageProcess struct {
	// Samples is how many memory samples there were; PeakRSSBytes and
	// MeanRSSBytes are over them.
	Samples      int   `json:"samples"`
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	MeanRSSBytes int64 `json:"mean_rss_bytes"`
	// MeanCPU is its CPU use in cores.
	MeanCPU float64 `json:"cpu_mean_cores"`
	// PeakPSSBytes and MeanPSSBytes are the proportional set size (0 when
	// it could not be read); PeakProcesses the most processes sampled at
	// once.
	PeakPSSBytes  int64 `json:"peak_pss_bytes,omitempty"`
	MeanPSSBytes  int64 `json:"mean_pss_bytes,omitempty"`
	PeakProcesses int   `json:"peak_processes,omitempty"`
	// CPUPerRequest is its CPU time per request of the stage (mean cores ×
	// seconds ÷ requests, to the nanosecond; cpu_per_request_us:
	// microseconds in the JSON).
	CPUPerRequest time.Duration `json:"cpu_per_request_us,omitempty" unit:"us"`
}

// Label names the stage: "stage 2", or "stage 2 (peak)" when it has a
// name.
func (s *StageResult) Label() string {
	if s.Name != "" {
		return fmt.Sprintf("stage %d (%s)", s.Stage, s.Name)
	}
	return fmt.Sprintf("stage %d", s.Stage)
}

// LoadText describes the stage's load: "0→500 conns", "5000 conns"
// (a step), "1000→5000 req/s".
func (s *StageResult) LoadText() string {
	unit := " conns"
	if s.Kind == "rate" {
		unit = " req/s"
	}
	n := func(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
	if s.Ramp == "step" || s.From == s.Target {
		return n(s.Target) + unit
	}
	return n(s.From) + "→" + n(s.Target) + unit
}
