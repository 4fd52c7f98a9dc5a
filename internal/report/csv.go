package report

import (
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"io"
	"strconv"
)

// WriteCSV writes the per-second series as CSV: one row per second of the
// run with its sent requests, errors, rate and latency percentiles (s) —
// of the responses, and of every sent request (all_sent_*: a failure at
// its elapsed time), with how many of the sent failed and how many the
// run's end cut off (aborted requests and truncated streams) — and the
// requests that failed before they were sent.
func WriteCSV(w io.Writer, r *result.Result) error {
	b := []byte("second,span,requests,errors,requests_per_sec,body_bytes,p50,p90,p99,max,schedule_lag_p99,in_flight,connections_open,cpu_cores,target_rss_bytes,target_cpu_cores,connection_wait_p99,others_cpu,not_sent,all_sent_p50,all_sent_p99,all_sent_max,failed,cut_off,drained,stage\n")
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, s := range r.Hail.Series {
		rate := 0.0
		if s.Span > 0 {
			rate = float64(s.Requests) / s.Span.Seconds()
		}
		b = fmt.Appendf(b, "%d,%s,%d,%d,%s,%d,%s,%s,%s,%s,%s,%d,%d,%s,%d,%s,%s,%s,%d,%s,%s,%s,%d,%d,%d,%d\n", s.Index, f(s.Span.Seconds()), s.Requests, s.Errors, f(rate),
			s.BodyBytes, f(s.P50.Seconds()), f(s.P90.Seconds()), f(s.P99.Seconds()), f(s.Max.Seconds()), f(s.LagP99.Seconds()), s.InFlight, s.ConnsOpen, f(s.CPU),
			s.TargetRSS, f(s.TargetCPU), f(s.WaitP99.Seconds()), f(s.Others), s.NotSent, f(s.AllSentP50.Seconds()), f(s.AllSentP99.Seconds()), f(s.AllSentMax.Seconds()),
			s.Errors-(s.CutOff-s.Truncated), s.CutOff, s.Drained, stageAt(r.Hail.Stages, float64(s.Index)))
	}
	_, err := w.Write(b)
	return err
}
