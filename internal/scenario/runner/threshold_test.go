package runner

import (
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/enginetest"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
)

// A run in which one request in 20 is never answered cannot pass
// "p99 < 100ms" with -t 200ms: latency thresholds judge every sent
// request, a timed-out one at its elapsed time; p99_ok judges the
// responses only, as oha's keys do.
func TestThresholdsJudgeEverySentRequest(t *testing.T) {
	t.Parallel()
	s := enginetest.StartTruth(t, enginetest.HTTP1)
	src := "base: " + s.URL + "\nconnections: 20\nrequests: 400\ntimeout: 200ms\nsteps:\n  - name: get\n    path: /drop?every=20\n" +
		"thresholds:\n  - p99 < 100ms\n  - p99_ok < 100ms\n  - max < 150ms\n  - max_ok < 150ms\n  - mean < 5s\n  - {expr: p99 < 100ms, step: get}\n"
	res, _ := runFile(t, src, s.URL, nil, nil)
	if s.Dropped() != 20 {
		t.Fatalf("the server left %d unanswered, want 20", s.Dropped())
	}
	want := map[string]bool{"p99 < 100ms": false, "p99_ok < 100ms": true, "max < 150ms": false, "max_ok < 150ms": true, "mean < 5s": true}
	for _, th := range res.Hail.Thresholds {
		if th.Step != "" {
			if th.Pass {
				t.Errorf("step %s: %s passed (measured %s): the step's timeouts count", th.Step, th.Expr, th.Measured)
			}
			continue
		}
		if w, ok := want[th.Expr]; !ok || th.Pass != w {
			t.Errorf("%s: pass %v (measured %s), want %v", th.Expr, th.Pass, th.Measured, w)
		}
	}
	if _, err := threshold.Parse("rps_ok > 5"); err == nil || !strings.Contains(err.Error(), "_ok (responses only) goes with a latency") {
		t.Errorf("rps_ok: %v", err)
	}
}
