// Package runner carries a loaded scenario through internal/run: the
// load's run.Workload (a request builder per virtual user, the stages, the
// checks that end the run early), the setup and teardown phases, each
// step a run of its own with its concurrency (phase.go), and the
// origins' plans and dialers that all three share (targets.go).
package runner

import (
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
)

// Workload is what run.Run needs to send sc's steps as sched paces them,
// to the one origin of its load (Targets.Route adds one run.Origin per
// origin for a load that sends to several):
// their names, a request builder per worker (a virtual user), what of the
// responses the checks and captures read, the stages, and the checks that
// end the run early (unique feeds used up, thresholds with abort_on_fail).
func Workload(sc *scenario.Scenario, sched scenario.Schedule) *run.Workload {
	return &run.Workload{Ended: sc.Ended(), Steps: scenario.Names(sc.Steps), NewRequests: sc.NewRequests,
		BodyLimit: scenario.BodyLimit(sc.Steps, sc.Settings.BodyLimit), PerConnection: sc.PerUser(), CaptureHeaders: scenario.ResponseHeaders(sc.Steps),
		Pacer: sched.Pacer, Connections: sched.ConnRamp, Stages: sched.Stages, Check: threshold.AbortCheck(sc.Thresholds),
		Stream: sc.StreamConfig()}
}
