package http1

import "testing"

func TestIsToken(t *testing.T) {
	for s, want := range map[string]bool{"X-Tenant": true, "GET": true, "a!#$%&'*+-.^_`|~9": true, "": false, "a b": false, "a:b": false, "é": false, "a\x00": false} {
		if got := IsToken(s); got != want {
			t.Errorf("IsToken(%q) = %v, want %v", s, got, want)
		}
	}
}
