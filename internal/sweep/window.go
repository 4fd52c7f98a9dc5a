package sweep

import (
	"slices"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
)

// Window measures one step: the requests meant to be sent from From (the
// warm-up's end) to To (the step's end), each checked against SLO.
type Window struct {
	From, To time.Duration
	SLO      stream.SLO
	// Expect is a request's asked lengths: the output length of a record
	// that carries no token counts.
	Expect func(hit uint64) (in, out int)

	requests, met, completed int
	tokens                   int64
	ttft, tpot               []int64
}

// Add counts one request's record.
func (w *Window) Add(r *stats.TraceRecord) {
	if r.Intended < int64(w.From) || r.Intended >= int64(w.To) {
		return
	}
	w.requests++
	if _, failed := r.Failed(); failed || r.Status < 200 || r.Status > 299 || r.FirstToken == 0 {
		return
	}
	w.completed++
	out, last := int(r.OutTokens), r.LastToken
	if out == 0 || last == 0 {
		_, out = w.Expect(r.Hit)
		last = r.End
	}
	w.tokens += int64(out)
	ttft := r.FirstToken - r.Intended
	w.ttft = append(w.ttft, ttft)
	ok := w.SLO.TTFT == 0 || ttft <= int64(w.SLO.TTFT)
	if out > 1 {
		tpot := (last - r.FirstToken) / int64(out-1)
		w.tpot = append(w.tpot, tpot)
		ok = ok && (w.SLO.TPOT == 0 || tpot <= int64(w.SLO.TPOT))
	}
	ok = ok && (w.SLO.E2E == 0 || r.End-r.Intended <= int64(w.SLO.E2E))
	if ok {
		w.met++
	}
}

// Step is what the window measured, for a step at rate (0: closed).
func (w *Window) Step(kind string, rate float64) Step {
	secs := (w.To - w.From).Seconds()
	s := Step{Kind: kind, Rate: rate, Requests: w.requests, Met: w.met, Completed: w.completed}
	if secs > 0 {
		s.Throughput = float64(w.completed) / secs
		s.Goodput = float64(w.met) / secs
		s.TokensPerSec = float64(w.tokens) / secs
	}
	s.TTFT50, s.TTFT99 = quantiles(w.ttft)
	s.TPOT50, s.TPOT99 = quantiles(w.tpot)
	return s
}

// quantiles are the median and the 99th percentile (nearest rank).
func quantiles(v []int64) (p50, p99 time.Duration) {
	if len(v) == 0 {
		return 0, 0
	}
	slices.Sort(v)
	at := func(p float64) time.Duration {
		i := int(p*float64(len(v))+0.999999) - 1
		return time.Duration(v[min(max(i, 0), len(v)-1)])
	}
	return at(0.50), at(0.99)
}
