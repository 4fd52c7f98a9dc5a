package report

import (
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// A large read lag against the gaps between tokens names hail, not the
// server, and marks ITL affected; a small one changes nothing.
func TestStreamVerdict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		lag, itl  time.Duration
		generator bool
	}{
		{"lag small", 50 * time.Microsecond, 5 * time.Millisecond, false},
		{"lag over 1ms but small against the gaps", 2 * time.Millisecond, 50 * time.Millisecond, false},
		{"lag large", 8 * time.Millisecond, 5 * time.Millisecond, true},
	} {
		tot := stats.NewTotals()
		tot.Status[200] = 10
		tot.Stream = stats.NewStreams(true)
		s := tot.Stream
		s.Streams, s.Completed, s.Events = 10, 10, 1000
		for range 1000 {
			_ = s.ReadLag.RecordValue(int64(c.lag))
			_ = s.Gap.RecordValue(int64(c.itl))
			_ = s.Tokens.ITL.RecordValue(int64(c.itl))
		}
		r := Build(Input{Totals: tot, Elapsed: time.Second, Cores: 1, Start: time.Now()})
		v := r.Hail.Verdict
		if v.GeneratorLimited != c.generator || r.Hail.LLM.ITLAffected != c.generator ||
			c.generator && (v.Bottleneck != BottleneckGenerator || !strings.Contains(v.Reasons[0], "read stream events late")) {
			t.Errorf("%s: verdict %+v, ITL affected %v", c.name, v, r.Hail.LLM.ITLAffected)
		}
	}
}
