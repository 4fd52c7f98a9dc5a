package threshold

// hail compare's --fail-on rules: a threshold on a metric's change against
// the baseline side rather than on its value, in the thresholds' grammar
// (METRIC OP CHANGE), optionally scoped to a step or a stage.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/result"
)

// Change is a --fail-on rule: a change of a metric against the baseline
// that is a regression, such as "p99>+10%" (p99 rose by more than 10%),
// "rps<-5%" (requests/s fell by more than 5%), "p99_ok>+2ms",
// "error_rate>+0.5pp" (percentage points), "rss>+20%", with a scope
// "step=NAME:" or "stage=N:" (a number from 1, or a stage's name). The
// metrics are the thresholds' (a latency judges every sent request; _ok
// the responses only), and rss (the target's peak RSS) and target_cpu (its
// mean CPU, cores).
type Change struct {
	Expr string // as written
	// Step or Stage scope the rule ("": the whole run).
	Step, Stage string
	metric      string
	q           float64
	op          string
	limit       float64 // percent (relative), or in the metric's unit (absolute)
	relative    bool
}

// ParseChanges parses --fail-on's values: each a comma-separated list of
// rules.
func ParseChanges(values []string) ([]*Change, error) {
	var out []*Change
	for _, v := range values {
		for _, expr := range strings.Split(v, ",") {
			if strings.TrimSpace(expr) == "" {
				continue
			}
			c, err := ParseChange(expr)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// ParseChange parses one rule: [step=NAME: | stage=N:]METRIC OP CHANGE.
func ParseChange(expr string) (*Change, error) {
	s := strings.TrimSpace(expr)
	c := &Change{Expr: s}
	if scope, rest, ok := strings.Cut(s, ":"); ok && strings.Contains(scope, "=") {
		k, v, _ := strings.Cut(scope, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case v == "":
			return nil, fmt.Errorf("--fail-on %q: %s= names nothing: write step=NAME: or stage=N: before the rule", expr, k)
		case k == "step":
			c.Step = v
		case k == "stage":
			c.Stage = v
		default:
			return nil, fmt.Errorf("--fail-on %q: unknown scope %q: expected step=NAME: or stage=N: (a number from 1, or a stage's name)", expr, k)
		}
		s = strings.TrimSpace(rest)
	}
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return nil, fmt.Errorf("--fail-on %q: expected METRIC OP CHANGE such as p99>+10%% or rps<-5%%, found no comparison operator", expr)
	}
	for _, o := range []string{"<=", ">=", "<", ">"} {
		if strings.HasPrefix(s[i:], o) {
			c.op = o
			break
		}
	}
	if c.op == "" {
		return nil, fmt.Errorf("--fail-on %q: expected one of the operators < <= > >=, found %q", expr, s[i:min(len(s), i+2)])
	}
	name, val := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(c.op):])
	switch name {
	case "rss", "target_cpu":
		c.metric = name
	default:
		m, q, err := parseMetric(name, c.op)
		if err != nil {
			return nil, fmt.Errorf("--fail-on %q: %v (or rss, target_cpu)", expr, err)
		}
		c.metric, c.q = m, q
	}
	if val == "" {
		return nil, fmt.Errorf("--fail-on %q: expected a change after %s, such as +10%%", expr, c.op)
	}
	if err := c.parseLimit(val); err != nil {
		return nil, fmt.Errorf("--fail-on %q: %v", expr, err)
	}
	if math.IsInf(c.limit, 0) {
		return nil, fmt.Errorf("--fail-on %q: the change %s is too large to compare with", expr, val)
	}
	return c, nil
}

// parseLimit reads the change: a percentage of the baseline's value
// (+10%), or an absolute change in the metric's unit: a duration for a
// latency (+2ms), percentage points for error_rate (+0.5pp), a number
// (rps, errors, requests, target_cpu cores; rss bytes, or KiB, MiB, GiB).
func (c *Change) parseLimit(val string) error {
	num := func(s string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("expected a signed change such as +10%%, -5%%, +2ms, found %q", val)
		}
		return v, nil
	}
	if p, ok := strings.CutSuffix(val, "%"); ok {
		v, err := num(p)
		c.limit, c.relative = v, true
		return err
	}
	switch {
	case isLatency(c.metric):
		d, err := time.ParseDuration(strings.TrimPrefix(val, "+"))
		if err != nil {
			return fmt.Errorf("%s is a latency: expected a change in percent (+10%%) or a duration (+2ms), found %q", c.name(), val)
		}
		c.limit = d.Seconds()
	case c.metric == "error_rate":
		p, ok := strings.CutSuffix(val, "pp")
		if !ok {
			return fmt.Errorf("error_rate: expected a change in percent of the baseline's rate (+50%%) or in percentage points (+0.5pp), found %q", val)
		}
		v, err := num(p)
		c.limit = v / 100
		return err
	case c.metric == "rss":
		mult := 1.0
		for suf, m := range map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
			if p, ok := strings.CutSuffix(val, suf); ok {
				val, mult = p, m
			}
		}
		v, err := num(val)
		c.limit = v * mult
		return err
	default:
		v, err := num(val)
		c.limit = v
		return err
	}
	return nil
}

// name is the rule's metric as the user wrote it, without the scope.
func (c *Change) name() string {
	switch {
	case c.metric == "p" || c.metric == "p_ok":
		return "p" + strconv.FormatFloat(c.q, 'f', -1, 64) + strings.TrimPrefix(c.metric, "p")
	}
	return c.metric
}

// Value is the rule's metric in r (seconds for latencies, a fraction for
// error_rate, bytes for rss, cores for target_cpu); false when r has none
// (no such step or stage, no target sampled, nothing to measure).
func (c *Change) Value(r *result.Result) (float64, bool) {
	var m report.Measure
	switch {
	case c.Stage != "":
		s := report.FindStage(r, c.Stage)
		if s == nil || s.Measured == 0 {
			return 0, false
		}
		switch c.metric {
		case "rss":
			if s.Process == nil || s.Process.PeakRSSBytes == 0 {
				return 0, false
			}
			return float64(s.Process.PeakRSSBytes), true
		case "target_cpu":
			if s.Process == nil {
				return 0, false
			}
			return s.Process.MeanCPU, true
		}
		m = report.MeasureStage(s)
	case c.Step != "":
		var st *result.StepResult
		for i := range r.Hail.Steps {
			if r.Hail.Steps[i].Name == c.Step {
				st = &r.Hail.Steps[i]
			}
		}
		if st == nil || c.metric == "rss" || c.metric == "target_cpu" {
			return 0, false
		}
		m = report.MeasureStep(st, r.Summary.Total)
	default:
		switch c.metric {
		case "rss":
			if r.Hail.Target == nil {
				return 0, false
			}
			return float64(r.Hail.Target.PeakRSSBytes), true
		case "target_cpu":
			if r.Hail.Target == nil {
				return 0, false
			}
			return r.Hail.Target.MeanCPU, true
		}
		m = report.MeasureRun(r)
	}
	t := Threshold{metric: c.metric}
	if t.noData(&m) != "" {
		return 0, false
	}
	return m.Value(c.metric, c.q), true
}

// format prints a value of the rule's metric.
func (c *Change) format(v float64) string {
	switch {
	case c.metric == "rss":
		return strconv.FormatFloat(v/(1<<20), 'f', 2, 64) + " MiB"
	case c.metric == "target_cpu":
		return strconv.FormatFloat(v, 'f', 2, 64) + " cores"
	}
	t := Threshold{metric: c.metric}
	return t.format(v)
}

// trips reports whether a change (percent when relative, else in the
// metric's unit) meets the rule's regression.
func (c *Change) trips(change float64) bool {
	switch c.op {
	case "<":
		return change < c.limit
	case "<=":
		return change <= c.limit
	case ">":
		return change > c.limit
	}
	return change >= c.limit
}

// Judge checks every rule for every side but the baseline (sides[base])
// and returns one check per rule and side. A rule fails a side when the
// change of the medians is the regression it names and is significant:
// when either side has several runs, their min–max ranges do not overlap.
// With one run on both sides noise cannot be judged: raw decides on the
// change alone (the caller refuses to judge without it). A side on which
// the metric cannot be measured fails: a gate over nothing does not pass.
func Judge(rules []*Change, sides [][]*result.Result, labels []string, base int, raw bool) []report.ChangeCheck {
	var out []report.ChangeCheck
	for _, c := range rules {
		bs, bok := c.spread(sides[base])
		for i, runs := range sides {
			if i == base {
				continue
			}
			k := report.ChangeCheck{Rule: c.Expr, Side: labels[i]}
			vs, vok := c.spread(runs)
			if !bok || !vok {
				who := labels[i]
				if !bok {
					who = labels[base] + " (the baseline)"
				}
				k.Fail, k.Measured, k.Why = true, c.scopeText()+c.name()+": no value", "nothing to measure in "+who+": a rule over nothing does not pass"
				out = append(out, k)
				continue
			}
			var change float64
			unit := ""
			if c.relative {
				switch {
				case bs.Median != 0:
					change = 100 * (vs.Median - bs.Median) / math.Abs(bs.Median)
				case vs.Median > 0:
					change = math.Inf(1)
				case vs.Median < 0:
					change = math.Inf(-1)
				}
				unit = "%"
			} else {
				change = vs.Median - bs.Median
			}
			k.Measured = fmt.Sprintf("%s%s %s → %s (%s)", c.scopeText(), c.name(), c.format(bs.Median), c.format(vs.Median), c.changeText(change, unit))
			tripped := c.trips(change)
			switch {
			case !report.Noisy(bs, vs):
				k.Fail = tripped && raw
				k.Why = "raw change: one run per side, noise not judged"
			case vs.Min <= bs.Max && bs.Min <= vs.Max:
				k.Why = fmt.Sprintf("inside the runs' spread (%s %s–%s, %s %s–%s): noise", labels[base], c.format(bs.Min), c.format(bs.Max), labels[i], c.format(vs.Min), c.format(vs.Max))
			default:
				k.Fail = tripped
				k.Why = fmt.Sprintf("outside the runs' spread (%s %s–%s, %s %s–%s)", labels[base], c.format(bs.Min), c.format(bs.Max), labels[i], c.format(vs.Min), c.format(vs.Max))
			}
			if !tripped {
				k.Why = "not the regression the rule names; " + k.Why
			}
			out = append(out, k)
		}
	}
	return out
}

// spread is the rule's metric over runs (false when a run has none).
func (c *Change) spread(runs []*result.Result) (report.Spread, bool) {
	var xs []float64
	for _, r := range runs {
		v, ok := c.Value(r)
		if !ok {
			return report.Spread{}, false
		}
		xs = append(xs, v)
	}
	return report.SpreadOf(xs), len(xs) > 0
}

// scopeText names the rule's scope for messages: "stage 2 ", "step x ".
func (c *Change) scopeText() string {
	switch {
	case c.Stage != "":
		return "stage " + c.Stage + " "
	case c.Step != "":
		return "step " + c.Step + " "
	}
	return ""
}

// changeText prints a change: "+23.5%", "+1.20ms", "+0.50pp".
func (c *Change) changeText(change float64, unit string) string {
	sign := "+"
	if change < 0 {
		sign = "-"
	}
	a := math.Abs(change)
	switch {
	case unit == "%" && math.IsInf(change, 0):
		return sign + "∞% (from 0)"
	case unit == "%":
		return sign + strconv.FormatFloat(a, 'f', 1, 64) + "%"
	case c.metric == "error_rate":
		return sign + strconv.FormatFloat(100*a, 'f', 2, 64) + "pp"
	}
	return sign + c.format(a)
}
