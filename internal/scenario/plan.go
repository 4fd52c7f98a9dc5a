package scenario

import (
	"fmt"
	"time"

	"github.com/hail-loadgen/hail/internal/plan"
)

// Plan is the plan.Plan a scenario runs by (after command-line overrides
// of its Settings): the origin, connections, length, rate, timeouts and
// engine. The steps themselves go to run.Run as a run.Workload. The
// origin is the load's (its first, when it sends to several: OriginPlan
// gives each its own).
func (s *Scenario) Plan(sched Schedule) (*plan.Plan, error) {
	st := &s.Settings
	if s.thinkErr != nil && (sched.Rate > 0 || sched.Pacer != nil) {
		return nil, s.thinkErr
	}
	engine := st.Engine
	first := 0
	if k := s.loadOrigins(); len(k) > 0 {
		first = k[0]
	}
	o := s.Origins[first]
	if n := len(s.loadOrigins()); n > 1 && sched.Connections < n {
		return nil, fmt.Errorf("%s: %d connections for %d targets: each target needs one of its own; give at least %d", s.File, sched.Connections, n, n)
	}
	u := *o.URL
	p := &plan.Plan{URL: &u, Method: "GET", Headers: s.Headers, Connections: sched.Connections,
		Requests: sched.Requests, Duration: sched.Duration, Rate: sched.Rate,
		Timeout: st.Timeout, ConnectTimeout: st.ConnectTimeout, MaxRedirects: st.Redirects, KeepAlive: st.KeepAlive,
		Insecure: st.Insecure, Engine: plan.EngineName(engine)}
	if p.ConnectTimeout == 0 {
		p.ConnectTimeout = 5 * time.Second
	}
	if o.HTTP2 { // gRPC steps, grpc://, protocol: h2
		p.HTTPVersion, p.Streams = plan.HTTP2, s.OriginStreams(first)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", s.File, err)
	}
	return p, nil
}
