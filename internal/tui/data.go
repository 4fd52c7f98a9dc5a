package tui

import (
	"sort"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
)

// Source is what the view reads: a run's *stats.Collector. The view only
// calls these, at most once per frame, never anything on the hot path.
type Source interface {
	// Start is when the run started.
	Start() time.Time
	// View calls f with the totals and per-second series under the
	// collector's lock; f copies what it needs and keeps no pointer.
	View(f func(t *stats.Totals, series []stats.Second))
}

// Count is one row of a distribution: a status code or an error kind.
type Count struct {
	Name string
	N    int64
}

// StepRow is one scenario step's live numbers. Runs of a single request
// have no steps.
type StepRow struct {
	Name     string
	Requests int64
	Errors   int64 // failed requests, Checks of them responses that failed a check
	Checks   int64
	RPS      float64
	P50, P99 int64 // ns
	// Status are the step's responses by status code, largest first.
	Status []Count
	// Misses are responses that had nothing to capture; Yields the times
	// the step was chosen but waited for a value (Scenario.Counters).
	Misses, Yields int64
}

// histFine is how many equal-width bins the latency histogram keeps between
// its lowest value and its p99; the view groups them into as many rows as fit.
const histFine = 240

// Hist summarises the run's latency histogram for display.
type Hist struct {
	Total    int64
	Min, Max int64 // ns
	Hi       int64 // ns: the top of the fine bins (p99); values above it are Over
	Fine     [histFine]int64
	Over     int64
}

// Data is the view's own copy of the run so far, refreshed once per
// collector tick (about once a second).
type Data struct {
	// Series is one entry per second of the run, oldest first.
	Series []stats.Second
	// Requests ended so far, Errors of them failed.
	Requests, Errors int64
	BodyBytes        int64
	WireBytes        int64
	SentBytes        int64
	// Queued counts requests that waited for a free connection.
	Queued int64
	// Unsent counts requests taken but never sent (the run stopped first);
	// NotSent requests that failed before they were sent (connect failures).
	Unsent, NotSent int64
	// Status is responses by status code, Failures errors by kind, both
	// largest first.
	Status   []Count
	Failures []Count
	// Latency is the whole run's latency histogram so far.
	Latency Hist
	// RunP50 and RunP99 are over the whole run so far, ns.
	RunP50, RunP99 int64
	// AllP50, AllP99 and AllMax are over every sent request of the run so
	// far, a failure at its elapsed time (ns); Failed are the sent requests
	// that failed (not cut off), CutOff those the run's end aborted.
	AllP50, AllP99, AllMax int64
	Failed, CutOff         int64
	// Steps are per-step rows once scenarios exist.
	Steps []StepRow
	// LLM is the token streams' numbers (hail llm); nil until a token
	// stream has been read.
	LLM *LLM
}

// Last is the latest second, or a zero Second.
func (d *Data) Last() stats.Second {
	if len(d.Series) == 0 {
		return stats.Second{}
	}
	return d.Series[len(d.Series)-1]
}

// sampler copies a Source into Data, only when the collector has ticked.
type sampler struct {
	names   []string                              // scenario step names (rows only with more than one)
	extra   func(step int) (misses, yields int64) // the scenario's own counters; nil for none
	seen    int                                   // series entries copied so far
	ok, bad []int64                               // the latency histograms' counts, copied under the lock
	fail    []int64                               // the failed sent requests' histogram counts
	llm     llmCopy                               // the token streams' histograms and counts
}

// sample refreshes d from src and reports whether anything changed. It
// does the copying under the collector's lock and the arithmetic after.
func (s *sampler) sample(src Source, d *Data) bool {
	changed := false
	src.View(func(t *stats.Totals, series []stats.Second) {
		if len(series) == s.seen {
			return
		}
		changed = true
		if len(series) < s.seen { // a new run: start over
			d.Series = d.Series[:0]
			s.seen = 0
		}
		d.Series = append(d.Series, series[s.seen:]...)
		s.seen = len(series)
		d.Requests, d.Errors = t.Requests(), t.ErrorCount()
		d.BodyBytes, d.WireBytes, d.SentBytes = t.BodyBytes, t.WireBytes, t.SentBytes
		d.Queued, d.Unsent, d.NotSent = t.Queued, t.Unsent, t.NotSent
		d.Status = d.Status[:0]
		for code, n := range t.Status {
			if n > 0 {
				d.Status = append(d.Status, Count{statusName(code), n})
			}
		}
		d.Failures = d.Failures[:0]
		for k, n := range t.Errors {
			if n > 0 {
				d.Failures = append(d.Failures, Count{stats.ErrorKind(k).String(), n})
			}
		}
		s.ok, s.bad, s.fail = t.LatencyOK.Export().Counts, t.LatencyBad.Export().Counts, t.Failed.Export().Counts
		d.Failed, d.CutOff = t.Failed.TotalCount(), t.CutOff()
		s.llm.copyLLM(t)
	})
	if !changed {
		return false
	}
	if s.llm.on {
		var sec LLMSecond
		ts, ticked := src.(TickSource)
		if ticked {
			ts.LastTick(func(t *stats.Totals) { sec = tickLLM(t) })
		}
		s.llm.fill(d, d.Last().Index, sec, ticked)
	}
	if st, ok := src.(StepSource); ok && len(s.names) > 1 {
		s.steps(st, d)
	}
	sortCounts(d.Status)
	sortCounts(d.Failures)
	d.Latency, d.RunP50, d.RunP99 = summarize(s.ok, s.bad)
	d.AllP50, d.AllP99, d.AllMax = allSent(s.ok, s.bad, s.fail)
	return true
}

// allSent returns p50, p99 and the max of the values counted in a, b and f
// (histograms of stats.NewHist's geometry, added): every sent request.
func allSent(a, b, f []int64) (p50, p99, top int64) {
	n := min(len(a), len(b), len(f))
	var total int64
	last := -1
	for i := range n {
		if c := a[i] + b[i] + f[i]; c > 0 {
			total += c
			last = i
		}
	}
	if total == 0 {
		return 0, 0, 0
	}
	at := func(q float64) int64 {
		want := max(int64(q/100*float64(total)+0.5), 1)
		var cum int64
		for i := 0; i <= last; i++ {
			if cum += a[i] + b[i] + f[i]; cum >= want {
				return bucketTop(i)
			}
		}
		return bucketTop(last)
	}
	return at(50), at(99), bucketTop(last)
}

// StepSource is a Source that also keeps per-step totals and series
// (stats.Collector does).
type StepSource interface {
	Steps(f func(totals []*stats.Totals, series [][]stats.Second))
}

// steps fills d.Steps: per step, its requests, errors and check failures
// so far, its rate in the last second, its run-so-far p50 and p99, its
// status codes, and the scenario's capture misses and yields.
func (s *sampler) steps(src StepSource, d *Data) {
	src.Steps(func(totals []*stats.Totals, series [][]stats.Second) {
		rows := make([]StepRow, 0, len(totals))
		for i, t := range totals {
			if i >= len(s.names) {
				break
			}
			row := StepRow{Name: s.names[i], Requests: t.Requests(), Errors: t.ErrorCount(),
				Checks: t.Errors[stats.ErrCheckStatus] + t.Errors[stats.ErrCheckBody] + t.Errors[stats.ErrCheckJSON] + t.Errors[stats.ErrCheckHeader]}
			if i < len(d.Steps) {
				row.Status = d.Steps[i].Status[:0] // reuse the row's slice
			}
			for code, n := range t.Status {
				if n > 0 {
					row.Status = append(row.Status, Count{statusName(code), n})
				}
			}
			sortCounts(row.Status)
			if s.extra != nil {
				row.Misses, row.Yields = s.extra(i)
			}
			if i < len(series) && len(series[i]) > 0 {
				if last := series[i][len(series[i])-1]; last.Span.Seconds() > 0 {
					row.RPS = float64(last.Requests) / last.Span.Seconds()
				}
			}
			lat := t.Latency()
			row.P50, row.P99 = lat.ValueAtQuantile(50), lat.ValueAtQuantile(99)
			rows = append(rows, row)
		}
		d.Steps = rows
	})
}

// statusName is a status slot as the view shows it: the HTTP code, the
// gRPC status name, or "other" for 0.
func statusName(code int) string {
	if code == 0 {
		return "other"
	}
	return status.Name(code)
}

func sortCounts(c []Count) {
	sort.SliceStable(c, func(i, j int) bool {
		if c[i].N != c[j].N {
			return c[i].N > c[j].N
		}
		return c[i].Name < c[j].Name
	})
}

// summarize buckets the latencies counted in a and b (two histograms of
// stats.NewHist's geometry, added) into histFine equal-width bins from the
// lowest value to p99, counts what lies above, and returns p50 and p99.
// Values are HdrHistogram's: a bucket's highest equivalent value.
func summarize(a, b []int64) (out Hist, p50, p99 int64) {
	n := min(len(a), len(b))
	at := func(i int) int64 { return a[i] + b[i] }
	first, last := -1, -1
	for i := range n {
		if c := at(i); c > 0 {
			out.Total += c
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if out.Total == 0 {
		return out, 0, 0
	}
	quantile := func(q float64) int64 {
		want := max(int64(q/100*float64(out.Total)+0.5), 1)
		var cum int64
		for i := first; i <= last; i++ {
			if cum += at(i); cum >= want {
				return bucketTop(i)
			}
		}
		return bucketTop(last)
	}
	out.Min, out.Max = bucketLow(first), bucketTop(last)
	p50, p99 = quantile(50), quantile(99)
	out.Hi = p99
	if out.Hi <= out.Min {
		out.Hi = out.Max
	}
	width := float64(out.Hi-out.Min) / histFine
	for i := first; i <= last; i++ {
		c := at(i)
		if c == 0 {
			continue
		}
		top := bucketTop(i)
		if top > out.Hi {
			out.Over += c
			continue
		}
		j := histFine - 1
		if width > 0 {
			j = min(max(int(float64(top-out.Min)/width), 0), histFine-1)
		}
		out.Fine[j] += c
	}
	return out, p50, p99
}

// The geometry of stats.NewHist (3 significant digits from 1 ns): each
// bucket holds 2^10 sub-buckets of its half-range.
const subHalfMag = 10

// bucketLow and bucketTop are the lowest and highest values counted at
// index i of the histogram's counts (HdrHistogram's equivalent values).
func bucketLow(i int) int64 {
	b := (i >> subHalfMag) - 1
	sub := (i & (1<<subHalfMag - 1)) + 1<<subHalfMag
	if b < 0 {
		sub -= 1 << subHalfMag
		b = 0
	}
	return int64(sub) << b
}

func bucketTop(i int) int64 {
	b := max((i>>subHalfMag)-1, 0)
	return bucketLow(i) + int64(1)<<b - 1
}
