package threshold

import (
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

func TestParseChange(t *testing.T) {
	for _, tc := range []struct {
		expr        string
		metric      string
		q           float64
		op          string
		limit       float64
		relative    bool
		step, stage string
	}{
		{"p99>+10%", "p", 99, ">", 10, true, "", ""},
		{"rps<-5%", "rps", 0, "<", -5, true, "", ""},
		{" p99_ok >= +2ms", "p_ok", 99, ">=", 0.002, false, "", ""},
		{"error_rate>+0.5pp", "error_rate", 0, ">", 0.005, false, "", ""},
		{"rss>+20MiB", "rss", 0, ">", 20 << 20, false, "", ""},
		{"stage=2:p99.9>10%", "p", 99.9, ">", 10, true, "", "2"},
		{"step=query:rps<-100", "rps", 0, "<", -100, false, "query", ""},
		{"target_cpu>+0.5", "target_cpu", 0, ">", 0.5, false, "", ""},
	} {
		c, err := ParseChange(tc.expr)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		if c.metric != tc.metric || c.q != tc.q || c.op != tc.op || abs(c.limit-tc.limit) > 1e-12 || c.relative != tc.relative || c.Step != tc.step || c.Stage != tc.stage {
			t.Errorf("%q: %+v", tc.expr, c)
		}
	}
	for _, tc := range []struct{ expr, want string }{
		{"p99 10%", "no comparison operator"},
		{"p99>+10", "is a latency: expected a change in percent (+10%) or a duration (+2ms)"},
		{"error_rate>+1", "percentage points (+0.5pp)"},
		{"latency>+1%", `unknown metric "latency"`},
		{"rps<fast", "expected a signed change"},
		{"node=1:p99>+1%", `unknown scope "node"`},
		{"stage=:p99>+1%", "stage= names nothing"},
		{"p99>", "expected a change after >"},
	} {
		if _, err := ParseChange(tc.expr); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to mention %q", tc.expr, err, tc.want)
		}
	}
	cs, err := ParseChanges([]string{"p99>+10%,rps<-5%", "rss>+20%"})
	if err != nil || len(cs) != 3 || cs[2].Expr != "rss>+20%" {
		t.Errorf("ParseChanges: %v %v", cs, err)
	}
}

// resultOf is a run of 1000 responses near lat over 1 s, with one stage
// (the same requests) and a target of rss bytes.
func resultOf(lat time.Duration, rss int64) *result.Result {
	tot := stats.NewTotals()
	for i := range 1000 {
		v := int64(lat) + int64(i%10)*int64(lat)/1000
		_ = tot.LatencyOK.RecordValue(v)
		tot.LatencySum += v
		tot.Status[200]++
	}
	r := report.Build(report.Input{Totals: tot, Elapsed: time.Second, Target: &result.TargetUse{PeakRSSBytes: rss}})
	clock := schedule.NewStageClock([]schedule.Stage{{Duration: time.Second, Target: 10, Name: "peak"}}, 0)
	r.Hail.Stages = report.BuildStages(report.StageInput{Clock: clock, Kind: "connections", Totals: []*stats.Totals{tot}, Stopped: time.Second})
	return r
}

// A rule fails a side when its change is the regression named and
// outside the runs' spread; inside it, it is noise; a rule the change does
// not meet passes; one run per side is judged on the raw change only when
// asked; a side without the metric fails.
func TestJudgeChanges(t *testing.T) {
	ms := time.Millisecond
	base := []*result.Result{resultOf(10*ms, 100), resultOf(11*ms, 100), resultOf(12*ms, 100)}
	slower := []*result.Result{resultOf(15*ms, 100), resultOf(16*ms, 100)}
	overlap := []*result.Result{resultOf(11500*time.Microsecond, 100), resultOf(14*ms, 100)}
	rules, err := ParseChanges([]string{"p99>+10%,stage=peak:p99>+10%,rss>+50%"})
	if err != nil {
		t.Fatal(err)
	}
	checks := Judge(rules, [][]*result.Result{base, slower, overlap}, []string{"A", "B", "C"}, 0, false)
	if len(checks) != 6 {
		t.Fatalf("%d checks, want 3 rules × 2 sides", len(checks))
	}
	want := []struct {
		fail bool
		why  string
	}{
		{true, "outside the runs' spread"}, {false, "noise"}, // p99: B is slower beyond the spread, C overlaps it
		{true, "outside"}, {false, "noise"}, // the same for the stage
		{false, "not the regression"}, {false, "not the regression"}, // rss did not grow
	}
	for i, k := range checks {
		if k.Fail != want[i].fail || !strings.Contains(k.Why, want[i].why) {
			t.Errorf("%s for %s: fail %v, %s; %s", k.Rule, k.Side, k.Fail, k.Measured, k.Why)
		}
	}
	if !strings.Contains(checks[0].Measured, "p99 11.10ms → 15.64ms (+40.9%)") {
		t.Errorf("measured %q", checks[0].Measured)
	}
	// One run per side: only on the raw change, when asked.
	one := [][]*result.Result{{resultOf(10*ms, 100)}, {resultOf(20*ms, 100)}}
	if k := Judge(rules[:1], one, []string{"A", "B"}, 0, false)[0]; k.Fail || !strings.Contains(k.Why, "one run per side") {
		t.Errorf("not raw: %+v", k)
	}
	if k := Judge(rules[:1], one, []string{"A", "B"}, 0, true)[0]; !k.Fail {
		t.Errorf("raw: %+v", k)
	}
	// A side without the metric: a gate over nothing does not pass.
	noTarget := resultOf(10*ms, 100)
	noTarget.Hail.Target = nil
	if k := Judge(rules[2:], [][]*result.Result{base, {noTarget}}, []string{"A", "B"}, 0, false)[0]; !k.Fail || !strings.Contains(k.Why, "nothing to measure in B") {
		t.Errorf("no target: %+v", k)
	}
}

func TestParseChangeTooLarge(t *testing.T) {
	if _, err := ParseChange("rss>+1e308GiB"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("error %v", err)
	}
}
