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
// said "0 for none").
func TestZeroDurations(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	grpcAddr, _ := startGRPCServer(t, grpcserve.Config{})
	for _, zero := range []string{"0", "0s", "0ms", "0.0"} {
		for _, tc := range []struct {
			args []string
			want string // a fragment of the one-line refusal; "" when accepted
		}{
			{args: []string{"-n", "3", "-t", zero, base}},
			{args: []string{"-n", "3", "--pacing-granularity", zero, "-q", "100", base}},
			{args: []string{"grpc", "--insecure", "--call", "hail.v1.Target/Echo", "-n", "3", "-t", zero, grpcAddr}},
			{args: []string{"grpc", "--insecure", "--call", "hail.v1.Target/Echo", "-n", "3", "-x", zero, grpcAddr}},
			{args: []string{"-z", zero, base}, want: `-z, --duration "` + zero + `": 0 would be a run of no time, which sends nothing`},
			{args: []string{"--burst-delay", zero, base}, want: "0 would send every burst at once"},
			{args: []string{"--connect-timeout", zero, base}, want: "0 would wait for a connection as long as the kernel does"},
			{args: []string{"grpc", "--insecure", "-z", zero, grpcAddr}, want: "0 would be a run of no time"},
			{args: []string{"run", "-t", zero, "-z", zero, "x.yaml"}, want: "0 would be a run of no time"},
		} {
			t.Run(strings.Join(tc.args[:len(tc.args)-1], " "), func(t *testing.T) {
				t.Parallel()
				args := append([]string{"--no-tui", "-j"}, tc.args...)
				if tc.args[0] == "grpc" || tc.args[0] == "run" {
					args = append([]string{tc.args[0], "--no-tui", "-j"}, tc.args[1:]...)
				}
				out, errOut, code := hail(t, args...)
				if tc.want != "" {
					if code != 1 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
						t.Fatalf("exit %d, stderr %q: want one line with %q", code, errOut, tc.want)
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
