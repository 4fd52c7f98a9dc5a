package scenario

import (
	"math"
	"slices"
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
)

// Schedule is how a scenario's run is paced, derived from its settings.
type Schedule struct {
	// Connections is the engine's -c: the maximum of connection stages, or
	// the constant number of connections.
	Connections int
	// ConnRamp makes the number of active connections follow the stages
	// (closed model); nil: all Connections throughout.
	ConnRamp *schedule.Ramp
	// Pacer schedules requests with a ramped rate (open model); nil: none
	// (a constant Rate or the closed model).
	Pacer schedule.Pacer
	// Rate is a constant open-model rate (0: none).
	Rate float64
	// Duration is the run's length (0: none; Requests bounds it).
	Duration time.Duration
	// Requests bounds the run (0: none).
	Requests uint64
	// Stages are the ramp's stages (the last target held to Duration when
	// that is longer), each reported on its own; nil without stages.
	Stages []schedule.Stage
}

// Schedule derives the run's schedule from the settings (after command-line
// overrides). With stages, the run lasts their total unless Duration says
// otherwise: a shorter Duration cuts the plan, a longer one holds the last
// target.
func (st *Settings) Schedule() Schedule {
	sc := Schedule{Connections: st.Connections, Rate: st.Rate, Duration: st.Duration, Requests: st.Requests}
	if len(st.Stages) == 0 {
		return sc
	}
	r := schedule.Ramp{Stages: slices.Clone(st.Stages)}
	var peak float64
	for _, s := range st.Stages {
		peak = math.Max(peak, s.Target)
	}
	total := r.Total()
	if sc.Duration == 0 {
		sc.Duration = total
	}
	if sc.Duration > total {
		last := st.Stages[len(st.Stages)-1].Target
		r.Stages = append(r.Stages, schedule.Stage{Duration: sc.Duration - total, Target: last})
	}
	sc.Stages = r.Stages
	switch st.StageKind {
	case "connections":
		sc.Connections = max(1, int(math.Ceil(peak-1e-9)))
		sc.ConnRamp = &r
	case "rate":
		sc.Pacer = schedule.NewRampRate(r)
		sc.Rate = 0
	}
	return sc
}
