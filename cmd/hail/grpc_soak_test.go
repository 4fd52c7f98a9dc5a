package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// The gRPC path soaks as the HTTP one does (TestSoak, internal/run): hail
// grpc at 2,000 calls/s against hail serve --grpc's services, 30 s each,
// unary and client streaming, with a delay and status mix (-w: the calls
// in flight at the end finish). hail's RSS,
// sampled from outside every second, stays flat after a warm-up; the
// per-second series has every second; every call is accounted for and the
// server's own count of calls equals hail's. It runs when HAIL_SOAK is set
// (.ci/run sets it: a minute in all); HAIL_SOAK=<duration> runs each kind
// that long.
func TestSoakGRPC(t *testing.T) {
	testtier.Require(t, testtier.Soak)
	dur := 30 * time.Second
	if parsed, err := time.ParseDuration(os.Getenv(testtier.Soak)); err == nil {
		dur = parsed
	}
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	for _, tc := range []struct {
		name, call, data string
	}{
		{"unary", "hail.v1.Target/Echo", `{"payload":"soak","delay":"1ms:90,5ms:10","status":"Unavailable:1"}`},
		{"client-streaming", "hail.v1.Target/Collect", `[{"payload":"a"},{"payload":"b"},{"payload":"c"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Reset()
			out := t.TempDir() + "/r.json"
			cmd := exec.Command(hailBin, "grpc", "--insecure", "--call", tc.call, "-d", tc.data, "-z", dur.String(), "-q", "2000",
				"-c", "16", "-w", "--no-tui", "-j", "-o", out, addr)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var rss []int64
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
		wait:
			for {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("hail grpc: %v: %s", err, stderr.String())
					}
					break wait
				case <-tick.C:
					if v := vmRSS(cmd.Process.Pid); v > 0 {
						rss = append(rss, v)
					}
				case <-time.After(dur + time.Minute):
					cmd.Process.Signal(syscall.SIGKILL)
					t.Fatal("hail grpc did not end")
				}
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				StatusCodeDistribution map[string]int64
				ErrorDistribution      map[string]int64
				Hail                   struct {
					Counts struct{ Requests, Responses int64 }
					GRPC   struct{ Calls, Retries int64 }
					Series []struct {
						Index    int `json:"t"`
						Requests int64
						Span     float64
					}
				}
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			c := r.Hail.Counts
			t.Logf("%s: %d calls (%v, errors %v), RSS samples %d", dur, r.Hail.GRPC.Calls, r.StatusCodeDistribution, r.ErrorDistribution, len(rss))
			if server := srv.TotalCalls(); server != r.Hail.GRPC.Calls || c.Requests != r.Hail.GRPC.Calls || c.Responses != c.Requests {
				t.Errorf("the server counted %d calls; hail %d calls, %d requests, %d responses", server, r.Hail.GRPC.Calls, c.Requests, c.Responses)
			}
			if r.StatusCodeDistribution["OK"] < c.Requests*9/10 {
				t.Errorf("statuses %v", r.StatusCodeDistribution)
			}
			secs := int(dur / time.Second)
			if n := len(r.Hail.Series); n < secs || n > secs+1 {
				t.Errorf("series has %d entries, want %d", n, secs)
			}
			for i, s := range r.Hail.Series[:min(secs, len(r.Hail.Series))] {
				if s.Index != i || s.Requests == 0 || s.Span < 0.999 {
					t.Fatalf("series gap at %d: %+v", i, s)
				}
			}
			warm, window := len(rss)/6, max(len(rss)/6, 3) // 5 s and 5 samples in 30 s
			if len(rss) < warm+2*window {
				t.Fatalf("only %d RSS samples", len(rss))
			}
			early, late := medianOf(rss[warm:warm+window]), medianOf(rss[len(rss)-window:])
			t.Logf("RSS median early %.1f MiB, late %.1f MiB", float64(early)/(1<<20), float64(late)/(1<<20))
			if float64(late) > float64(early)+max(0.1*float64(early), 2<<20) {
				t.Errorf("RSS grew from %d to %d bytes after warm-up (more than 10%% and 2 MiB)", early, late)
			}
		})
	}
}

// vmRSS is process pid's resident set size, 0 when it cannot be read.
func vmRSS(pid int) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func medianOf(xs []int64) int64 {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[len(ys)/2]
}
