package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// SetOriginTotals sets o's figures from its totals over a run of elapsed: its
// counts, rates, latency (of the responses and of every sent request),
// status codes, errors and histograms.
func SetOriginTotals(o *result.OriginResult, t *stats.Totals, elapsed time.Duration) {
	step := BuildSteps([]string{o.Name}, []*stats.Totals{t}, nil, elapsed)[0]
	o.Counts.StepCounts, o.RPS, o.ErrorRate, o.Latency, o.AllSent = step.Counts, step.RPS, step.ErrorRate, step.Latency, step.AllSent
	o.StatusCodeDistribution, o.ErrorDistribution, o.Histograms = step.StatusCodeDistribution, step.ErrorDistribution, step.Histograms
	o.Rates = rates(t, elapsed.Seconds())
}

// writeOrigins writes the per-origin table of a run that sent to several
// servers, and each origin's verdict.
func writeOrigins(b *strings.Builder, r *result.Result, d func(float64) string, c colorer) {
	os := r.Hail.Origins
	if len(os) == 0 {
		return
	}
	w := len("origin")
	for _, o := range os {
		w = max(w, len(o.Name))
	}
	fmt.Fprintf(b, "Origins (one connection pool each, out of the run's connections; conns: the most it held, ×streams on each):\n")
	fmt.Fprintf(b, "  %-*s %-8s %-6s %6s %10s %6s %10s %10s %8s %8s %14s %14s %14s %14s  %s\n", w, "origin", "protocol", "engine", "conns",
		"requests", "share", "req/s", "ok/s", "failed", "err%", "p50", "p99", "max", "all-sent p99", "status codes")
	na := func(v float64, none bool) string {
		if none {
			return "n/a"
		}
		return d(v)
	}
	for _, o := range os {
		none := o.Counts.Responses == 0
		conns := fmt.Sprint(o.Connections)
		if o.Streams > 1 {
			conns += fmt.Sprintf("×%d", o.Streams)
		}
		fmt.Fprintf(b, "  %-*s %-8s %-6s %6s %10d %5.1f%% %10.1f %10.1f %8d %7.2f%% %14s %14s %14s %14s  %s\n", w, o.Name, o.Protocol, o.Engine,
			conns, o.Counts.Requests, 100*o.Share, o.Rates.RequestsPerSec, o.Rates.SuccessfulPerSec, o.Counts.Failed, 100*o.ErrorRate,
			na(o.Latency.P50.Seconds(), none), na(o.Latency.P99.Seconds(), none), na(o.Latency.Max.Seconds(), none), na(o.AllSent.P99.Seconds(), o.AllSent.Requests == 0),
			codeList(o.StatusCodeDistribution, c))
	}
	fmt.Fprintf(b, "  (req/s: every request that ended, ok/s: successful responses, per second of the run; p50 … max: responses; all-sent p99: every sent request)\n")
	for _, o := range os {
		fmt.Fprintf(b, "  %s: %s → %s", o.Name, o.URL, strings.Join(o.Steps, ", "))
		if len(o.ErrorDistribution) > 0 {
			fmt.Fprintf(b, "; errors: %s", countList(o.ErrorDistribution))
		}
		fmt.Fprintln(b)
		line := "bottleneck: " + o.Verdict.Bottleneck
		if len(o.Verdict.Reasons) > 0 {
			line += ": " + o.Verdict.Reasons[0]
		}
		if o.Verdict.GeneratorLimited {
			line = c.warn(line)
		}
		fmt.Fprintf(b, "    %s\n", line)
	}
}

// mergeOrigins merges the per-origin results of runs that sent to several
// servers (shards of one scenario), origin by origin (matched by name):
// counts and histograms add exactly, connections add up, and each origin's
// verdict is the worst of its inputs', their reasons labeled.
func mergeOrigins(out *result.Result, results []*result.Result, elapsed time.Duration, name func(int) string) error {
	var names []string
	for _, r := range results {
		for _, o := range r.Hail.Origins {
			if !slices.Contains(names, o.Name) {
				names = append(names, o.Name)
			}
		}
	}
	rank := map[string]int{result.BottleneckNone: 0, "": 0, result.BottleneckTarget: 1, result.BottleneckWakeup: 2, result.BottleneckOthers: 3, result.BottleneckGenerator: 4}
	var all int64
	for _, n := range names {
		m := result.OriginResult{Name: n}
		t := stats.NewTotals()
		for i, r := range results {
			for _, o := range r.Hail.Origins {
				if o.Name != n {
					continue
				}
				ot, err := stepTotals(&result.StepResult{Name: o.Name, Counts: o.Counts.StepCounts, Histograms: o.Histograms,
					StatusCodeDistribution: o.StatusCodeDistribution, ErrorDistribution: o.ErrorDistribution})
				if err != nil {
					return err
				}
				t.Add(ot)
				m.URL, m.Protocol, m.Engine, m.Steps = o.URL, o.Protocol, o.Engine, o.Steps
				m.Connections += o.Connections
				m.Connects += o.Connects
				m.Streams = max(m.Streams, o.Streams)
				m.Counts.Intended += o.Counts.Intended
				m.Counts.Unsent += o.Counts.Unsent
				if o.GRPC != nil {
					if m.GRPC == nil {
						m.GRPC = &result.GRPCStats{}
					}
					m.GRPC.Calls += o.GRPC.Calls
					m.GRPC.Retries += o.GRPC.Retries
					m.GRPC.MessagesSent += o.GRPC.MessagesSent
					m.GRPC.MessagesReceived += o.GRPC.MessagesReceived
				}
				if rank[o.Verdict.Bottleneck] >= rank[m.Verdict.Bottleneck] {
					if rank[o.Verdict.Bottleneck] > rank[m.Verdict.Bottleneck] {
						m.Verdict.Reasons = nil
					}
					m.Verdict.Bottleneck, m.Verdict.GeneratorLimited = o.Verdict.Bottleneck, o.Verdict.GeneratorLimited
					for _, why := range o.Verdict.Reasons {
						m.Verdict.Reasons = append(m.Verdict.Reasons, resultLabel(r, name, i)+": "+why)
					}
				}
			}
		}
		SetOriginTotals(&m, t, elapsed)
		all += m.Counts.Requests
		out.Hail.Origins = append(out.Hail.Origins, m)
	}
	for i := range out.Hail.Origins {
		if all > 0 {
			out.Hail.Origins[i].Share = float64(out.Hail.Origins[i].Counts.Requests) / float64(all)
		}
	}
	return nil
}
