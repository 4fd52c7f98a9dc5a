package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a Result written by WriteJSON, checking what later
// computations rely on.
//
// A hail result and an oha result (oha -j) are JSON objects whose summary
// holds successRate and total; anything else — null, a list, another
// tool's JSON — is "not a hail result", never a report of zeros.
func ReadJSON(rd io.Reader) (*Result, error) {
	var raw json.RawMessage
	if err := json.NewDecoder(rd).Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a hail result: %v", err)
	}
	if err := looksLikeResult(raw); err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("not a hail result: %v", err)
	}
	for _, s := range []string{r.Hail.Histograms.LatencyOK, r.Hail.Histograms.LatencyBad, r.Hail.Histograms.FirstByte, r.Hail.Histograms.Lag} { // conn_wait is optional (older results lack it)
		if _, err := DecodeHist(s); err != nil {
			return nil, fmt.Errorf("bad histogram in result: %v", err)
		}
	}
	return &r, nil
}

// looksLikeResult checks that raw is a JSON object with the summary keys
// every hail and oha result has.
func looksLikeResult(raw json.RawMessage) error {
	const want = "a hail or oha JSON result (hail -j, oha -j) is an object with a summary"
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		kind := "a JSON " + jsonKind(raw)
		return fmt.Errorf("not a hail result: the file holds %s; %s", kind, want)
	}
	var summary map[string]json.RawMessage
	if err := json.Unmarshal(top["summary"], &summary); err != nil || summary == nil {
		return fmt.Errorf("not a hail result: it has no summary; %s", want)
	}
	for _, k := range []string{"successRate", "total"} {
		if _, ok := summary[k]; !ok {
			return fmt.Errorf("not a hail result: its summary has no %s; %s", k, want)
		}
	}
	return nil
}

// jsonKind names the kind of JSON value raw holds.
func jsonKind(raw json.RawMessage) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case 'n':
			return "null"
		case '[':
			return "list"
		case '"':
			return "string"
		case 't', 'f':
			return "boolean"
		case '{':
			return "object"
		}
		return "number"
	}
	return "value"
}

// WriteCSV writes the per-second series as CSV: one row per second of the
// run with its request count, errors, rate and latency percentiles (s).
func WriteCSV(w io.Writer, r *Result) error {
	b := []byte("second,span,requests,errors,requests_per_sec,body_bytes,p50,p90,p99,max,schedule_lag_p99,in_flight,connections_open,cpu_cores,target_rss_bytes,target_cpu_cores,connection_wait_p99,others_cpu\n")
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, s := range r.Hail.Series {
		rate := 0.0
		if s.Span > 0 {
			rate = float64(s.Requests) / s.Span
		}
		b = fmt.Appendf(b, "%d,%s,%d,%d,%s,%d,%s,%s,%s,%s,%s,%d,%d,%s,%d,%s,%s,%s\n", s.Index, f(s.Span), s.Requests, s.Errors, f(rate),
			s.BodyBytes, f(sec(s.P50)), f(sec(s.P90)), f(sec(s.P99)), f(sec(s.Max)), f(sec(s.LagP99)), s.InFlight, s.ConnsOpen, f(s.CPU),
			s.TargetRSS, f(s.TargetCPU), f(sec(s.WaitP99)), f(s.Others))
	}
	_, err := w.Write(b)
	return err
}
