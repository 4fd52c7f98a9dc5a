// Package hailtest starts hail serve, hail's built-in target, inside a Go
// test, as net/http/httptest starts an http.Server: a fast HTTP/1.1 server
// on a free loopback port with the same paths and faults as the command's,
// and its own counts to check a load test against (AssertExact).
//
// Paths: / (200 "hello world\n"), /echo (the request's body back),
// /items (POST creates an item, GET /items/{id} reads it, DELETE deletes
// it), /healthz. Faults, as query parameters that combine:
//
//	delay=5ms               a fixed delay, or a distribution: delay=2ms:90,50ms:10
//	status=503:10           10% get 503; status=503:10,500:5; status=404 (all)
//	size=1k                 a body of that many bytes (k, m; at most 64m)
//	stall=2s@4s             responses due from 4 s after the first such request
//	                        are held for 2 s
//	close=5                 5% of responses close their connection
//	chunked=1               the body in chunks
//
// A status chosen by status= answers with the default body: the path's own
// handler does not run.
package hailtest

import (
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/serve"
)

// Server is a running built-in target.
type Server struct {
	// URL is its base URL, http://127.0.0.1:PORT.
	URL string
	s   *serve.Server
}

// Stats are the server's own counts.
type Stats struct {
	// Requests counts the responses it sent (not /healthz).
	Requests uint64
	// ByStatus counts them by status code.
	ByStatus map[int]uint64
	// ConnectionsAccepted counts accepted connections; ConnectionsOpen
	// are open now.
	ConnectionsAccepted uint64
	ConnectionsOpen     int64
	// BytesIn and BytesOut are the bytes read and written.
	BytesIn, BytesOut uint64
	// Items are the /items resource's counts.
	Items ItemStats
	// Holds are the responses held by ?delay= and ?stall=.
	Holds HoldStats
}

// HoldStats are the responses held by ?delay= and ?stall=: how many holds,
// their total asked length and their total length as held. A busy machine
// wakes the server's timers late: Taken − Asked is the server's own
// lateness, in every client's latency too.
type HoldStats struct {
	Count        uint64
	Asked, Taken time.Duration
}

// ItemStats are the /items resource's counts.
type ItemStats struct {
	// Created and Deleted count POST /items and DELETE /items/{id} that
	// did; Live are stored now.
	Created, Deleted uint64
	Live             int64
	// GetHits and GetMisses count GET /items/{id} that found the item and
	// that did not; DeleteMisses DELETE /items/{id} answered 404;
	// UnknownIDRequests requests for ids the server never issued.
	GetHits, GetMisses, DeleteMisses, UnknownIDRequests uint64
}

// NewServer starts the target until tb ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s, err := Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Start starts the target; Close stops it.
func Start() (*Server, error) {
	s := serve.New(serve.Config{Addr: "127.0.0.1:0"})
	addr, err := s.Listen()
	if err != nil {
		return nil, err
	}
	go s.Serve()
	return &Server{URL: "http://" + addr.String(), s: s}, nil
}

// Close stops the server and closes its connections.
func (s *Server) Close() error { return s.s.Close() }

// Stats returns the server's counts so far.
func (s *Server) Stats() Stats {
	st := s.s.Stats()
	i := st.Items
	return Stats{Requests: st.Requests, ByStatus: st.ByStatus, ConnectionsAccepted: st.ConnectionsAccepted,
		ConnectionsOpen: st.ConnectionsOpen, BytesIn: st.BytesIn, BytesOut: st.BytesOut,
		Items: ItemStats{Created: i.Created, Deleted: i.Deleted, Live: i.Live, GetHits: i.GetHits, GetMisses: i.GetMisses,
			DeleteMisses: i.DeleteMisses, UnknownIDRequests: i.UnknownIDRequests},
		Holds: HoldStats{Count: st.Holds.Count, Asked: st.Holds.Asked, Taken: st.Holds.Taken}}
}

// ResetStats zeroes the counts (not the open connections and live items),
// for a test that runs several loads against one server.
func (s *Server) ResetStats() { s.s.ResetStats() }
