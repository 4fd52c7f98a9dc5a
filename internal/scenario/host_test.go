package scenario

import (
	"strings"
	"testing"
)

// An IPv6 zone in the base URL stays out of the generated Host header.
func TestHostWithoutZone(t *testing.T) {
	s, err := parse(t, "base: http://[fe80::1%25lo]:8080\nrequests: 1\nsteps:\n  - {name: a, path: /x}\n")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := newVU(s, 0).build(0)
	if !strings.Contains(string(got), "\r\nHost: [fe80::1]:8080\r\n") {
		t.Errorf("request %q", got)
	}
}
