package hail

// The one boundary between package hail's Result and internal/report's:
// their fields are the same (every part is package result's), so a Go
// conversion turns one into the other and the compiler refuses any drift.

import "github.com/hail-loadgen/hail/internal/report"

// fromReport is r as package hail's Result.
func fromReport(r *report.Result) *Result {
	if r == nil {
		return nil
	}
	out := Result(*r)
	return &out
}

// toReport is r as internal/report's Result, for its renderers.
func toReport(r *Result) *report.Result {
	out := report.Result(*r)
	return &out
}
