package scenario

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
)

// MethodMix is the expected share of the load's requests by method, such
// as "POST 70% · GET 20% · DELETE 10%": each weighted step's weight counts
// once for its method, each flow's once for every step it walks.
func (s *Scenario) MethodMix() string {
	by := map[string]float64{}
	var total float64
	for _, st := range s.Steps {
		by[st.Method] += st.Weight
		total += st.Weight
	}
	for _, f := range s.Flows {
		for _, i := range f.steps {
			by[s.Steps[i].Method] += f.Weight
			total += f.Weight
		}
	}
	if total <= 0 {
		return ""
	}
	methods := make([]string, 0, len(by))
	for m := range by {
		methods = append(methods, m)
	}
	sort.Slice(methods, func(i, j int) bool {
		if by[methods[i]] != by[methods[j]] {
			return by[methods[i]] > by[methods[j]]
		}
		return methods[i] < methods[j]
	})
	parts := make([]string, len(methods))
	for i, m := range methods {
		parts[i] = fmt.Sprintf("%s %.0f%%", m, 100*by[m]/total)
	}
	return strings.Join(parts, " · ")
}

// StageAt says, elapsed into the run, which of the file's stages is in
// progress (from 1, of how many; 0 of 0 without stages), the target now
// and at the stage's end, and what the stages ramp ("connections" or
// "req/s"). After the last stage the run holds its target.
func (s *Scenario) StageAt(elapsed time.Duration) (index, of int, now, target float64, unit string) {
	st := &s.Settings
	if len(st.Stages) == 0 {
		return 0, 0, 0, 0, ""
	}
	index, now, target = schedule.Ramp{Stages: st.Stages}.StageAt(elapsed)
	unit = "connections"
	if st.StageKind == "rate" {
		unit = "req/s"
	}
	return index, len(st.Stages), now, target, unit
}

// StepCounters are step i's capture misses and yields so far, for the
// live view.
func (s *Scenario) StepCounters(i int) (misses, yields int64) {
	if i < 0 || i >= len(s.Steps) {
		return 0, 0
	}
	st := s.Steps[i]
	for k := range st.yields {
		yields += st.yields[k].Load()
	}
	return st.missed.Load(), yields
}
