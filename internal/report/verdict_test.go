package report

import (
	"strings"
	"testing"
	"time"

	"hail/internal/stats"
)

// The verdict names why the generator was the limit: late sends while idle are the operating
// system's wake-ups, late sends while busy are load; on-time sends give no verdict.
func TestVerdictLag(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lagNs int64
		cpu   time.Duration // over 10 s on 1 core
		want  []string      // in the one reason; nil: not generator-limited
	}{
		{"on time", 200_000, time.Second, nil},
		{"late and idle", 3_000_000, time.Second, []string{"exceeds 1ms", "10% busy", "the OS waking it late"}},
		{"late and busy", 3_000_000, 7 * time.Second, []string{"exceeds 1ms", "70% busy", "more cores"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tot := stats.NewTotals()
			for range 1000 {
				_ = tot.Lag.RecordValue(tc.lagNs)
				_ = tot.LatencyOK.RecordValue(1e6)
			}
			tot.Status[200] = 1000
			r := Build(Input{Totals: tot, Elapsed: 10 * time.Second, Cores: 1, Usage: stats.Usage{User: tc.cpu},
				Open: true, Rate: 100, Version: "test"})
			v := r.Hail.Verdict
			if tc.want == nil {
				if v.GeneratorLimited {
					t.Fatalf("limited: %q", v.Reasons)
				}
				return
			}
			if !v.GeneratorLimited || len(v.Reasons) != 1 {
				t.Fatalf("verdict %+v, want one reason", v)
			}
			for _, w := range tc.want {
				if !strings.Contains(v.Reasons[0], w) {
					t.Errorf("reason %q lacks %q", v.Reasons[0], w)
				}
			}
		})
	}
}
