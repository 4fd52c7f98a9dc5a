package hail

import "github.com/hail-loadgen/hail/result"

type (
	// StepResult is one step of a scenario: its own counts, status codes,
	// errors, latency and histograms. The run's totals are the sum of its
	// steps.
	StepResult = result.StepResult
	// Phase is a scenario's setup or teardown: steps run once, in order,
	// on a connection of their own.
	Phase = result.Phase
)
