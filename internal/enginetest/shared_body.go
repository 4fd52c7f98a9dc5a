package enginetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/run"
)

// The shared body (engine.SharedBody): a body of engine.SplitAt bytes or
// more is sent after each request's head from one slice, never copied into
// requests, redirect hops or retries. On every engine the server receives
// it whole — after a 307 too, on each hop; a 303 drops it; a retry on a
// new connection sends it again.
var sharedBodyCases = []testCase{
	{"shared-body/307", func(t *testing.T, v *env) {
		s := v.truth()
		body := sharedBody()
		p := v.plan(s, s.URL+"/to?code=307&loc=/seen")
		p.Requests, p.Method, p.Bodies = 6, "POST", [][]byte{body}
		res := v.run(p, run.Options{})
		if res.StatusCodeDistribution["200"] != 6 {
			t.Fatalf("200s %d of 6 (errors %v)", res.StatusCodeDistribution["200"], res.ErrorDistribution)
		}
		if got := s.RedirectedBodies()[string(body)]; got != 6 {
			t.Errorf("%d of 6 requests reached /to with the whole body", got)
		}
		seen := s.SeenRequests()
		for _, r := range seen {
			if r.Method != "POST" || r.Body != string(body) {
				t.Fatalf("the 307 hop arrived as %s with %d body bytes, want POST with %d", r.Method, len(r.Body), len(body))
			}
		}
		if len(seen) != 6 {
			t.Errorf("%d hops arrived, want 6", len(seen))
		}
	}},
	{"shared-body/303", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/to?code=303&loc=/seen")
		p.Requests, p.Method, p.Bodies = 6, "POST", [][]byte{sharedBody()}
		res := v.run(p, run.Options{})
		if res.StatusCodeDistribution["200"] != 6 {
			t.Fatalf("200s %d of 6 (errors %v)", res.StatusCodeDistribution["200"], res.ErrorDistribution)
		}
		for _, r := range s.SeenRequests() {
			if r.Method != "GET" || r.Body != "" {
				t.Fatalf("the 303 hop arrived as %s with %d body bytes, want a GET without one", r.Method, len(r.Body))
			}
		}
	}},
	{"shared-body/stale-keep-alive", func(t *testing.T, v *env) {
		// Requests 300 ms apart find their idle connection closed and go
		// again, the shared body with them.
		s := StartTruth(t, v.e.Proto, 100*time.Millisecond)
		body := sharedBody()
		p := v.plan(s, s.URL+"/to?code=200&loc=/")
		p.Requests, p.Connections, p.Rate, p.Method, p.Bodies = 4, 1, 3.3, "PUT", [][]byte{body}
		res := v.run(p, run.Options{})
		if res.StatusCodeDistribution["200"] != 4 || res.Hail.Counts.Errors != 0 {
			t.Errorf("200s %d of 4, errors %v", res.StatusCodeDistribution["200"], res.ErrorDistribution)
		}
		if got := s.RedirectedBodies()[string(body)]; got != 4 {
			t.Errorf("%d of 4 requests arrived with the whole body", got)
		}
	}},
}

// sharedBody is a body just large enough to be shared, of varied bytes (a
// truncated or misplaced piece would not compare equal).
func sharedBody() []byte {
	return bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz\n"), engine.SplitAt/37+1)
}
