package hail

import (
	"bytes"
	"io"

	"github.com/hail-loadgen/hail/internal/report"
)

// WriteJSON writes r as the JSON report, byte for byte as the command
// writes it: oha's keys in oha's order and number format (null where oha
// has no value), then the "hail" object.
func WriteJSON(w io.Writer, r *Result) error { return report.WriteJSON(w, toReport(r)) }

// ReadJSON reads a Result written by WriteJSON, by the command (hail -j,
// hail run, hail merge), or by oha (oha -j: then Hail is mostly empty).
// Anything else is an error saying what the input holds.
func ReadJSON(rd io.Reader) (*Result, error) {
	r, err := report.ReadJSON(rd)
	if err != nil {
		return nil, err
	}
	return fromReport(r), nil
}

// WriteVLLM writes r, the Result of an LLM load (Plan.LLM), as the result
// file of vLLM's bench serve (what hail llm --output-format vllm writes),
// so that what reads those files reads hail's; an error for a Result
// without Hail.LLM.
func WriteVLLM(w io.Writer, r *Result) error { return report.WriteVLLM(w, toReport(r)) }

// WriteText writes r as the command's text report.
func WriteText(w io.Writer, r *Result) error {
	return report.WriteText(w, toReport(r), report.TextOptions{})
}

// MarshalJSON encodes r as WriteJSON does (encoding/json then compacts
// it). A Result's parts (Summary, Counts, …) have no such method: alone,
// they encode as plain Go values, times in nanoseconds.
func (r Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := WriteJSON(&b, &r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// UnmarshalJSON decodes a Result as ReadJSON does.
func (r *Result) UnmarshalJSON(data []byte) error {
	res, err := ReadJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	*r = *res
	return nil
}
