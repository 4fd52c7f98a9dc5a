package hail

// The one boundary between package hail's Result and internal/report's:
// report.Convert copies a value of one into the other, field by field by
// JSON key, times as time.Duration here and in the JSON's units there.
// TestResultCoversTheReport fills every field of report.Result and checks
// that it comes back through Result unchanged: a field the report gains
// without its twin here fails it.

import "github.com/hail-loadgen/hail/internal/report"

// fromReport is r as package hail's Result.
func fromReport(r *report.Result) *Result {
	if r == nil {
		return nil
	}
	out := new(Result)
	report.Convert(out, *r)
	return out
}

// toReport is r as internal/report's Result, for its renderers.
func toReport(r *Result) *report.Result {
	out := new(report.Result)
	report.Convert(out, *r)
	return out
}
