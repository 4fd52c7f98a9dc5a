package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hail-loadgen/hail/internal/wire"
	"github.com/hail-loadgen/hail/result"
)

// WriteVLLM writes r as the result file of vLLM's `vllm bench serve
// --save-result`: its configuration keys (date, backend, model_id,
// num_prompts, request_rate, burstiness, max_concurrency, …) and its
// metrics (hail.llm's VLLM keys), so that dashboards and scripts that read
// those files read hail's. The per-request lists vLLM saves only with
// --save-detailed are not written: hail keeps histograms, not requests.
func WriteVLLM(w io.Writer, r *result.Result) error {
	l := r.Hail.LLM
	if l == nil {
		return fmt.Errorf("--output-format vllm: the result has no hail.llm section: it is hail llm's format")
	}
	backend := "openai-chat"
	if l.API == "completions" {
		backend = "openai"
	}
	rate := any("inf")
	if q, ok := r.Hail.Config["rate"].(float64); ok && q > 0 && l.Arrivals != "bursts" {
		rate = q
	}
	burstiness := any(1.0)
	switch {
	case l.Arrivals == "constant":
		burstiness = "inf" // evenly spaced: vLLM's burstiness tends to infinity
	case len(l.Arrivals) > len("gamma:") && l.Arrivals[:len("gamma:")] == "gamma:":
		var b float64
		if _, err := fmt.Sscan(l.Arrivals[len("gamma:"):], &b); err == nil {
			burstiness = b
		}
	}
	var concurrency any
	if c, ok := r.Hail.Config["connections"].(float64); ok {
		concurrency = int(c)
	} else if c, ok := r.Hail.Config["connections"].(int); ok {
		concurrency = c
	}
	head := []struct {
		k string
		v any
	}{
		{"date", time.Unix(0, unixNano(r.Hail.Start)).Format("20060102-150405")},
		{"endpoint_type", backend}, {"backend", backend}, {"label", "hail"},
		{"model_id", l.Model}, {"tokenizer_id", nil}, {"num_prompts", r.Hail.Counts.Intended},
		{"request_rate", rate}, {"burstiness", burstiness}, {"max_concurrency", concurrency}, {"rtfx", 0.0},
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, kv := range head {
		v, err := json.Marshal(kv.v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%q: %s, ", kv.k, v)
	}
	metrics, err := json.Marshal(wire.To(&l.VLLM))
	if err != nil {
		return err
	}
	b.Write(metrics[1:]) // the metrics' members and the closing brace
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}
