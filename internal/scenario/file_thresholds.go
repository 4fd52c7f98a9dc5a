// Thresholds: pass/fail expressions, overall or per step, with their
// abort settings.

package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"gopkg.in/yaml.v3"
)

// thresholds reads the thresholds list: an expression, or a mapping with
// expr, an optional step and the abort settings.
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
			var exprN, stepN *yaml.Node
			abort := false
			after := threshold.DefaultAbortAfter
			if err := l.fields(it, what, thresholdKeys, func(key string, k, v *yaml.Node) error {
				var err error
				switch key {
				case "expr":
					exprN = v
				case "step":
					stepN = v
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
		}
		l.s.Thresholds = append(l.s.Thresholds, t)
	}
	return nil
}
