// Stages: ramps of connections (closed model) or rate (open model), and how
// they combine with the top-level connections, rate and duration.

package scenario

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
	"gopkg.in/yaml.v3"
)

// stages reads the stages list, and checks it against the top-level
// connections, rate and duration (connSet: connections was given).
func (l *loader) stages(connSet bool) error {
	n, ok := l.nodes["stages"]
	if !ok {
		if l.s.Settings.Duration == 0 && l.s.Settings.Requests == 0 && !l.o.LengthGiven {
			return l.errAt(l.root, "scenario: expected duration, requests or stages: nothing says how long the run goes")
		}
		return nil
	}
	st := &l.s.Settings
	items, err := l.list(n, "stages")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return l.errAt(n, "stages: expected at least one stage, found an empty list")
	}
	var peak float64
	var total time.Duration
	names := map[string]bool{}
	for i, it := range items {
		sg, kind, err := l.stage(fmt.Sprintf("stages[%d]", i), it)
		if err != nil {
			return err
		}
		if sg.Name != "" && names[sg.Name] {
			return l.errAt(it, "stages[%d].name: %q names an earlier stage too: expected a name of its own", i, sg.Name)
		}
		names[sg.Name] = true
		st.StageKind = kind
		peak = math.Max(peak, sg.Target)
		total += sg.Duration
		st.Stages = append(st.Stages, sg)
	}
	if total <= 0 {
		return l.errAt(n, "stages: they last 0s in all: expected at least one stage with a duration > 0")
	}
	if peak <= 0 {
		if st.StageKind == "connections" {
			return l.errAt(n, "stages: no stage opens a connection: expected a connections target > 0")
		}
		return l.errAt(n, "stages: every rate is 0: expected a rate target > 0")
	}
	if d, ok := l.nodes["duration"]; ok {
		return l.errAt(d, "duration: the stages set the run's length (%s): expected one of duration and stages", total)
	}
	if st.StageKind == "connections" && connSet {
		return l.errAt(l.keys["connections"], "connections: the stages set the number of connections: expected one of connections and connection stages")
	}
	if st.StageKind == "connections" && st.Rate > 0 {
		return l.errAt(l.keys["rate"], "rate: connection stages are the closed model, rate the open one: expected rate stages instead")
	}
	if st.StageKind == "rate" && st.Rate > 0 {
		return l.errAt(l.keys["rate"], "rate: the stages set the rate: expected one of rate and rate stages")
	}
	return nil
}

// stage reads one stage: a duration and a target of connections or rate,
// the same kind as the stages before it; it returns the stage and its kind.
func (l *loader) stage(what string, it *yaml.Node) (schedule.Stage, string, error) {
	st := &l.s.Settings
	var sg schedule.Stage
	var durN, warmN *yaml.Node
	kind := ""
	if err := l.fields(it, what, stageKeys, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "duration":
			durN = v
			sg.Duration, err = l.duration(v, what+".duration")
		case "connections", "rate":
			if kind != "" {
				return l.errAt(k, "%s: expected connections (closed model) or rate (open model), found both", what)
			}
			kind = key
			if key == "connections" {
				var c int64
				c, err = l.integer(v, what+".connections", 0, maxConnections)
				sg.Target = float64(c)
			} else {
				sg.Target, err = l.number(v, what+".rate")
			}
			if err == nil && st.StageKind != "" && st.StageKind != key {
				err = l.errAt(k, "%s: expected %s like the stages before it (one model per run), found %s", what, st.StageKind, key)
			}
		case "ramp":
			var r string
			r, err = l.str(v, what+".ramp")
			if err == nil && r != "linear" && r != "step" {
				err = l.errAt(v, "%s.ramp: expected linear or step, found %s", what, describe(v))
			}
			sg.Step = r == "step"
		case "warmup":
			warmN = v
			sg.Warmup, err = l.duration(v, what+".warmup")
		case "name":
			sg.Name, err = l.str(v, what+".name")
			if err == nil && (sg.Name == "" || strings.Trim(sg.Name, "0123456789") == "") {
				err = l.errAt(v, "%s.name: expected a name with a letter in it (a number names a stage by its position already), found %s", what, describe(v))
			}
		}
		return err
	}); err != nil {
		return sg, "", err
	}
	if durN == nil {
		return sg, "", l.errAt(it, "%s: expected a duration, found none", what)
	}
	if kind == "" {
		return sg, "", l.errAt(it, "%s: expected a target: connections (closed model) or rate (open model), found none", what)
	}
	if warmN != nil && sg.Warmup >= sg.Duration {
		return sg, "", l.errAt(warmN, "%s.warmup: %s leaves nothing of the %s stage to measure: expected a warmup shorter than its duration", what, sg.Warmup, sg.Duration)
	}
	return sg, kind, nil
}
