package hail

import (
	"fmt"
	"strconv"
	"strings"
)

// FieldError is a Plan that cannot run: Field names the field at fault
// ("Connections", "RateStages[1]", "GRPC.Data"), and nothing was sent.
type FieldError struct {
	// Field is the Plan field at fault.
	Field string
	// Value is the offending value as the message writes it ("0",
	// `"h4"`), or "".
	Value string
	// Problem says what is wrong and what to do.
	Problem string
}

// Error is "Field Value: Problem".
func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Problem
	}
	return e.Field + " " + e.Value + ": " + e.Problem
}

// ScenarioError is a problem in a scenario: at Line and Column (from 1)
// of File for one read from YAML, at Path ("steps[1].expect.status") of
// a scenario.File built in Go. Nothing was sent.
type ScenarioError struct {
	File         string
	Line, Column int
	Path         string
	// Problem says what was expected and what was found.
	Problem string
}

// Error is "FILE:LINE:COLUMN: problem", or "PATH: problem".
func (e *ScenarioError) Error() string {
	if e.Path != "" {
		return e.Path + ": " + e.Problem
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Problem
}

// SetupError is a scenario's setup step that failed: the load did not run
// (the teardown did, to clean up).
type SetupError struct {
	// Step is the step's name, Reason what went wrong (a failed check, a
	// status, a missing value, an error kind).
	Step, Reason string
	// Setup and Teardown are the phases as they ran.
	Setup, Teardown *Phase
}

// Error names the step and why it failed, and says the load did not run.
func (e *SetupError) Error() string {
	return fmt.Sprintf("setup step %s failed: %s; the load was not run", e.Step, e.Reason)
}

// UnreachableError says that no request could be sent: the target's name
// did not resolve, or every connection to it failed (refused, timed out).
// Run returns it with the Result of the run when there was one.
type UnreachableError struct {
	// Addr is where connections went (host:port, a socket path).
	Addr string
	// NotSent counts the requests that failed before they were sent;
	// Errors them by kind ("connection refused").
	NotSent int64
	Errors  map[string]int64
	// Reason says what happened and the likely cause, in one line.
	Reason string
}

// Error is "target unreachable: " and the reason.
func (e *UnreachableError) Error() string { return "target unreachable: " + e.Reason }

// NoSuccessError says that requests were sent but none succeeded: every
// one failed, or every response had a failed status (HTTP ≥ 400, gRPC
// not OK) that no scenario step expected. Run returns it with the Result.
type NoSuccessError struct {
	// Reason says what happened, in one line.
	Reason string
}

// Error is "no request succeeded: " and the reason.
func (e *NoSuccessError) Error() string { return "no request succeeded: " + e.Reason }

// ThresholdError says that thresholds failed, or that one with
// AbortOnFail stopped the run early. Run returns it with the Result, whose
// Hail.Thresholds hold every threshold and what it measured.
type ThresholdError struct {
	// Failed are the thresholds that failed, of Total.
	Failed []ThresholdResult
	Total  int
	// StoppedBy says why the run stopped early ("" when it did not).
	StoppedBy string
}

// Error names each failed threshold with what it measured, and why the
// run stopped early if it did.
func (e *ThresholdError) Error() string {
	var names []string
	for _, t := range e.Failed {
		s := t.Expr
		if t.Step != "" {
			s += " (step " + t.Step + ")"
		}
		names = append(names, s+": measured "+t.Measured)
	}
	msg := fmt.Sprintf("%d of %d thresholds failed: %s", len(e.Failed), e.Total, strings.Join(names, "; "))
	if e.StoppedBy != "" {
		msg = "stopped early: " + e.StoppedBy + "; " + msg
	}
	return msg
}
