package scenario

import (
	"fmt"
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
	// Streams is its target's streams: (0: the file's Settings.Streams);
	// OriginStreams says what a run uses.
	Streams int
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

// OriginStreams is how many requests each connection of origin k carries
// at once: its target's streams:, else the file's, for an HTTP/2 origin;
// 0 (one) for HTTP/1.1.
func (s *Scenario) OriginStreams(k int) int {
	o := s.Origins[k]
	switch {
	case !o.HTTP2:
		return 0
	case o.Streams > 0:
		return o.Streams
	}
	return s.Settings.Streams
}

// SetStreams makes every HTTP/2 origin carry n requests per connection at
// once (hail run -p), replacing the file's streams: and its targets'. It
// fails when no origin of the load speaks HTTP/2.
func (s *Scenario) SetStreams(n int) error {
	if n > 1 && !s.anyHTTP2() {
		return fmt.Errorf("-p %d: several streams per connection need HTTP/2, and every target of %s speaks HTTP/1.1 (give a target protocol: h2, or drop -p)", n, s.File)
	}
	s.Settings.Streams = n
	for _, o := range s.Origins {
		o.Streams = 0
	}
	return nil
}

// anyHTTP2 reports whether an origin the load sends to speaks HTTP/2.
func (s *Scenario) anyHTTP2() bool {
	for _, k := range s.loadOrigins() {
		if s.Origins[k].HTTP2 {
			return true
		}
	}
	return false
}

// OriginPlan is origin k's plan: p (the run's, Scenario.Plan) sent to k's
// URL over k's protocol.
func (s *Scenario) OriginPlan(p *plan.Plan, k int) (*plan.Plan, error) {
	o := s.Origins[k]
	q := *p
	u := *o.URL
	q.URL = &u
	q.HTTPVersion, q.Streams = "", s.OriginStreams(k)
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
