package scenario

import (
	"net/url"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/plan"
)

// Origin is one server a scenario's steps go to, with a connection pool
// of its own in a run: a target of the file (named under targets:), its
// base, or the origin of a step's full url. Its connections speak one
// protocol — HTTP/2 when a gRPC step goes to it, its URL is grpc:// or
// grpcs://, or its target says protocol: h2; HTTP/1.1 otherwise.
//
// A run of a file whose load goes to several origins drives one engine
// per origin under one schedule (run.Workload.Origins): each origin's
// virtual users choose among its own steps and flows, and the origins
// share the requests (open model) and the connections (closed model) in
// proportion to Share, the weight of their steps and flows. Pools are
// shared by all: an id created on one origin is queried on another.
type Origin struct {
	// Name is the target's name, "base", or the URL's host:port.
	Name string
	// URL is its scheme (http or https), host and port, and the path prefix
	// of steps that give a path.
	URL *url.URL
	// HTTP2 says its connections speak HTTP/2 (h2c for http://).
	HTTP2 bool
	// GRPC says a step sends a gRPC call to it.
	GRPC bool
	// Share is its part of the load's choices (0–1): the weights of its
	// steps and flows over all.
	Share float64
	steps []int // the load's steps sent to it, in file order
	mix   mix   // the choice among its steps and flows
}

// Steps are the indices in Scenario.Steps of the load's steps sent to o.
func (o *Origin) Steps() []int { return o.steps }

// loadOrigins are the origins the load sends to (their indices).
func (s *Scenario) loadOrigins() []int {
	var out []int
	for k, o := range s.Origins {
		if o.Share > 0 {
			out = append(out, k)
		}
	}
	return out
}

// LoadOrigins are the indices in Origins of the origins the load sends
// to: one for most files, several when steps name targets.
func (s *Scenario) LoadOrigins() []int { return s.loadOrigins() }

// NewOriginRequests returns the request builder of a worker of origin k's
// engine: a virtual user choosing among k's steps and flows only. The
// step numbers it returns are the scenario's (Scenario.Steps).
func (s *Scenario) NewOriginRequests(k int) func(worker int) engine.Requests {
	m := &s.Origins[k].mix
	return func(worker int) engine.Requests {
		v := newVU(s, worker)
		v.mix = m
		return v
	}
}

// OriginPlan is origin k's plan: p (the run's, Scenario.Plan) sent to k's
// URL over k's protocol.
func (s *Scenario) OriginPlan(p *plan.Plan, k int) (*plan.Plan, error) {
	o := s.Origins[k]
	q := *p
	u := *o.URL
	q.URL = &u
	q.HTTPVersion = ""
	if o.HTTP2 {
		q.HTTPVersion = plan.HTTP2
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return &q, nil
}

// OriginOf is the origin (an index in Origins) step st is sent to.
func (st *Step) OriginOf() int { return st.origin }
