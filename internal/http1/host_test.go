package http1

import (
	"strings"
	"testing"
)

func TestStripZone(t *testing.T) {
	for in, want := range map[string]string{
		"[fe80::1%lo]:8080":      "[fe80::1]:8080",
		"[fe80::1%25eth0]":       "[fe80::1]",
		"[::1]:80":               "[::1]:80",
		"example.com:80":         "example.com:80",
		"a%b":                    "a%b", // not bracketed: no zone
		"[::1]:80%x":             "[::1]:80%x",
		"[fe80::1%lo":            "[fe80::1%lo", // unclosed: left alone
		"":                       "",
		"[fe80::1%weird%zone]:1": "[fe80::1]:1",
	} {
		if got := StripZone(in); got != want {
			t.Errorf("StripZone(%q) = %q, want %q", in, got, want)
		}
	}
}

// An IPv6 zone never reaches the Host header, and leaving it out
// allocates nothing.
func TestAppendRequestDropsZone(t *testing.T) {
	spec := &RequestSpec{Method: "GET", Target: "/", Host: "[fe80::1%lo]:8080"}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	got := string(AppendRequest(nil, spec))
	if !strings.Contains(got, "\r\nHost: [fe80::1]:8080\r\n") || strings.Contains(got, "%") {
		t.Errorf("request %q", got)
	}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { AppendRequest(buf[:0], spec) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
