package enginetest

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/run"
)

// A response cut short after 200 KB of its body: the request is an error,
// and the bytes that did arrive count in the wire bytes (they were 0 on
// the net and uring engines).
var wireBytesCases = []testCase{
	{"wire-bytes/mid-body", func(t *testing.T, v *env) {
		s := v.truth()
		const n = 200_000
		p := v.plan(s, s.URL+"/partial?n=200000")
		p.Requests, p.Connections = 4, 1
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		if c := res.Hail.Counts; c.Errors != 4 || c.WireBytes < 4*n {
			t.Errorf("errors %v, wire bytes %d: want 4 errors and at least %d wire bytes", res.ErrorDistribution, c.WireBytes, 4*n)
		}
	}},
}
