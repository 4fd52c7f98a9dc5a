package threshold

import (
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		metric string
		q      float64
		op     string
		limit  float64
	}{
		{"p99 < 12ms", "p", 99, "<", 0.012},
		{"p99.9<=1.5s", "p", 99.9, "<=", 1.5},
		{"p50 > 800us", "p", 50, ">", 0.0008},
		{"error_rate < 0.1%", "error_rate", 0, "<", 0.001},
		{"error_rate <= 0.02", "error_rate", 0, "<=", 0.02},
		{"rps > 4000", "rps", 0, ">", 4000},
		{"max < 1s", "max", 0, "<", 1},
		{"avg < 2ms", "mean", 0, "<", 0.002},
		{"errors < 5", "errors", 0, "<", 5},
		{"p99_ttft < 500ms", "p_ttft", 99, "<", 0.5},
		{"p90_ttft_actual<=1s", "p_ttft_actual", 90, "<=", 1},
		{"mean_tpot < 40ms", "mean_tpot", 0, "<", 0.04},
		{"max_itl < 1s", "max_itl", 0, "<", 1},
		{"p99.9_e2e < 10s", "p_e2e", 99.9, "<", 10},
		{"goodput >= 99%", "goodput", 0, ">=", 0.99},
		{"goodput > 0.5", "goodput", 0, ">", 0.5},
		{"output_tokens_per_sec > 5000", "output_tokens_per_sec", 0, ">", 5000},
	} {
		th, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		if th.metric != tc.metric || th.q != tc.q || th.op != tc.op || abs(th.limit-tc.limit) > 1e-12 {
			t.Errorf("%q: %s %g %s %g", tc.expr, th.metric, th.q, th.op, th.limit)
		}
	}
	for _, tc := range []struct{ expr, want string }{
		{"p99 12ms", "no comparison operator"},
		{"p99 < 12", "expected a duration"},
		{"p101 < 1ms", "p0 to p100"},
		{"latency < 1ms", `unknown metric "latency"`},
		{"error_rate < 5 percent", "percentage"},
		{"error_rate < 150%", "at most 100%"},
		{"rps > fast", "expected a number"},
		{"< 1ms", "expected a metric"},
		{"p99 == 1ms", "operators"},
		{"p99 <", "expected a value"},
		{"p99_ttft < 5", "expected a duration"},
		{"rps_ttft < 1s", "_ttft goes with a latency"},
		{"p99_ok_ttft < 1s", `unknown metric`},
		{"goodput > 120%", "at most 100%"},
		{"p99_tokens < 1s", `unknown metric "p99_tokens"`},
	} {
		if _, err := Parse(tc.expr); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to mention %q", tc.expr, err, tc.want)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Thresholds pass and fail both ways against a Result, overall and per step.
func TestEvaluate(t *testing.T) {
	tot := []*stats.Totals{stats.NewTotals(), stats.NewTotals()}
	for i := range 1000 { // step a: 1..1000 µs, all 200
		_ = tot[0].LatencyOK.RecordValue(int64(i+1) * 1000)
		tot[0].Status[200]++
		tot[0].LatencySum += int64(i+1) * 1000
	}
	for i := range 100 { // step b: 10 ms, 5% 500s
		code := 200
		if i < 5 {
			code = 500
		}
		_ = tot[1].LatencyOK.RecordValue(10_000_000)
		tot[1].Status[code]++
		tot[1].LatencySum += 10_000_000
	}
	all := stats.NewTotals()
	all.Add(tot[0])
	all.Add(tot[1])
	res := report.Build(report.Input{Totals: all, Elapsed: 2 * time.Second})
	res.Hail.Steps = report.BuildSteps([]string{"a", "b"}, tot, nil, 2*time.Second)
	var ts []*Threshold
	add := func(expr, step string) {
		th, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		th.Step, th.step = step, map[string]int{"": -1, "a": 0, "b": 1}[step]
		ts = append(ts, th)
	}
	pass := []bool{}
	for _, tc := range []struct {
		expr, step string
		pass       bool
	}{
		{"p50 < 1ms", "a", true}, {"p50 > 1ms", "a", false},
		{"p99 < 2ms", "a", true}, {"p99 < 900us", "a", false},
		{"p99 < 11ms", "", true}, {"p99 < 5ms", "", false},
		{"error_rate < 1%", "a", true}, {"error_rate < 1%", "b", false}, {"error_rate <= 5%", "b", true},
		{"error_rate < 0.5%", "", true}, {"error_rate < 0.4%", "", false},
		{"rps > 500", "", true}, {"rps > 600", "", false},
		{"rps >= 50", "b", true}, {"requests < 1000", "a", false},
		{"max < 10.1ms", "", true}, {"mean < 1ms", "a", true}, {"mean < 500us", "a", false},
		{"errors < 5", "b", false}, {"errors <= 5", "b", true},
	} {
		add(tc.expr, tc.step)
		pass = append(pass, tc.pass)
	}
	res.Hail.Steps = append(res.Hail.Steps, report.BuildSteps([]string{"idle"}, []*stats.Totals{stats.NewTotals()}, nil, 2*time.Second)...)
	for _, tc := range []struct {
		expr string
		pass bool
	}{{"p99 < 1s", false}, {"error_rate < 1%", false}, {"requests < 5", true}, {"errors < 1", true}} {
		add(tc.expr, "idle")
		ts[len(ts)-1].step = 2
		pass = append(pass, tc.pass)
	}
	failed := Evaluate(ts, res)
	want := 0
	for i, th := range res.Hail.Thresholds {
		if th.Pass != pass[i] {
			t.Errorf("%s [%s]: pass %v (measured %s), want %v", th.Expr, th.Step, th.Pass, th.Measured, pass[i])
		}
		if !pass[i] {
			want++
		}
	}
	if failed != want || report.ThresholdsFailed(res) != want {
		t.Errorf("%d failed, want %d", failed, want)
	}
}

// A threshold on a stage judges that stage's figures, its rate per second
// of the stage; one naming a stage the run does not have fails.
func TestEvaluateStage(t *testing.T) {
	fast, slow := stats.NewTotals(), stats.NewTotals()
	for i := range 100 {
		_ = fast.LatencyOK.RecordValue(1_000_000) // 1 ms
		fast.Status[200]++
		fast.LatencySum += 1_000_000
		if i < 50 {
			_ = slow.LatencyOK.RecordValue(50_000_000) // 50 ms
			slow.Status[200]++
			slow.LatencySum += 50_000_000
		}
	}
	all := stats.NewTotals()
	all.Add(fast)
	all.Add(slow)
	res := report.Build(report.Input{Totals: all, Elapsed: 2 * time.Second})
	clock := schedule.NewStageClock([]schedule.Stage{{Duration: time.Second, Target: 100}, {Duration: time.Second, Target: 50, Name: "peak"}}, 0)
	res.Hail.Stages = report.BuildStages(report.StageInput{Clock: clock, Kind: "rate", Totals: []*stats.Totals{fast, slow}, Stopped: 2 * time.Second})
	var ts []*Threshold
	for _, tc := range []struct{ expr, stage string }{
		{"p99 < 2ms", "1"}, {"p99 < 2ms", "peak"}, {"rps >= 100", "1"}, {"rps >= 100", "2"}, {"p99 < 1s", "3"},
	} {
		th, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		idx := map[string]int{"1": 0, "peak": 1, "2": 1, "3": 2}[tc.stage]
		th.OnStage(tc.stage, idx)
		ts = append(ts, th)
	}
	Evaluate(ts, res)
	want := []bool{true, false, true, false, false}
	for i, th := range res.Hail.Thresholds {
		if th.Pass != want[i] || th.Stage == "" {
			t.Errorf("%s (stage %s): pass %v, measured %s; want %v", th.Expr, th.Stage, th.Pass, th.Measured, want[i])
		}
	}
	if m := res.Hail.Thresholds[4].Measured; !strings.Contains(m, "no such stage") {
		t.Errorf("a missing stage measured %q", m)
	}
}

// Thresholds on token streams judge the streams' histograms and counts:
// per step from the Result's hail.steps[].llm, for the run from hail.llm,
// and mid-run from live totals; a scope without a token stream fails.
func TestLLMValues(t *testing.T) {
	st := stats.NewStreams(true)
	st.Completed, st.Streams = 4, 4
	tk := st.Tokens
	for _, ms := range []int64{100, 200, 300, 400} {
		tk.TTFT.RecordValue(ms * 1e6)
		tk.TTFTSent.RecordValue(ms * 1e6 / 2)
		tk.TPOT.RecordValue(20e6)
	}
	tk.Good, tk.OutSum = 3, 1000
	m := report.Measure{Stream: st, Elapsed: 10 * time.Second, Requests: 4}
	for _, tc := range []struct {
		expr string
		pass bool
	}{
		{"p99_ttft < 350ms", false}, {"p99_ttft < 450ms", true}, {"p99_ttft_actual < 250ms", true},
		{"max_tpot <= 21ms", true}, {"goodput >= 75%", true}, {"goodput > 75%", false},
		{"output_tokens_per_sec > 99", true}, {"output_tokens_per_sec > 101", false}, {"p99_itl < 1s", true},
	} {
		th, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if v := m.Value(th.metric, th.q); th.pass(v) != tc.pass {
			t.Errorf("%s: measured %s, pass %v; want %v", tc.expr, th.format(v), !tc.pass, tc.pass)
		}
	}
	th, _ := Parse("p99_ttft < 1s")
	if why := th.noData(&report.Measure{}); why != "no llm stream" {
		t.Errorf("a scope without streams: %q", why)
	}
}
