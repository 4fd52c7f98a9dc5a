// Setup and teardown: lists of steps run once, in order, on their own
// connection before the load starts and after it ends. A step may repeat
// (repeat: N), or repeat until a pool it takes from is empty (repeat: all).

package scenario

import (
	"strconv"

	"gopkg.in/yaml.v3"
)

// phases compiles the setup and teardown steps (after the load's, whose
// per-step bookkeeping they do not take part in).
func (l *loader) phases() error {
	l.phase = true
	defer func() { l.phase = false }()
	for _, key := range []string{"setup", "teardown"} {
		var steps []*Step
		for _, it := range l.phaseNodes[key] {
			st, err := l.step(it)
			if err != nil {
				return err
			}
			steps = append(steps, st)
		}
		if key == "setup" {
			l.s.Setup = steps
		} else {
			l.s.Teardown = steps
		}
	}
	return nil
}

// stepRepeat reads a setup or teardown step's repeat: a count, or all
// (until a pool the step takes from is empty).
func (l *loader) stepRepeat(st *Step, n *yaml.Node) error {
	st.repeat = 1
	if n == nil {
		return nil
	}
	what := st.Name + ".repeat"
	if n.Kind == yaml.ScalarNode && n.Value == "all" {
		takes := false
		for _, r := range st.refs {
			takes = takes || r.Take
		}
		if !takes {
			return l.errAt(n, "%s: all repeats the step until a pool it takes from is empty, but it has no {{take POOL}}: expected a count such as 100", what)
		}
		st.repeat = repeatAll
		return nil
	}
	c, err := l.integer(n, what, 1, 10_000_000)
	if err != nil {
		return l.errAt(n, "%s: expected a count such as 100, or all (until a pool the step takes from is empty), found %s", what, describe(n))
	}
	st.repeat = int(c)
	return nil
}

// repeatAll is a step's repeat: all.
const repeatAll = -1

// repeatText is a phase step's repeat as a file writes it.
func repeatText(n int) string {
	if n == repeatAll {
		return "all"
	}
	return strconv.Itoa(n)
}
