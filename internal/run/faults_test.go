package run

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/hostile"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// Every hostile server behaviour yields counted, named outcomes: never a
// panic, a hang or a wrong count, and the run ends on time.
func TestFaultSuite(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode    hostile.Mode
		n       uint64
		dur     time.Duration // -z instead of -n
		timeout time.Duration
		want    []string // allowed outcome keys: error kinds or status codes
		must    []string // outcomes that must appear
		limit   time.Duration
		size    int64 // HugeBody's body
		soak    bool  // the soak tier's
	}{
		{mode: hostile.Reset, n: 20, want: []string{"connection closed mid-response", "connection reset by peer"}},
		{mode: hostile.CloseNoResponse, n: 20, want: []string{"connection closed before response"}, must: []string{"connection closed before response"}},
		{mode: hostile.GarbageStatus, n: 20, want: []string{"malformed status line"}, must: []string{"malformed status line"}},
		{mode: hostile.HugeHeader, n: 10, want: []string{"header block too large"}, must: []string{"header block too large"}},
		{mode: hostile.ShortBody, n: 20, want: []string{"connection closed mid-response"}, must: []string{"connection closed mid-response"}},
		{mode: hostile.LongBody, n: 20, want: []string{"200", "malformed status line"}, must: []string{"200", "malformed status line"}},
		{mode: hostile.BadChunk, n: 20, want: []string{"bad chunked encoding"}, must: []string{"bad chunked encoding"}},
		{mode: hostile.Slowloris, n: 4, timeout: 500 * time.Millisecond, want: []string{"request timeout"}, must: []string{"request timeout"}},
		// Bodies of 64 MiB, a thousand times hail's buffer; the soak tier
		// streams two of 1 GiB (1.6 s of CPU here, on both engines).
		{mode: hostile.HugeBody, n: 2, size: 64 << 20, timeout: 60 * time.Second, want: []string{"200"}, must: []string{"200"}, limit: 30 * time.Second},
		{mode: hostile.HugeBody, n: 2, size: 1 << 30, soak: true, timeout: 60 * time.Second, want: []string{"200"}, must: []string{"200"}, limit: 30 * time.Second},
		{mode: hostile.Continue, n: 20, want: []string{"200"}, must: []string{"200"}},
		{mode: hostile.NeverRead, dur: time.Second, want: []string{"aborted due to deadline"}, must: []string{"aborted due to deadline"}},
		{mode: hostile.NeverRead, n: 4, timeout: 300 * time.Millisecond, want: []string{"request timeout"}, must: []string{"request timeout"}},
		{mode: hostile.NoAccept, n: 8, timeout: 400 * time.Millisecond, want: []string{"connect timeout", "request timeout"}, must: []string{"connect timeout"}},
		// Without -t nothing but the connect timeout can end a request that
		// never got its connection (the dialer's own deadline once named
		// some "request timeout").
		{mode: hostile.NoAccept, n: 8, want: []string{"connect timeout"}, must: []string{"connect timeout"}},
		{mode: hostile.HalfThenHang, n: 4, timeout: 300 * time.Millisecond, want: []string{"request timeout"}, must: []string{"request timeout"}},
		{mode: hostile.UpgradeSwitching, n: 10, want: []string{"unexpected protocol upgrade"}, must: []string{"unexpected protocol upgrade"}},
	}
	forEngines(t, func(t *testing.T, engine string) {
		for _, tc := range cases {
			name := string(tc.mode)
			if tc.dur > 0 {
				name += "-deadline"
			} else if tc.timeout > 0 {
				name += "-timeout"
			}
			if tc.size > 0 {
				name += fmt.Sprintf("-%dMiB", tc.size>>20)
			}
			t.Run(name, func(t *testing.T) {
				if tc.soak {
					testtier.Require(t, testtier.Soak)
				}
				t.Parallel()
				srv, err := hostile.Start(tc.mode)
				if tc.size > 0 {
					srv, err = hostile.StartHugeBody(tc.size)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				p := newPlan(t, srv.URL(), engine)
				p.Connections, p.Requests, p.Duration, p.Timeout = 2, tc.n, tc.dur, tc.timeout
				p.ConnectTimeout = 300 * time.Millisecond
				limit := tc.limit
				if limit == 0 {
					limit = 5 * time.Second
				}
				start := time.Now()
				res := mustRun(t, p, Options{})
				if el := time.Since(start); el > limit {
					t.Errorf("run took %v, limit %v", el, limit)
				}
				got := map[string]int64{}
				for k, v := range res.StatusCodeDistribution {
					got[k] += v
				}
				for k, v := range res.ErrorDistribution {
					got[k] += v
				}
				var total int64
				keys := []string{}
				for k, v := range got {
					total += v
					keys = append(keys, k)
					if !contains(tc.want, k) {
						t.Errorf("unexpected outcome %q ×%d (all: %v)", k, v, got)
					}
				}
				sort.Strings(keys)
				for _, k := range tc.must {
					if got[k] == 0 {
						t.Errorf("no %q outcome (all: %v)", k, got)
					}
				}
				if tc.n > 0 && total != int64(tc.n) {
					t.Errorf("%d outcomes, want exactly %d (%v)", total, tc.n, got)
				}
				if tc.mode == hostile.HugeBody && res.Summary.TotalData != int64(tc.n)*tc.size {
					t.Errorf("%d MiB bodies: total data %d, want %d", tc.size>>20, res.Summary.TotalData, int64(tc.n)*tc.size)
				}
				if total != res.Hail.Counts.Requests {
					t.Errorf("distributions hold %d, counts say %d", total, res.Hail.Counts.Requests)
				}
				t.Logf("%s: %s", name, strings.Join(keys, ", "))
			})
		}
	})
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
