package report

import (
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"strings"
	"time"
)

// The outcomes of a shard in a merge (ShardOutcome.Outcome).
const (
	// OutcomeComplete: the shard's result is whole, started on time.
	OutcomeComplete = "complete"
	// OutcomeLate: whole, but started more than LateStart after the others.
	OutcomeLate = "late"
	// OutcomeInterrupted: stopped before its share was sent (deleted,
	// evicted, a signal); what it did is merged.
	OutcomeInterrupted = "interrupted"
	// OutcomeFailed: the shard failed; its Reason says how. Merged when it
	// wrote a result before failing.
	OutcomeFailed = "failed"
	// OutcomeMissing: no result and no reason (hail merge --partial).
	OutcomeMissing = "missing"
)

// OutcomeLine is o in one line, among count shards: "shard 1/3:
// interrupted after 4.1s, 5123 requests merged (pod deleted)".
func OutcomeLine(o result.ShardOutcome, count int) string {
	b := &strings.Builder{}
	fmt.Fprintf(b, "shard %d/%d: %s", o.Index, count, o.Outcome)
	if o.Outcome == OutcomeInterrupted {
		fmt.Fprintf(b, " after %s", o.Duration.Round(time.Millisecond))
	}
	if o.Merged {
		fmt.Fprintf(b, ", %d requests merged", o.Requests)
	} else {
		b.WriteString(", no result")
	}
	if o.Reason != "" {
		fmt.Fprintf(b, " (%s)", o.Reason)
	}
	return b.String()
}

// shardOutcomes says what the merge got from each shard of a sharded run
// (nil when the results are not shards).
func shardOutcomes(results []*result.Result, opt MergeOptions) []result.ShardOutcome {
	if len(results) == 0 || results[0].Hail.Shard == nil {
		return nil
	}
	n := results[0].Hail.Shard.Count
	out := make([]result.ShardOutcome, n)
	for k := range out {
		out[k] = result.ShardOutcome{Index: k, Outcome: OutcomeMissing}
		if why, failed := opt.Failed[k]; failed {
			out[k].Outcome, out[k].Reason = OutcomeFailed, why
		}
	}
	for _, r := range results {
		s := r.Hail.Shard
		if s == nil || s.Index < 0 || s.Index >= n {
			continue
		}
		o := &out[s.Index]
		o.Merged, o.Requests, o.Duration = true, r.Hail.Counts.Requests, r.Summary.Total
		switch {
		case r.Hail.Interrupted:
			o.Outcome = OutcomeInterrupted
		case o.Outcome == OutcomeFailed: // failed after writing its result
		case s.Late > LateStart:
			o.Outcome = OutcomeLate
			o.Reason = fmt.Sprintf("started %s after --start-at", s.Late.Round(time.Millisecond))
		default:
			o.Outcome = OutcomeComplete
		}
	}
	return out
}

// perShardLines are the lines reports show of m.PerShard: every shard's
// when there are few, else the ones that are not complete and a count of
// the others.
func perShardLines(m *result.Merged) []string {
	n := len(m.PerShard)
	var lines []string
	complete := 0
	for _, o := range m.PerShard {
		if o.Outcome == OutcomeComplete && n > maxShardLines {
			complete++
			continue
		}
		lines = append(lines, OutcomeLine(o, n))
	}
	if complete > 0 {
		lines = append(lines, fmt.Sprintf("the other %d shards: complete", complete))
	}
	return lines
}

// maxShardLines is how many shards reports list one by one.
const maxShardLines = 16
