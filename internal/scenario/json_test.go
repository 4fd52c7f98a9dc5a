package scenario

import (
	"strings"
	"testing"
)

// Sent as a body, the JSON carries Content-Type: application/json unless
// the step sets one.
func TestBodyJSONContentType(t *testing.T) {
	for _, c := range []struct{ headers, want string }{
		{"", "Content-Type: application/json\r\n"},
		{"headers: {content-type: application/merge-patch+json}", "content-type: application/merge-patch+json\r\n"},
	} {
		src := "base: http://127.0.0.1:1\nrequests: 1\nsteps:\n  - name: a\n    method: PATCH\n    path: /x\n    body_json: {a: 1}\n    " + c.headers + "\n"
		s := mustParse(t, src)
		req, _, _, _ := newVU(s, 0).Next(0)
		if !strings.Contains(string(req), c.want) || strings.Count(strings.ToLower(string(req)), "content-type") != 1 || !strings.HasSuffix(string(req), "\r\n\r\n{\"a\":1}") {
			t.Errorf("request %q: want one %q", req, c.want)
		}
	}
}
