package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/grpcserve"
)

// A duration of 0, written 0, 0s, 0ms or 0.0, is accepted where the help
// gives 0 a meaning (-t: none; hail grpc's -t and -x: none;
// --pacing-granularity: a wake-up per request), and refused elsewhere
// with one line saying what 0 would mean and why it is refused (it said
// "'0s' is not a duration", and hail grpc refused -t 0 although its help
// said "0 for none"). Every flag reads its value with the same parser:
// the four spellings are tried on one flag that takes 0 and one that
// refuses it, "0s" on the others.
func TestZeroDurations(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	grpcAddr, _ := startGRPCServer(t, grpcserve.Config{})
	spellings := []string{"0", "0s", "0ms", "0.0"}
	for _, tc := range []struct {
		args   func(zero string) []string
		want   string // a fragment of the one-line refusal (ZERO: the value given); "" when accepted
		spells []string
	}{
		{args: func(z string) []string { return []string{"-n", "3", "-t", z, base} }, spells: spellings},
		{args: func(z string) []string { return []string{"-n", "3", "--pacing-granularity", z, "-q", "100", base} }},
		{args: func(z string) []string {
			return []string{"grpc", "--insecure", "--call", "hail.v1.Target/Echo", "-n", "3", "-t", z, grpcAddr}
		}},
		{args: func(z string) []string {
			return []string{"grpc", "--insecure", "--call", "hail.v1.Target/Echo", "-n", "3", "-x", z, grpcAddr}
		}},
		{args: func(z string) []string { return []string{"-z", z, base} }, want: `-z, --duration "ZERO": 0 would be a run of no time, which sends nothing`, spells: spellings},
		{args: func(z string) []string { return []string{"--burst-delay", z, base} }, want: "0 would send every burst at once"},
		{args: func(z string) []string { return []string{"--connect-timeout", z, base} }, want: "0 would wait for a connection as long as the kernel does"},
		{args: func(z string) []string { return []string{"grpc", "--insecure", "-z", z, grpcAddr} }, want: "0 would be a run of no time"},
		{args: func(z string) []string { return []string{"run", "-t", z, "-z", z, "x.yaml"} }, want: "0 would be a run of no time"},
	} {
		if tc.spells == nil {
			tc.spells = []string{"0s"}
		}
		for _, zero := range tc.spells {
			args := tc.args(zero)
			t.Run(strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
				t.Parallel()
				all := append([]string{"--no-tui", "-j"}, args...)
				if args[0] == "grpc" || args[0] == "run" {
					all = append([]string{args[0], "--no-tui", "-j"}, args[1:]...)
				}
				out, errOut, code := hail(t, all...)
				if tc.want != "" {
					want := strings.ReplaceAll(tc.want, "ZERO", zero)
					if code != 1 || !strings.Contains(errOut, want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
						t.Fatalf("exit %d, stderr %q: want one line with %q", code, errOut, want)
					}
					return
				}
				var r struct {
					Hail struct {
						Counts struct{ Requests int64 }
					}
				}
				if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Hail.Counts.Requests != 3 {
					t.Fatalf("exit %d, %d requests, stderr %q", code, r.Hail.Counts.Requests, errOut)
				}
			})
		}
	}
}
