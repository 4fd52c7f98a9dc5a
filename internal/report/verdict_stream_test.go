package report

import (
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// A large read lag against the gaps between tokens is evidence that hail
// was slowed: with nothing else to blame the verdict names hail, with a
// headline of its own, and marks ITL affected; when the target's
// backpressure limited the run, the verdict stays the target's and ITL is
// still marked affected; a small lag changes nothing.
func TestStreamVerdict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		lag, itl     time.Duration
		backpressure bool
		kind         string
		late         bool
	}{
		{"lag small", 50 * time.Microsecond, 5 * time.Millisecond, false, result.BottleneckNone, false},
		{"lag over 1ms but small against the gaps", 2 * time.Millisecond, 50 * time.Millisecond, false, result.BottleneckNone, false},
		{"lag large", 8 * time.Millisecond, 5 * time.Millisecond, false, result.BottleneckGenerator, true},
		{"lag large, connections full", 8 * time.Millisecond, 5 * time.Millisecond, true, result.BottleneckTarget, true},
	} {
		tot := stats.NewTotals()
		tot.Status[200] = 1000
		tot.Stream = stats.NewStreams(true)
		s := tot.Stream
		s.Streams, s.Completed, s.Events = 1000, 1000, 1000
		for range 1000 {
			_ = s.ReadLag.RecordValue(int64(c.lag))
			_ = s.Gap.RecordValue(int64(c.itl))
			_ = s.Tokens.ITL.RecordValue(int64(c.itl))
			_ = tot.Lag.RecordValue(int64(10 * time.Microsecond))
		}
		if c.backpressure {
			tot.Queued = 500
			for range 1000 {
				_ = tot.ConnWait.RecordValue(int64(200 * time.Millisecond))
			}
		}
		r := Build(Input{Totals: tot, Elapsed: time.Second, Cores: 1, Start: time.Now(), Open: true, Connections: 4})
		v := r.Hail.Verdict
		head, _ := Headline(v)
		if v.Bottleneck != c.kind || v.ReadLate != c.late || r.Hail.LLM.ITLAffected != c.late {
			t.Errorf("%s: verdict %+v, ITL affected %v; want %s, read late %v", c.name, v, r.Hail.LLM.ITLAffected, c.kind, c.late)
		}
		if said := strings.Contains(strings.Join(v.Reasons, "\n"), "hail read the stream late"); said != c.late {
			t.Errorf("%s: reasons %q", c.name, v.Reasons)
		}
		if c.kind == result.BottleneckGenerator && !strings.Contains(head, "(hail read the stream late)") || strings.Contains(head, "own CPU") {
			t.Errorf("%s: headline %q", c.name, head)
		}
	}
}
