package report

import (
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"strings"
)

// mergeVerdicts makes the merged verdict out of the results' own verdicts,
// never out of the merged totals: each result judged its own generator on
// its own machine, and summed CPU over shared cores, or lateness added over
// shards, would say what no shard saw (every shard "none", the merge
// "generator"). The merged kind is the worst of the results' kinds —
// generator side (hail's CPU, other processes, late wake-ups) before the
// target before none — so one limited generator makes the whole run
// generator limited, and the first reason names it; the results' reasons
// follow, each labeled by its shard (or file). Streams were read late
// (ReadLate, and hail.llm's ITL affected) when any result read its own late:
// that result's gaps carry its delay, and so do the merged histograms.
func mergeVerdicts(out *result.Result, results []*result.Result, name func(int) string) {
	rank := map[string]int{result.BottleneckNone: 0, result.BottleneckTarget: 1, result.BottleneckWakeup: 2, result.BottleneckOthers: 3, result.BottleneckGenerator: 4}
	kinds := make([]string, len(results))
	worst := result.BottleneckNone
	for i, r := range results {
		k := r.Hail.Verdict.Bottleneck
		switch {
		case k == "" && r.Hail.Verdict.GeneratorLimited: // a result from before bottleneck kinds
			k = result.BottleneckGenerator
		case k == "":
			k = result.BottleneckNone
		}
		if _, known := rank[k]; !known {
			k = result.BottleneckGenerator // a kind this version does not know: not vouched for
		}
		kinds[i] = k
		if rank[k] > rank[worst] {
			worst = k
		}
	}
	var same, others []string
	for i, r := range results {
		if kinds[i] == worst {
			same = append(same, resultLabel(r, name, i))
		} else {
			others = append(others, fmt.Sprintf("%s %s", resultLabel(r, name, i), kinds[i]))
		}
	}
	var head string
	switch {
	case worst == result.BottleneckNone:
		head = fmt.Sprintf("every result's verdict is none (%s): each generator sent on time", listLabels(same))
	case len(others) == 0:
		head = fmt.Sprintf("every result's verdict is %s (%s)", worst, listLabels(same))
	default:
		head = fmt.Sprintf("%s: %s; the others: %s", worst, listLabels(same), strings.Join(capList(others), ", "))
	}
	v := result.Verdict{Bottleneck: worst, GeneratorLimited: GeneratorSide(worst), Reasons: []string{head}}
	shown := 0
	for i, r := range results {
		// The worst kind's reasons first-hand; a none's only when all are.
		if kinds[i] != worst || shown >= maxVerdictShards {
			continue
		}
		shown++
		for _, why := range r.Hail.Verdict.Reasons {
			v.Reasons = append(v.Reasons, resultLabel(r, name, i)+": "+why)
		}
	}
	if len(same) > shown {
		v.Reasons = append(v.Reasons, fmt.Sprintf("(the reasons of %d more results of kind %s are in their own files)", len(same)-shown, worst))
	}
	for _, r := range results {
		v.ReadLate = v.ReadLate || r.Hail.Verdict.ReadLate
	}
	if out.Hail.LLM != nil {
		out.Hail.LLM.ITLAffected = v.ReadLate
	}
	out.Hail.Verdict = v
}

// maxVerdictShards bounds how many results' reasons a merged verdict
// repeats (a 100-shard run would otherwise say everything 100 times).
const maxVerdictShards = 8

// listLabels joins labels, at most maxVerdictShards of them.
func listLabels(labels []string) string {
	return strings.Join(capList(labels), ", ")
}

func capList(s []string) []string {
	if len(s) <= maxVerdictShards {
		return s
	}
	return append(s[:maxVerdictShards:maxVerdictShards], fmt.Sprintf("%d more", len(s)-maxVerdictShards))
}
