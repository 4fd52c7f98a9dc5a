package hail

import (
	"io"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/result"
)

// WriteJSON writes r as the JSON report, byte for byte as the command
// writes it: oha's keys in oha's order and number format (null where oha
// has no value), then the "hail" object.
func WriteJSON(w io.Writer, r *Result) error { return result.WriteJSON(w, r) }

// ReadJSON reads a Result written by WriteJSON, by the command (hail -j,
// hail run, hail merge), or by oha (oha -j: then Hail is mostly empty).
// Anything else is an error saying what the input holds.
func ReadJSON(rd io.Reader) (*Result, error) { return result.ReadJSON(rd) }

// WriteVLLM writes r, the Result of an LLM load (Plan.LLM), as the result
// file of vLLM's bench serve (what hail llm --output-format vllm writes),
// so that what reads those files reads hail's; an error for a Result
// without Hail.LLM.
func WriteVLLM(w io.Writer, r *Result) error { return report.WriteVLLM(w, r) }

// WriteText writes r as the command's text report.
func WriteText(w io.Writer, r *Result) error {
	return report.WriteText(w, r, report.TextOptions{})
}
