// Thresholds: pass/fail expressions, overall, per step or per stage, with
// their abort settings.

package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"gopkg.in/yaml.v3"
)

// thresholds reads the thresholds list: an expression, or a mapping with
// expr, an optional step or stage and the abort settings.
func (l *loader) thresholds() error {
	n, ok := l.nodes["thresholds"]
	if !ok {
		return nil
	}
	items, err := l.list(n, "thresholds")
	if err != nil {
		return err
	}
	for i, it := range items {
		what := fmt.Sprintf("thresholds[%d]", i)
		var t *threshold.Threshold
		if it.Kind == yaml.ScalarNode {
			expr, err := l.str(it, what)
			if err != nil {
				return err
			}
			if t, err = threshold.Parse(expr); err != nil {
				return l.errAt(it, "%s: %v", what, err)
			}
		} else {
			var exprN, stepN, stageN *yaml.Node
			abort := false
			after := threshold.DefaultAbortAfter
			if err := l.fields(it, what, thresholdKeys, func(key string, k, v *yaml.Node) error {
				var err error
				switch key {
				case "expr":
					exprN = v
				case "step":
					stepN = v
				case "stage":
					stageN = v
				case "abort_on_fail":
					abort, err = l.boolean(v, what+".abort_on_fail")
				case "abort_after":
					after, err = l.duration(v, what+".abort_after")
				}
				return err
			}); err != nil {
				return err
			}
			if exprN == nil {
				return l.errAt(it, "%s: expected expr: such as \"p99 < 12ms\", found none", what)
			}
			expr, err := l.str(exprN, what+".expr")
			if err != nil {
				return err
			}
			if t, err = threshold.Parse(expr); err != nil {
				return l.errAt(exprN, "%s: %v", what, err)
			}
			t.AbortOnFail, t.AbortAfter = abort, after
			if stepN != nil {
				name, err := l.str(stepN, what+".step")
				if err != nil {
					return err
				}
				idx, ok := l.stepIdx[name]
				if !ok {
					return l.errAt(stepN, "%s.step: undefined step %q: expected one of %s", what, name, strings.Join(slices.Sorted(maps.Keys(l.stepIdx)), ", "))
				}
				t.OnStep(name, idx)
			}
			if stageN != nil {
				if stepN != nil {
					return l.errAt(stageN, "%s: expected step or stage, found both: a threshold judges one step over the run, or every step in one stage", what)
				}
				ref, idx, err := l.stageRef(stageN, what+".stage")
				if err != nil {
					return err
				}
				t.OnStage(ref, idx)
			}
		}
		if err := l.llmThreshold(t, it); err != nil {
			return err
		}
		l.s.Thresholds = append(l.s.Thresholds, t)
	}
	return nil
}

// llmThreshold checks that a threshold on token streams (p99_ttft,
// goodput) judges llm steps: the file has one, and the step it names is
// one.
func (l *loader) llmThreshold(t *threshold.Threshold, at *yaml.Node) error {
	if !t.IsLLM() {
		return nil
	}
	if !l.anyLLM {
		return l.errAt(at, "threshold %q judges llm steps' token streams, and the scenario has no llm step (llm:): expected a threshold such as \"p99 < 12ms\", or an llm step", t.Expr)
	}
	slo := false
	for _, st := range l.s.Steps {
		if st.llm != nil && (t.Step == "" || st.Name == t.Step) {
			slo = slo || st.llm.slo.Any()
		}
	}
	if t.Step != "" {
		if st := l.s.Steps[l.stepIdx[t.Step]]; st.llm == nil {
			return l.errAt(at, "threshold %q judges token streams, and step %s is no llm step: expected an llm step's name", t.Expr, t.Step)
		}
	}
	if t.IsGoodput() && !slo {
		return l.errAt(at, "threshold %q: goodput is the share of streams that met their objectives, and no llm step it judges has any: add slo: ttft=500ms,tpot=50ms to the step's llm", t.Expr)
	}
	return nil
}

// stageRef reads a threshold's stage: its number (from 1) or its name;
// it returns the stage as the user named it and its index.
func (l *loader) stageRef(n *yaml.Node, what string) (string, int, error) {
	stages := l.s.Settings.Stages
	ref, err := l.str(n, what)
	if err != nil {
		return "", 0, err
	}
	if len(stages) == 0 {
		return "", 0, l.errAt(n, "%s: the scenario has no stages: a threshold names a stage of stages:", what)
	}
	for i, sg := range stages {
		if sg.Name != "" && sg.Name == ref {
			return ref, i, nil
		}
	}
	if k, err := strconv.Atoi(ref); err == nil && k >= 1 && k <= len(stages) {
		return ref, k - 1, nil
	}
	var names []string
	for _, sg := range stages {
		if sg.Name != "" {
			names = append(names, sg.Name)
		}
	}
	also := ""
	if len(names) > 0 {
		also = " or a name: " + strings.Join(names, ", ")
	}
	return "", 0, l.errAt(n, "%s: no stage %q: expected a stage number from 1 to %d%s", what, ref, len(stages), also)
}
