package stream

import (
	"fmt"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// BenchmarkMeterEventStreams is BenchmarkMeterEvent with the events spread
// over many streams, as a run's connections spread them: each event goes to
// the next of n meters in turn. It measures the stream path's instructions
// and memory with nothing else between events (in a run, the kernel's
// network stack is), and proves it allocation-free however many streams
// take turns (a stream's per-chunk values, kept to its end, grow its
// buffers by doubling: a few bytes per event, amortized).
func BenchmarkMeterEventStreams(b *testing.B) {
	for _, n := range []int{1, 200, 5000} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			rec := stats.NewRecorder()
			cfg := &Config{Tokens: true, Idle: time.Minute}
			meters := make([]*Meter, n)
			for i := range meters {
				meters[i] = NewMeter(cfg)
				meters[i].Begin(rec, uint64(i))
				meters[i].StreamHead()
			}
			ev := []byte(chat(" token"))
			b.SetBytes(int64(len(ev)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				m := meters[i%n]
				m.Time(time.Duration(i), time.Duration(i))
				m.StreamBody(ev)
				if len(m.gaps) >= 4096 { // keep the gap buffers bounded (what flush recorded)
					m.flush()
					m.gaps, m.ks, m.chunkGaps = m.gaps[:0], m.ks[:0], 0
				}
			}
		})
	}
}
