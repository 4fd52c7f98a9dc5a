package enginetest

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/run"
)

// A redirect that cannot be followed (a Location hail cannot go to) ends
// its request as a bad redirect, but the connection it came on is fine:
// the next request reuses it (the net engine closed it, 10 connections for
// 12 requests; the others kept one).
var redirectConnCases = []testCase{
	{"redirects/bad-keeps-connection", func(t *testing.T, v *env) {
		s := v.truth()
		p := v.plan(s, s.URL+"/badloc")
		p.Requests, p.Connections = 12, 1
		res := v.run(p, run.Options{})
		v.exact(res, settled(s, res.Hail.Counts.Sent))
		v.wantErrors(res, "bad redirect", 12)
		if c := res.Hail.Counts.Connects; c != 1 {
			t.Errorf("%d connections for 12 requests on one: the good keep-alive connection was closed", c)
		}
	}},
}
