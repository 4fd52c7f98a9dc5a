package scenario

import (
	"fmt"
	"time"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
)

// Plan is the run.Plan a scenario runs by (after command-line overrides
// of its Settings): the origin, connections, length, rate, timeouts and
// engine. The steps themselves come with Workload.
func (s *Scenario) Plan(sched Schedule) (*plan.Plan, error) {
	st := &s.Settings
	if s.thinkErr != nil && (sched.Rate > 0 || sched.Pacer != nil) {
		return nil, s.thinkErr
	}
	engine := st.Engine
	u := *s.Base
	p := &plan.Plan{URL: &u, Method: "GET", Headers: s.Headers, Connections: sched.Connections,
		Requests: sched.Requests, Duration: sched.Duration, Rate: sched.Rate,
		Timeout: st.Timeout, ConnectTimeout: st.ConnectTimeout, MaxRedirects: st.Redirects, KeepAlive: st.KeepAlive,
		Insecure: st.Insecure, Engine: plan.EngineName(engine)}
	if p.ConnectTimeout == 0 {
		p.ConnectTimeout = 5 * time.Second
	}
	if s.HasGRPC() { // gRPC is HTTP/2: the whole run speaks it
		p.HTTPVersion = "2"
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", s.File, err)
	}
	return p, nil
}

// Workload is what run.Run needs to send the scenario's steps.
func (s *Scenario) Workload(sched Schedule) *run.Workload {
	var ended <-chan struct{}
	if s.feedEnd != nil {
		ended = s.feedEnd.ch
	}
	return &run.Workload{Ended: ended, Steps: s.StepNames(), NewRequests: s.NewRequests, BodyLimit: bodyLimit(s.Steps, s.Settings.BodyLimit),
		PerConnection: s.perUser(), CaptureHeaders: captureHeaders(s.Steps),
		Pacer: sched.Pacer, Connections: sched.ConnRamp, Check: threshold.AbortCheck(s.Thresholds)}
}
