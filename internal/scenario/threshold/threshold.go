// Package threshold judges a run by a scenario's pass/fail expressions
// (p99 < 12ms, error_rate < 0.1%, rps > 4000), over the whole run, one
// step or one stage: when the run has ended (Evaluate), and while it runs
// for those that may stop it (AbortCheck, abort_on_fail).
package threshold

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// Threshold is a pass/fail check such as "p99 < 12ms", "error_rate <
// 0.1%" or "rps > 4000", over the whole run, one step or one stage of a
// ramp (its figures, its warmup left out: rps is per second of it).
//
// Metrics: pN (a latency percentile: p50, p90, p99, p99.9, any N in
// [0, 100]), min, max, mean (avg), compared with durations (12ms, 1.5s,
// 800us): they judge every sent request, a failed one (a timeout) at its
// elapsed time; with _ok (p99_ok, max_ok, …) the responses only.
// error_rate, compared with a percentage (0.1%) or a fraction (0.001); rps
// (requests per second); errors and requests (counts). Operators: < <= >
// >=.
type Threshold struct {
	Expr        string // the expression as written
	Step        string // the step it judges; "" for the whole run
	step        int    // index, -1 for the whole run
	Stage       string // the stage it judges, by number (from 1) or name; "" for none
	stage       int    // index, -1 for none
	metric      string // "p", "min", "max", "mean" (each with "_ok": responses only), "rps", "error_rate", "errors", "requests"
	q           float64
	op          string
	limit       float64       // in the metric's unit (seconds for latencies)
	AbortOnFail bool          // stop the run as soon as it fails (abort_on_fail)
	AbortAfter  time.Duration // how long the run goes before AbortOnFail may stop it
}

// DefaultAbortAfter is how long a run goes before an abort_on_fail
// threshold may stop it (and it needs 100 requests in its scope too).
const DefaultAbortAfter = time.Second

const abortMinRequests = 100

// Parse parses an expression "METRIC OP VALUE".
func Parse(expr string) (*Threshold, error) {
	s := strings.TrimSpace(expr)
	var op string
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return nil, fmt.Errorf("threshold %q: expected METRIC OP VALUE such as \"p99 < 12ms\", found no comparison operator", expr)
	}
	for _, o := range []string{"<=", ">=", "<", ">"} {
		if strings.HasPrefix(s[i:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return nil, fmt.Errorf("threshold %q: expected one of the operators < <= > >=, found %q", expr, s[i:min(len(s), i+2)])
	}
	full := strings.TrimSpace(s[:i])
	val := strings.TrimSpace(s[i+len(op):])
	t := &Threshold{Expr: s, op: op, step: -1, stage: -1, AbortAfter: DefaultAbortAfter}
	var err error
	if t.metric, t.q, err = parseMetric(full, op); err != nil {
		return nil, fmt.Errorf("threshold %q: %v", expr, err)
	}
	name := strings.TrimSuffix(full, "_ok")
	latency := isLatency(t.metric)
	if val == "" {
		return nil, fmt.Errorf("threshold %q: expected a value after %s", expr, op)
	}
	switch {
	case latency:
		d, err := time.ParseDuration(val)
		if err != nil {
			return nil, fmt.Errorf("threshold %q: %s is a latency: expected a duration such as 12ms, 1.5s or 800us, found %q", expr, name, val)
		}
		t.limit = d.Seconds()
	case t.metric == "error_rate" || t.metric == "goodput":
		f, pct := strings.CutSuffix(val, "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("threshold %q: %s is a rate: expected a percentage such as 0.1%% or a fraction such as 0.001, found %q", expr, t.metric, val)
		}
		if pct {
			v /= 100
		}
		if v > 1 {
			return nil, fmt.Errorf("threshold %q: %s is at most 100%%: found %q (write 0.5%% or 0.005)", expr, t.metric, val)
		}
		t.limit = v
	default:
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("threshold %q: %s: expected a number such as 4000, found %q", expr, name, val)
		}
		t.limit = v
	}
	return t, nil
}

// parseMetric reads a threshold's metric name (op follows it, for
// messages): "p" with its percentile, "min", "max", "mean" (each with
// "_ok" for the responses only), "rps", "error_rate", "errors",
// "requests".
func parseMetric(name, op string) (string, float64, error) {
	switch name {
	case "goodput", "output_tokens_per_sec":
		return name, 0, nil
	}
	for _, sfx := range llmTimes {
		if inner, ok := strings.CutSuffix(name, sfx); ok && inner != "" && !strings.HasSuffix(inner, "_ok") {
			m, q, err := parseMetric(inner, op)
			if err != nil {
				return "", 0, err
			}
			if !isLatency(m) {
				return "", 0, fmt.Errorf("metric %q: %s goes with a latency: p99%s, min%s, max%s or mean%s", name, sfx, sfx, sfx, sfx, sfx)
			}
			return m + sfx, q, nil
		}
	}
	base, ok := strings.CutSuffix(name, "_ok") // a latency of the responses only
	metric, q := "", 0.0
	switch {
	case ok && (base == "" || base == "rps" || base == "error_rate" || base == "errors" || base == "requests"):
		return "", 0, fmt.Errorf("_ok (responses only) goes with a latency: p99_ok, min_ok, max_ok or mean_ok")
	case base == "":
		return "", 0, fmt.Errorf("expected a metric before %s (p99, error_rate, rps, …)", op)
	case base == "avg" || base == "mean":
		metric = "mean"
	case base == "min" || base == "max" || base == "rps" || base == "error_rate" || base == "errors" || base == "requests":
		metric = base
	case base[0] == 'p' && !strings.Contains(base, "_"):
		v, err := strconv.ParseFloat(base[1:], 64)
		if err != nil || v < 0 || v > 100 || math.IsNaN(v) {
			return "", 0, fmt.Errorf("metric %q: expected a percentile p0 to p100 such as p99 or p99.9", base)
		}
		metric, q = "p", v
	default:
		return "", 0, fmt.Errorf("unknown metric %q: expected pN (p50, p99, p99.9, …), min, max, mean (each also with _ok: responses only; or with an llm step's _ttft, _ttft_actual, _tpot, _itl, _e2e), rps, error_rate, errors, requests, goodput or output_tokens_per_sec", base)
	}
	if ok {
		metric += "_ok"
	}
	return metric, q, nil
}

// llmTimes are the suffixes of the latency metrics of llm steps' token
// streams (p99_ttft): TTFT from the intended send, TTFT from the actual
// send, TPOT, ITL per token, E2E from the intended send. The longest
// first: _ttft_actual before _ttft.
var llmTimes = []string{"_ttft_actual", "_ttft", "_tpot", "_itl", "_e2e"}

// IsLLM reports whether t judges llm steps' token streams (a latency of
// theirs, goodput or output_tokens_per_sec): its scope needs an llm step.
func (t *Threshold) IsLLM() bool {
	if t.metric == "goodput" || t.metric == "output_tokens_per_sec" {
		return true
	}
	for _, sfx := range llmTimes {
		if strings.HasSuffix(t.metric, sfx) {
			return true
		}
	}
	return false
}

// IsGoodput reports whether t judges goodput, which needs objectives.
func (t *Threshold) IsGoodput() bool { return t.metric == "goodput" }

// isLatency reports whether metric (as parseMetric names it) is a latency.
func isLatency(metric string) bool {
	for _, sfx := range llmTimes {
		metric = strings.TrimSuffix(metric, sfx)
	}
	switch strings.TrimSuffix(metric, "_ok") {
	case "p", "min", "max", "mean":
		return true
	}
	return false
}

// OnStep makes t judge one step, name, whose index among the scenario's
// steps is index, instead of the whole run.
func (t *Threshold) OnStep(name string, index int) { t.Step, t.step = name, index }

// OnStage makes t judge one stage of the run's ramp instead of the whole
// run: ref is how the user named it (its number from 1, or its name) and
// index its position among the stages.
func (t *Threshold) OnStage(ref string, index int) { t.Stage, t.stage = ref, index }

// scope names what t judges, for messages: " (step x)", " (stage 2)" or "".
func (t *Threshold) scope() string {
	switch {
	case t.Step != "":
		return " (step " + t.Step + ")"
	case t.Stage != "":
		return " (stage " + t.Stage + ")"
	}
	return ""
}

// pass reports whether v meets the threshold.
func (t *Threshold) pass(v float64) bool {
	switch t.op {
	case "<":
		return v < t.limit
	case "<=":
		return v <= t.limit
	case ">":
		return v > t.limit
	}
	return v >= t.limit
}

// format prints a measured value in the metric's unit.
func (t *Threshold) format(v float64) string {
	if isLatency(t.metric) {
		return fmtSeconds(v)
	}
	switch t.metric {
	case "error_rate", "goodput":
		return fmt.Sprintf("%.3f%%", 100*v)
	case "output_tokens_per_sec":
		return strconv.FormatFloat(v, 'f', 1, 64) + " tokens/s"
	case "rps":
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func fmtSeconds(s float64) string {
	switch {
	case s < 1e-3:
		return strconv.FormatFloat(s*1e6, 'f', 1, 64) + "µs"
	case s < 1:
		return strconv.FormatFloat(s*1e3, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(s, 'f', 3, 64) + "s"
}

// noData says why m holds nothing for t to judge ("" when it does):
// latencies need a sent request that was not cut off (with _ok, a
// response), error_rate a request that was not aborted.
func (t *Threshold) noData(m *report.Measure) string {
	if t.IsLLM() {
		if m.Stream == nil || m.Stream.Tokens == nil || m.Stream.Completed+m.Stream.Truncated == 0 {
			return "no llm stream"
		}
		if t.metric == "goodput" && m.Stream.Completed == 0 {
			return "no llm stream completed"
		}
		return ""
	}
	switch t.metric {
	case "p", "min", "max", "mean":
		if m.AllSent == nil || m.AllSent.TotalCount() == 0 {
			return "no requests sent"
		}
	case "p_ok", "min_ok", "max_ok", "mean_ok":
		if m.Responses == 0 {
			return "no responses"
		}
	case "error_rate":
		if m.Requests-m.Aborted == 0 {
			return "no requests"
		}
	}
	return ""
}

// midRun reports whether t can be judged before the run ends: a throughput
// or a request count that has not been reached yet may still be, and a
// stage's rate is per second of the whole stage.
func (t *Threshold) midRun() bool {
	switch t.metric {
	case "rps", "output_tokens_per_sec":
		return t.stage < 0 && (t.op == "<" || t.op == "<=")
	case "requests":
		return t.op == "<" || t.op == "<="
	}
	return true
}

// Evaluate checks thresholds against the finished run's Result and stores
// the outcomes in res.Hail.Thresholds. It returns how many failed.
func Evaluate(thresholds []*Threshold, res *result.Result) int {
	elapsed := res.Summary.Total
	res.Hail.Thresholds = res.Hail.Thresholds[:0]
	failed := 0
	for _, t := range thresholds {
		var m report.Measure
		missing := ""
		switch {
		case t.stage >= 0:
			if s := report.FindStage(res, t.Stage); s != nil {
				m = report.MeasureStage(s)
			} else {
				m, missing = report.Measure{Latency: stats.NewHist()}, "no such stage in this run (-c, -q or -z changed the stages?)"
			}
		case t.step < 0:
			m = report.MeasureRun(res)
		default:
			idx := -1
			for i := range res.Hail.Steps {
				if res.Hail.Steps[i].Name == t.Step {
					idx = i
				}
			}
			if idx < 0 {
				m = report.Measure{Latency: stats.NewHist(), Elapsed: elapsed}
			} else {
				m = report.MeasureStep(&res.Hail.Steps[idx], elapsed)
			}
		}
		v := m.Value(t.metric, t.q)
		ok, measured := t.pass(v), t.format(v)
		if empty := t.noData(&m); missing != "" || empty != "" {
			if missing != "" {
				empty = missing
			}
			// A check over nothing is not a pass: a step that never ran
			// must not let a pipeline through.
			ok, measured = false, empty
		}
		if !ok {
			failed++
		}
		res.Hail.Thresholds = append(res.Hail.Thresholds, result.ThresholdResult{Expr: t.Expr, Step: t.Step, Stage: t.Stage, Value: v,
			Measured: measured, Pass: ok, AbortOnFail: t.AbortOnFail})
	}
	return failed
}

// AbortCheck returns the check a run makes after each collector tick, or
// nil when none of thresholds asks to abort: it returns why the run must
// stop when a threshold with abort_on_fail already fails (after its
// abort_after delay and 100 requests in its scope).
func AbortCheck(thresholds []*Threshold) func(c *stats.Collector) string {
	var ts []*Threshold
	for _, t := range thresholds {
		if t.AbortOnFail && t.midRun() {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	return func(c *stats.Collector) string {
		elapsed := time.Since(c.Start())
		var ms, stages []report.Measure
		var total report.Measure
		c.Steps(func(totals []*stats.Totals, _ [][]stats.Second) {
			for _, t := range totals {
				ms = append(ms, report.MeasureTotals(t, elapsed))
			}
		})
		c.Stages(func(totals []*stats.Totals) {
			for _, t := range totals {
				stages = append(stages, report.MeasureTotals(t, elapsed))
			}
		})
		c.View(func(t *stats.Totals, _ []stats.Second) { total = report.MeasureTotals(t, elapsed) })
		for _, t := range ts {
			if elapsed < t.AbortAfter {
				continue
			}
			m := total
			switch {
			case t.step >= 0 && t.step < len(ms):
				m = ms[t.step]
			case t.stage >= 0 && t.stage < len(stages) && len(stages) > 1:
				m = stages[t.stage]
			}
			if m.Requests < abortMinRequests {
				continue
			}
			if v := m.Value(t.metric, t.q); !t.pass(v) {
				return fmt.Sprintf("threshold %q%s failed at %.1fs with %s (abort_on_fail)", t.Expr, t.scope(), elapsed.Seconds(), t.format(v))
			}
		}
		return ""
	}
}
