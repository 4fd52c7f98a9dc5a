// Flows: named sequences of steps walked by one virtual user, and the
// default weights of steps that appear in them.

package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// flows reads the flows and settles the default weights: a step without
// a weight has weight 1, or 0 when it appears in a flow.
func (l *loader) flows() error {
	s := l.s
	l.stepInFlow = make([]bool, len(s.Steps))
	if n, ok := l.nodes["flows"]; ok {
		items, err := l.list(n, "flows")
		if err != nil {
			return err
		}
		names := map[string]*yaml.Node{}
		for i, it := range items {
			what := fmt.Sprintf("flows[%d]", i)
			f := &Flow{Weight: 1}
			var stepsN, nameN *yaml.Node
			if err := l.fields(it, what, flowKeys, func(key string, k, v *yaml.Node) error {
				var err error
				switch key {
				case "name":
					nameN = v
					f.Name, err = l.str(v, what+".name")
				case "weight":
					f.Weight, err = l.number(v, what+".weight")
				case "steps":
					stepsN = v
				case "think":
					f.think, err = l.thinkTime(v, what+".think")
					l.thinkNode = v
				}
				return err
			}); err != nil {
				return err
			}
			if nameN == nil {
				return l.errAt(it, "%s: expected a name, found none", what)
			}
			if prev, dup := names[f.Name]; dup {
				return l.errAt(nameN, "%s.name: duplicate flow name %q (first at line %d)", what, f.Name, prev.Line)
			}
			names[f.Name] = nameN
			what = "flow " + f.Name
			if stepsN == nil {
				return l.errAt(it, "%s: expected steps: [a list of step names], found none", what)
			}
			list, err := l.list(stepsN, what+".steps")
			if err != nil {
				return err
			}
			if len(list) == 0 {
				return l.errAt(stepsN, "%s.steps: expected at least one step name, found an empty list", what)
			}
			for _, sn := range list {
				name, err := l.str(sn, what+".steps")
				if err != nil {
					return err
				}
				idx, ok := l.stepIdx[name]
				if !ok {
					return l.errAt(sn, "%s.steps: undefined step %q: expected one of %s", what, name, strings.Join(slices.Sorted(maps.Keys(l.stepIdx)), ", "))
				}
				f.steps = append(f.steps, idx)
				l.stepInFlow[idx] = true
			}
			if f.Weight == 0 {
				return l.errAt(it, "%s never runs: expected a weight > 0", what)
			}
			s.Flows = append(s.Flows, f)
			l.flowNodes = append(l.flowNodes, it)
		}
		if len(s.Steps)+len(s.Flows) > maxActivities {
			return l.errAt(n, "flows: expected at most %d steps and flows in all", maxActivities)
		}
	}
	for i, st := range s.Steps {
		if !l.weightSet[i] && l.stepInFlow[i] {
			st.Weight = 0
		}
		if st.Weight == 0 && !l.stepInFlow[i] {
			return l.errAt(l.stepNodes[i], "step %s never runs: expected a weight > 0 or a place in a flow", st.Name)
		}
	}
	return nil
}
