package report

import (
	"github.com/hail-loadgen/hail/result"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The merged verdict combines the shards' verdicts and never contradicts
// them: shards that all say none merge to none even when their summed CPU
// over one machine's cores would look saturated; one generator-side shard
// makes the run generator-side, named first; the target beats none.
func TestMergeVerdictFromShards(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	none := result.Verdict{Bottleneck: result.BottleneckNone, Reasons: []string{"hail sent on time: own lateness p99 12µs"}}
	others := result.Verdict{Bottleneck: result.BottleneckOthers, GeneratorLimited: true, Reasons: []string{"other processes used 64% of hail's 2 CPU(s)"}}
	target := result.Verdict{Bottleneck: result.BottleneckTarget, Reasons: []string{"120 of 3000 requests (4%) waited for a free connection"}}
	for _, tc := range []struct {
		name     string
		verdicts []result.Verdict
		kind     string
		head     string
		reasons  []string
	}{
		{"all none", []result.Verdict{none, none, none}, result.BottleneckNone, "every result's verdict is none (shard 0/3, shard 1/3, shard 2/3): each generator sent on time",
			[]string{"shard 0/3: hail sent on time", "shard 2/3: hail sent on time"}},
		{"one other-processes", []result.Verdict{none, others, target}, result.BottleneckOthers, "other-processes: shard 1/3; the others: shard 0/3 none, shard 2/3 target",
			[]string{"shard 1/3: other processes used 64%"}},
		{"target and none", []result.Verdict{target, none, none}, result.BottleneckTarget, "target: shard 0/3; the others: shard 1/3 none, shard 2/3 none",
			[]string{"shard 0/3: 120 of 3000 requests"}},
		{"before kinds", []result.Verdict{{GeneratorLimited: true, Reasons: []string{"old"}}, none, none}, result.BottleneckGenerator, "generator: shard 0/3;",
			[]string{"shard 0/3: old"}},
	} {
		var rs []*result.Result
		for i, v := range tc.verdicts {
			r := shardResult(t, randomTotals(rng, 100), i, 3, 0, 1)
			r.Hail.Verdict = v
			// Three shards on one 2-CPU machine, each at 80% of its core:
			// summed, 240% of 2 cores, which the merged totals would call
			// a saturated generator.
			r.Hail.Generator.Machine, r.Hail.Generator.MachineCPUs, r.Hail.Generator.Cores = "boot-1", 2, 1
			r.Hail.Generator.User, r.Hail.Generator.Utilization = 800*time.Millisecond, 0.8
			rs = append(rs, r)
		}
		m, err := Merge(rs, nil)
		if err != nil {
			t.Fatal(err)
		}
		v := m.Hail.Verdict
		if v.Bottleneck != tc.kind || v.GeneratorLimited != GeneratorSide(tc.kind) || len(v.Reasons) == 0 || !strings.HasPrefix(v.Reasons[0], tc.head) {
			t.Errorf("%s: verdict %s (generator limited %v), %q; want %s, %q", tc.name, v.Bottleneck, v.GeneratorLimited, v.Reasons, tc.kind, tc.head)
			continue
		}
		all := strings.Join(v.Reasons, "\n")
		for _, want := range tc.reasons {
			if !strings.Contains(all, want) {
				t.Errorf("%s: reasons lack %q:\n%s", tc.name, want, all)
			}
		}
		if tc.kind == result.BottleneckNone && strings.Contains(all, "saturated") {
			t.Errorf("%s: the merged verdict re-derived a saturated generator:\n%s", tc.name, all)
		}
	}
}

// A hundred shards: the verdict lists a few and counts the rest.
func TestMergeVerdictManyShards(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var rs []*result.Result
	for i := range 20 {
		r := shardResult(t, randomTotals(rng, 20), i, 20, 0, 1)
		r.Hail.Verdict = result.Verdict{Bottleneck: result.BottleneckNone, Reasons: []string{"on time"}}
		rs = append(rs, r)
	}
	m, err := Merge(rs, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Hail.Verdict
	if len(v.Reasons) != 1+maxVerdictShards+1 || !strings.Contains(v.Reasons[0], "12 more") || !strings.Contains(v.Reasons[len(v.Reasons)-1], "12 more results") {
		t.Errorf("reasons %q", v.Reasons)
	}
}
