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
func ReadJSON(rd io.Reader) (*Result, error) {
	var r Result
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not a hail result: %v", err)
	}
	for _, s := range []string{r.Hail.Histograms.LatencyOK, r.Hail.Histograms.LatencyBad, r.Hail.Histograms.FirstByte, r.Hail.Histograms.Lag} { // conn_wait is optional (older results lack it)
		if _, err := DecodeHist(s); err != nil {
			return nil, fmt.Errorf("bad histogram in result: %v", err)
		}
	}
	return &r, nil
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
