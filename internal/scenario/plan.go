package scenario

import (
	"fmt"
	"time"

	"github.com/hail-loadgen/hail/internal/plan"
)

// Plan is the plan.Plan a scenario runs by (after command-line overrides
// of its Settings): the origin, connections, length, rate, timeouts and
// engine. The steps themselves go to run.Run as a run.Workload.
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
