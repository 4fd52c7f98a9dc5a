package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// A scenario's setup and teardown are reported apart from the load, in
// every format, with the step that stopped one.
func TestPhasesInReports(t *testing.T) {
	r := runWith(time.Millisecond, 100, "http://x/")
	seed, cleanup := stats.NewTotals(), stats.NewTotals()
	for range 10 {
		_ = seed.LatencyOK.RecordValue(2e6)
		seed.Status[201]++
	}
	cleanup.Status[204] = 3
	_ = cleanup.LatencyOK.RecordValue(1e6)
	cleanup.Errors[stats.ErrCheckStatus] = 1
	r.Hail.Setup = &result.Phase{Steps: BuildSteps([]string{"seed"}, []*stats.Totals{seed}, nil, time.Second), Duration: 250 * time.Millisecond}
	r.Hail.Teardown = &result.Phase{Steps: BuildSteps([]string{"cleanup"}, []*stats.Totals{cleanup}, nil, time.Second), Duration: 100 * time.Millisecond,
		Failed: "cleanup: status 500, check status 204 failed"}
	var txt, md, page bytes.Buffer
	if err := WriteText(&txt, r, TextOptions{Unit: "ms"}); err != nil {
		t.Fatal(err)
	}
	_ = WriteMarkdown(&md, r)
	_ = WriteHTML(&page, r)
	for name, c := range map[string]struct {
		out  string
		want []string
	}{
		"text":     {txt.String(), []string{"Setup (0.25s, not in the numbers above):", "seed ×10  201×10", "Teardown (0.10s", "cleanup ×4", "check failed: status ×1", "stopped: cleanup: status 500"}},
		"markdown": {md.String(), []string{"| setup step | requests |", "| seed | 10 | 201×10 |", "| teardown step |", "Teardown stopped: cleanup"}},
		"html":     {page.String(), []string{">Setup<", ">Teardown<", "<th>seed</th><td>10</td>", "stopped: cleanup: status 500"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.out, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, c.out)
			}
		}
	}
	if r.Hail.Counts.Requests != 100 {
		t.Errorf("the load's counts changed: %d", r.Hail.Counts.Requests)
	}
}
