package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/result"
)

// LateStart is how far behind --start-at a shard may begin and still count
// as starting with the others: the per-second series align to the nearest
// second, and hail merge marks a run with a later shard incomplete.
const LateStart = time.Second

// MergeOptions are hail merge's allowances for a run that did not go as
// planned. The merged result lists each such shard in Merged.Incomplete.
type MergeOptions struct {
	// Failed gives the shards (by index) that failed, and why (as the
	// scheduler said); they have no result.
	Failed map[int]string
	// Partial merges the shards that are there: a missing shard is
	// recorded instead of being an error.
	Partial bool
}

// TotalsOf rebuilds the exact Totals a Result was made from: its decoded
// histograms, status and error counts, and integer sums.
func TotalsOf(r *result.Result) (*stats.Totals, error) {
	t := stats.NewTotals()
	h := r.Hail.Histograms
	for _, x := range []struct {
		enc string
		dst *hdr.Histogram
	}{{h.LatencyOK, t.LatencyOK}, {h.LatencyBad, t.LatencyBad}, {h.FirstByte, t.FirstByte}, {h.Lag, t.Lag}, {h.ConnWait, t.ConnWait}, {h.Failed, t.Failed}} {
		if x.enc == "" && (x.dst == t.ConnWait || x.dst == t.Failed) {
			continue // a result from before the connection wait or the failed requests were recorded
		}
		d, err := DecodeHist(x.enc)
		if err != nil {
			return nil, fmt.Errorf("bad histogram in result: %v", err)
		}
		x.dst.Merge(d)
	}
	if err := addDistributions(t, r.StatusCodeDistribution, r.ErrorDistribution); err != nil {
		return nil, err
	}
	c := r.Hail.Counts
	t.LatencySum, t.BodyBytes, t.WireBytes, t.SentBytes = int64(c.LatencySum), c.BodyBytes, c.WireBytes, c.SentBytes
	t.Queued, t.QueueWait, t.Unsent, t.Skipped, t.Reconnects = c.Queued, int64(c.QueueWait), c.Unsent, c.Skipped, c.Reconnects
	t.Expected, t.NotSent = c.Expected, c.NotSent
	t.FailedSum = int64(c.FailedSum)
	if r.Hail.Drain != nil {
		t.Drained = r.Hail.Drain.Requests
	}
	t.Connects, t.ConnectSum, t.DNSSum = c.Connects, int64(c.ConnectSum), int64(c.DNSSum)
	if c.Connects > 0 {
		t.ConnectMin, t.ConnectMax, t.DNSMin, t.DNSMax = int64(c.ConnectMin), int64(c.ConnectMax), int64(c.DNSMin), int64(c.DNSMax)
	}
	st, err := streamTotals(r)
	if err != nil {
		return nil, err
	}
	t.Stream = st
	return t, nil
}

func addDistributions(t *stats.Totals, statuses, errs map[string]int64) error {
	for k, n := range statuses {
		code, ok := status.ByName(k)
		if !ok {
			return fmt.Errorf("bad status code %q in result", k)
		}
		t.Status[code] += n
	}
	for k, n := range errs {
		kind, ok := stats.KindByName(k)
		if !ok {
			kind = stats.ErrOther
		}
		t.Errors[kind] += n
	}
	return nil
}

// stepTotals rebuilds a step's Totals from its Result entry.
func stepTotals(s *result.StepResult) (*stats.Totals, error) {
	t := stats.NewTotals()
	h := s.Histograms
	for _, x := range []struct {
		enc string
		dst *hdr.Histogram
	}{{h.LatencyOK, t.LatencyOK}, {h.LatencyBad, t.LatencyBad}, {h.FirstByte, t.FirstByte}, {h.Lag, t.Lag}, {h.Failed, t.Failed}} {
		d, err := DecodeHist(x.enc)
		if err != nil {
			return nil, fmt.Errorf("bad histogram in step %q: %v", s.Name, err)
		}
		x.dst.Merge(d)
	}
	if err := addDistributions(t, s.StatusCodeDistribution, s.ErrorDistribution); err != nil {
		return nil, err
	}
	t.LatencySum, t.BodyBytes, t.SentBytes = int64(s.Counts.LatencySum), s.Counts.BodyBytes, s.Counts.SentBytes
	t.Expected, t.NotSent = s.Counts.Expected, s.Counts.NotSent
	t.FailedSum = int64(s.Counts.FailedSum)
	if n := s.Counts.Truncated; n > 0 { // streams cut by the run's end: requests, neither responses nor errors
		t.Stream = stats.NewStreams(false)
		t.Stream.Truncated = n
	}
	if l := s.LLM; l != nil {
		st, err := llmStreams(l)
		if err != nil {
			return nil, fmt.Errorf("step %q: %v", s.Name, err)
		}
		t.Stream = st
	}
	return t, nil
}

// Merge combines the results of the shards of one distributed run (or of
// several runs of one configuration) into one Result, exactly: histograms
// and counts add, and every derived number is recomputed by Build. The
// per-second series are aligned by wall clock (each result's start plus the
// second's index). Configurations must agree: a mismatch is an error naming
// the field. names label the inputs in messages (file names); nil uses
// their positions.
func Merge(results []*result.Result, names []string) (*result.Result, error) {
	return MergeWith(results, names, MergeOptions{})
}

// MergeWith is Merge for a run some of whose shards failed or are missing
// (as opt allows): it merges the results there are and records in
// Merged.Incomplete every shard that failed, is missing, started late or
// was interrupted.
func MergeWith(results []*result.Result, names []string, opt MergeOptions) (*result.Result, error) {
	if len(results) == 0 {
		if len(opt.Failed) > 0 {
			return nil, fmt.Errorf("every shard failed: nothing to merge")
		}
		return nil, fmt.Errorf("nothing to merge")
	}
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("result %d", i+1)
	}
	absent, err := checkMergeable(results, name, opt)
	if err != nil {
		return nil, err
	}
	first := results[0]
	info := &result.Merged{Results: len(results), Notes: []string{}, Incomplete: absent}
	sum, err := sumResults(results, name, info)
	if err != nil {
		return nil, err
	}
	sort.Ints(info.Shards)
	cores, shared := mergeCores(results, name)
	series, spread := alignSeries(results, sum.start, func(r *result.Result) []stats.Second { return r.Hail.Series })
	elapsed := time.Duration(sum.end - sum.start)
	rate := 0.0
	for _, r := range results {
		if r.Hail.Shard != nil {
			rate += r.Hail.Shard.Rate
		}
	}
	if rate == 0 {
		if q, ok := first.Hail.Config["rate"].(float64); ok {
			rate = q
		}
	}
	engine := strings.Join(sum.engines, "+")
	out := Build(Input{Totals: sum.total, Series: series, Elapsed: elapsed, Usage: sum.usage, Cores: cores,
		Engine: engine, EngineReason: fmt.Sprintf("merged from %d results", len(results)), Open: first.Hail.Model == "open",
		Rate: rate, Start: time.Unix(0, sum.start), Interrupted: sum.interrupted, Config: first.Hail.Config,
		Version: first.Hail.Version, SuccessSplit: sum.split, Intent: sum.intent, Connections: sum.conns})
	info.Notes = append(info.Notes,
		fmt.Sprintf("counts, status codes, errors and histograms are exact sums of the %d results; percentiles are recomputed from the summed histograms", len(results)),
		fmt.Sprintf("the results' starts are %s apart; per-second series are aligned by wall clock to the nearest second", time.Duration(spread).Round(time.Microsecond)),
		"per-second percentiles (p50…max, schedule lag) are the highest of the results' for that second: an upper bound, not exact",
		fmt.Sprintf("generator CPU and context switches are summed over the %d results, and cores over the machines they ran on; peak RSS is the largest single result's", len(results)))
	info.Notes = append(info.Notes, shared...)
	info.Incomplete = append(info.Incomplete, lateOrInterrupted(results, name, opt.Failed)...)
	info.PerShard = shardOutcomes(results, opt)
	mergeVerdicts(out, results, name)
	if err := mergeSteps(out, results, sum.start, elapsed, info); err != nil {
		return nil, err
	}
	if err := mergeOrigins(out, results, elapsed, name); err != nil { // origins.go
		return nil, err
	}
	if err := mergeStages(out, results, name); err != nil { // stages.go
		return nil, err
	}
	out.Hail.Target = mergeTarget(results, info)
	out.Hail.GRPC = mergeGRPC(results)
	mergeLLM(out, first)
	out.Hail.Merged = info
	return out, nil
}

// mergeSums is what Merge adds up over its inputs before Build.
type mergeSums struct {
	total              *stats.Totals
	usage              stats.Usage
	start, end         int64 // the earliest start and latest end, Unix ns
	interrupted, split bool
	engines            []string
	intent             Intent
	conns              int
}

// sumResults adds the results' totals and generator usage, spans their
// times, and records their shards in info.
func sumResults(results []*result.Result, name func(int) string, info *result.Merged) (mergeSums, error) {
	m := mergeSums{total: stats.NewTotals(), start: math.MaxInt64, engines: []string{}}
	for i, r := range results {
		t, err := TotalsOf(r)
		if err != nil {
			return m, fmt.Errorf("%s: %v", name(i), err)
		}
		m.total.Add(t)
		g := r.Hail.Generator
		m.usage.User += g.User
		m.usage.System += g.System
		m.usage.Voluntary += g.VoluntarySwitches
		m.usage.Involuntary += g.ForcedSwitches
		m.usage.MaxRSS = max(m.usage.MaxRSS, g.MaxRSSBytes)
		c := r.Hail.Counts
		m.intent.Intended += max(c.Intended, c.Requests+c.Unsent+c.Skipped)
		m.intent.Unsent += c.Unsent
		m.intent.Skipped += c.Skipped
		if m.intent.Reason == "" {
			m.intent.Reason = r.Hail.UnsentReason
		}
		if r.Hail.Shard != nil {
			m.conns += r.Hail.Shard.Connections
		} else if n, ok := r.Hail.Config["connections"].(float64); ok {
			m.conns += int(n)
		}
		m.start = min(m.start, unixNano(r.Hail.Start))
		m.end = max(m.end, unixNano(r.Hail.Start)+int64(r.Summary.Total))
		m.interrupted = m.interrupted || r.Hail.Interrupted
		m.split = m.split || r.LatencyPercentilesSuccessful != nil
		if !slices.Contains(m.engines, r.Hail.Engine) {
			m.engines = append(m.engines, r.Hail.Engine)
		}
		if r.Hail.Shard != nil {
			info.Shards = append(info.Shards, r.Hail.Shard.Index)
		}
	}
	return m, nil
}

// alignSeries merges per-second series by wall clock: entry k of a result
// that started at s covers [s+k, s+k+1); it lands in second round((s-start)/1s)+k
// of the merged series. It also returns the spread of the starts (ns).
func alignSeries(results []*result.Result, start int64, get func(*result.Result) []stats.Second) ([]stats.Second, int64) {
	var out []stats.Second
	var spread int64
	for _, r := range results {
		off := unixNano(r.Hail.Start) - start
		spread = max(spread, off)
		shift := int(math.Round(float64(off) / 1e9))
		for _, s := range get(r) {
			k := s.Index + shift
			for len(out) <= k {
				out = append(out, stats.Second{Index: len(out)})
			}
			m := &out[k]
			m.Span = max(m.Span, s.Span)
			m.Requests += s.Requests
			m.Errors += s.Errors
			m.NotSent += s.NotSent
			m.CutOff += s.CutOff
			m.Drained += s.Drained
			m.BodyBytes += s.BodyBytes
			m.WireBytes += s.WireBytes
			m.SentBytes += s.SentBytes
			m.P50, m.P90, m.P99, m.P999, m.Max = max(m.P50, s.P50), max(m.P90, s.P90), max(m.P99, s.P99), max(m.P999, s.P999), max(m.Max, s.Max)
			m.LagP99 = max(m.LagP99, s.LagP99)
			m.InFlight += s.InFlight
			m.ConnsOpen += s.ConnsOpen
			m.CPU += s.CPU
			m.TargetRSS = max(m.TargetRSS, s.TargetRSS)
			m.TargetCPU = max(m.TargetCPU, s.TargetCPU)
		}
	}
	// Drop seconds no result covered (a gap between far-apart starts).
	kept := out[:0]
	for _, s := range out {
		if s.Span > 0 {
			kept = append(kept, s)
		}
	}
	if kept == nil {
		kept = []stats.Second{}
	}
	return kept, spread
}

// mergeSteps merges the per-step results of scenario runs, step by step
// (matched by name).
func mergeSteps(out *result.Result, results []*result.Result, start int64, elapsed time.Duration, info *result.Merged) error {
	var names []string
	for _, r := range results {
		for _, s := range r.Hail.Steps {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	totals := make([]*stats.Totals, len(names))
	series := make([][]stats.Second, len(names))
	yields := make([]int64, len(names))
	reasons := make([]map[string]int64, len(names))
	captures, misses := make([]int64, len(names)), make([]int64, len(names))
	checks := make([]map[string]int64, len(names))
	stopped := make([]string, len(names))
	for i, n := range names {
		totals[i] = stats.NewTotals()
		var parts []*result.Result
		for _, r := range results {
			for k := range r.Hail.Steps {
				s := &r.Hail.Steps[k]
				if s.Name != n {
					continue
				}
				t, err := stepTotals(s)
				if err != nil {
					return err
				}
				totals[i].Add(t)
				yields[i] += s.Yields
				captures[i] += s.Captures
				misses[i] += s.CaptureMisses
				reasons[i] = addCounts(reasons[i], s.YieldReasons)
				checks[i] = addCounts(checks[i], s.CheckFailures)
				if stopped[i] == "" {
					stopped[i] = s.Stopped // each shard's feed is its own; the first stop says which
				}
				parts = append(parts, &result.Result{Hail: result.HailSection{Start: r.Hail.Start, Series: s.Series}})
			}
		}
		series[i], _ = alignSeries(parts, start, func(r *result.Result) []stats.Second { return r.Hail.Series })
	}
	out.Hail.Steps = BuildSteps(names, totals, series, elapsed)
	for i := range out.Hail.Steps {
		s := &out.Hail.Steps[i]
		s.Yields, s.YieldReasons, s.Captures, s.CaptureMisses = yields[i], reasons[i], captures[i], misses[i]
		s.CheckFailures, s.Stopped = checks[i], stopped[i]
		if s.LLM != nil {
			for _, r := range results {
				for k := range r.Hail.Steps {
					if f := r.Hail.Steps[k].LLM; f != nil && r.Hail.Steps[k].Name == s.Name {
						s.LLM.KeepAsked(f)
					}
				}
			}
		}
	}
	failed, checked := 0, 0
	for _, r := range results {
		checked += len(r.Hail.Thresholds)
		failed += ThresholdsFailed(r)
		if r.Hail.Scenario != nil && out.Hail.Scenario == nil {
			sc := *r.Hail.Scenario
			sc.Pools, sc.Feeds = nil, nil
			out.Hail.Scenario = &sc
		}
	}
	if checked > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("scenario thresholds were checked by each result on its own share: %d of %d failed; they are not re-checked on the merged totals", failed, checked))
	}
	return nil
}

// addCounts adds the counts of src into dst (made when needed).
func addCounts(dst, src map[string]int64) map[string]int64 {
	for k, n := range src {
		if dst == nil {
			dst = map[string]int64{}
		}
		dst[k] += n
	}
	return dst
}

// mergeTarget keeps the monitored target's numbers: when several results
// sampled a target, the one with the highest peak RSS is kept.
func mergeTarget(results []*result.Result, info *result.Merged) *result.TargetUse {
	var best *result.TargetUse
	n := 0
	for _, r := range results {
		if t := r.Hail.Target; t != nil {
			n++
			if best == nil || t.PeakRSSBytes > best.PeakRSSBytes {
				c := *t
				best = &c
			}
		}
	}
	if n > 1 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d results sampled a target process; the one with the highest peak RSS is kept, and per-second target values are the highest", n))
	}
	return best
}

// writeResultsText adds the shard, merge and target lines to the text report.
func writeResultsText(b *strings.Builder, r *result.Result) {
	h := r.Hail
	if s := h.Shard; s != nil {
		fmt.Fprintf(b, "  Shard:\t%d of %d (from 0): %d requests, rate %g, %d connections", s.Index, s.Count, s.Requests, s.Rate, s.Connections)
		if s.StartAt != "" {
			fmt.Fprintf(b, ", started at %s", s.StartAt)
		}
		fmt.Fprintln(b)
	}
	if m := h.Merged; m != nil {
		fmt.Fprintf(b, "  Merged:\t%d results", m.Results)
		if len(m.Shards) > 0 {
			fmt.Fprintf(b, " (shards %v)", m.Shards)
		}
		fmt.Fprintln(b)
		for _, n := range m.Notes {
			fmt.Fprintf(b, "    - %s\n", n)
		}
		for _, line := range perShardLines(m) {
			fmt.Fprintf(b, "    %s\n", line)
		}
		if len(m.Incomplete) > 0 {
			fmt.Fprintf(b, "  INCOMPLETE:\tthe merged result is not the whole run as asked:\n")
			for _, n := range m.Incomplete {
				fmt.Fprintf(b, "    - %s\n", n)
			}
		}
	}
	if t := h.Target; t != nil {
		fmt.Fprintf(b, "\nTarget process (pid %d, %s):\n", t.PID, t.Command)
		fmt.Fprintf(b, "  RSS:\tpeak %s, mean %s (%s at the start, %s at the end)\n", bytesHuman(float64(t.PeakRSSBytes)),
			bytesHuman(float64(t.MeanRSSBytes)), bytesHuman(float64(t.StartRSSBytes)), bytesHuman(float64(t.EndRSSBytes)))
		fmt.Fprintf(b, "  CPU:\t%.2f s, %.2f cores mean, %.2f cores peak", t.CPU.Seconds(), t.MeanCPU, t.PeakCPU)
		if h.Counts.Requests > 0 {
			fmt.Fprintf(b, ", %.2f µs/request", t.CPU.Seconds()*1e6/float64(h.Counts.Requests))
		}
		fmt.Fprintln(b)
		writeTargetProcesses(b, t) // target.go
		if t.Exited {
			fmt.Fprintf(b, "  Note:\tthe process exited during the run\n")
		}
	}
}

// mergeGRPC adds the results' gRPC call and message counts.
func mergeGRPC(results []*result.Result) *result.GRPCStats {
	var out *result.GRPCStats
	for _, r := range results {
		if g := r.Hail.GRPC; g != nil {
			if out == nil {
				out = &result.GRPCStats{Call: g.Call, Kind: g.Kind}
			}
			out.Calls += g.Calls
			out.Retries += g.Retries
			out.MessagesSent += g.MessagesSent
			out.MessagesReceived += g.MessagesReceived
		}
	}
	return out
}
