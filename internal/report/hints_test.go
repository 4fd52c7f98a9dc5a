package report

import (
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/stats"
)

// Each kind with a known fix gets exactly one hint line, naming the kind and its count; kinds
// without one get none.
func TestHints(t *testing.T) {
	var tot stats.Totals
	tot.Errors[stats.ErrHTTP2Conn] = 7
	tot.Errors[stats.ErrNoLocalPorts] = 3
	tot.Errors[stats.ErrTimeout] = 5 // the server's slowness: no generator-side fix
	got := hints(&tot, nil)
	if len(got) != 2 {
		t.Fatalf("hints %q, want 2", got)
	}
	for _, want := range []string{"(3 × no free local ports)", "(7 × http2 connection error)"} {
		n := 0
		for _, h := range got {
			n += strings.Count(h, want)
		}
		if n != 1 {
			t.Errorf("%q appears %d times in %q", want, n, got)
		}
	}
	for k, h := range hintFor {
		if strings.Contains(h, "\n") || !strings.Contains(h, ":") {
			t.Errorf("hint for %s is not one line saying what and what to do: %q", k, h)
		}
	}
}
