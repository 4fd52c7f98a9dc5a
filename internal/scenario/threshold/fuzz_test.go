package threshold

import (
	"math"
	"strings"
	"testing"
)

// FuzzParse: any expression either parses into a threshold with a finite
// limit, or is refused with a message that quotes it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"p99 < 12ms", "error_rate < 0.1%", "rps > 4000", "p99.9_ok<=1.5s", "max_ok > 1", "p101 < 1ms", "< 1",
		"p99_ttft < 500ms", "mean_tpot_ok < 1s", "p99.9_ttft_actual<=2s", "goodput > 99%", "output_tokens_per_sec > 10", "rps_itl < 1ms", "_e2e < 1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		th, err := Parse(expr)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "threshold ") {
				t.Fatalf("%q: error without the expression: %v", expr, err)
			}
			return
		}
		if math.IsNaN(th.limit) || math.IsInf(th.limit, 0) || th.metric == "" {
			t.Fatalf("%q: parsed into %+v", expr, th)
		}
	})
}

// FuzzParseChange: any --fail-on rule either parses into a finite change
// of a known metric, or is refused with a message that quotes it.
func FuzzParseChange(f *testing.F) {
	for _, s := range []string{"p99>+10%", "rps<-5%", "stage=2:p99_ok>=+2ms", "step=q:error_rate>+0.5pp", "rss>+20MiB", "target_cpu>0.5", "x=1:p99>1%", "p99>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := ParseChange(expr)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--fail-on ") {
				t.Fatalf("%q: error without the rule: %v", expr, err)
			}
			return
		}
		if math.IsNaN(c.limit) || math.IsInf(c.limit, 0) || c.metric == "" || c.op == "" {
			t.Fatalf("%q: parsed into %+v", expr, c)
		}
	})
}
