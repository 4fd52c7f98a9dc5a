package hail

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
)

// Progress is a run so far, as the command's live view shows it: the
// counters, the status codes and error kinds, the latencies over the run
// so far, and the latest second. WithProgress receives one about once a
// second.
type Progress struct {
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Requests ended so far (responses and errors, oha's count);
	// Responses and Errors split them.
	Requests, Responses, Errors int64
	// Sent are the requests whose first byte was written; NotSent failed
	// before that (their connection could not be set up); Unsent were
	// taken but never sent (the run stopped first).
	Sent, NotSent, Unsent int64
	// Failed are the sent requests that failed, CutOff those the run's end
	// aborted.
	Failed, CutOff int64
	// Queued counts requests that waited for a free connection.
	Queued int64
	// BodyBytes are response body bytes received; WireBytes every byte
	// read, SentBytes every byte written.
	BodyBytes, WireBytes, SentBytes int64
	// Status counts responses by status ("200", "OK"); ErrorKinds
	// failures by kind ("timeout").
	Status     map[string]int64
	ErrorKinds map[string]int64
	// P50 and P99 are the responses' latency over the run so far;
	// AllSentP50, AllSentP99 and AllSentMax every sent request's, a
	// failure at its elapsed time.
	P50, P99                           time.Duration
	AllSentP50, AllSentP99, AllSentMax time.Duration
	// RequestsPerSec is the rate of the latest second.
	RequestsPerSec float64
	// Last is the latest second: in flight, connections open, hail's CPU,
	// its lateness and the wait for a connection.
	Last Second
	// Steps are a scenario's steps so far (nil for a single request).
	Steps []StepProgress
}

// StepProgress is one scenario step so far.
type StepProgress struct {
	Name string
	// Requests ended, Errors of them failed.
	Requests, Errors int64
	// P50 and P99 are its responses' latency so far.
	P50, P99 time.Duration
}

// progressOf reads c into a Progress (steps names its steps; none for a
// run without). lat is a histogram it may reuse.
func progressOf(c *stats.Collector, steps []string, lat *hdr.Histogram) Progress {
	p := Progress{Elapsed: time.Since(c.Start()), Status: map[string]int64{}, ErrorKinds: map[string]int64{}}
	c.View(func(t *stats.Totals, series []stats.Second) {
		p.Requests, p.Responses, p.Errors = t.Requests(), t.Responses(), t.ErrorCount()
		p.Sent, p.NotSent, p.Unsent = t.Sent(), t.NotSent, t.Unsent
		p.Failed, p.CutOff, p.Queued = t.Failed.TotalCount(), t.CutOff(), t.Queued
		p.BodyBytes, p.WireBytes, p.SentBytes = t.BodyBytes, t.WireBytes, t.SentBytes
		for code, n := range t.Status {
			if n > 0 {
				p.Status[status.Name(code)] = n
			}
		}
		for k, n := range t.Errors {
			if n > 0 {
				p.ErrorKinds[stats.ErrorKind(k).String()] = n
			}
		}
		lat.Reset()
		lat.Merge(t.LatencyOK)
		lat.Merge(t.LatencyBad)
		p.P50, p.P99 = time.Duration(lat.ValueAtQuantile(50)), time.Duration(lat.ValueAtQuantile(99))
		lat.Merge(t.Failed)
		p.AllSentP50, p.AllSentP99, p.AllSentMax = time.Duration(lat.ValueAtQuantile(50)), time.Duration(lat.ValueAtQuantile(99)), time.Duration(lat.Max())
		if len(series) > 0 {
			last := series[len(series)-1]
			p.Last = last
			if last.Span > 0 {
				p.RequestsPerSec = float64(last.Requests+last.NotSent) / last.Span.Seconds()
			}
		}
	})
	if len(steps) > 1 || len(steps) == 1 && steps[0] != "" {
		c.Steps(func(totals []*stats.Totals, _ [][]stats.Second) {
			for i, t := range totals {
				if i >= len(steps) {
					break
				}
				lat.Reset()
				lat.Merge(t.LatencyOK)
				lat.Merge(t.LatencyBad)
				p.Steps = append(p.Steps, StepProgress{Name: steps[i], Requests: t.Requests(), Errors: t.ErrorCount(),
					P50: time.Duration(lat.ValueAtQuantile(50)), P99: time.Duration(lat.ValueAtQuantile(99))})
			}
		})
	}
	return p
}
