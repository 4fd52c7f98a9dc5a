package run

import (
	"testing"

	"hail/internal/stats"
)

// Every engine hands every request to the per-request log exactly once,
// with consistent times, its outcome and its connection.
func TestTraceEveryRequest(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		base, _ := startServe(t)
		for _, open := range []bool{false, true} {
			p := newPlan(t, base+"/?status=503:10", engine)
			p.Requests, p.Connections = 1500, 4
			if open {
				p.Rate = 3000
			}
			tr := stats.NewTracer(0)
			var recs []stats.TraceRecord
			done := make(chan struct{})
			go func() {
				defer close(done)
				for b := range tr.Batches() {
					recs = append(recs, b...)
					tr.Recycle(b)
				}
			}()
			res := mustRun(t, p, Options{Tracer: tr})
			tr.Close()
			<-done
			if int64(len(recs)) != res.Hail.Counts.Requests || len(recs) != 1500 {
				t.Fatalf("open %v: %d records, %d requests", open, len(recs), res.Hail.Counts.Requests)
			}
			var bad, sum int64
			conns := map[int32]bool{}
			for _, r := range recs {
				if r.Status != 200 && r.Status != 503 || r.End < r.Start || r.Start < r.Intended || r.Body < 0 || r.FirstByte == 0 {
					t.Fatalf("open %v: record %+v", open, r)
				}
				if r.Status == 503 {
					bad++
				}
				sum += r.End - r.Intended
				conns[r.Conn] = true
			}
			if bad != res.StatusCodeDistribution["503"] || sum != res.Hail.Counts.LatencySumNS {
				t.Errorf("open %v: %d 503s (report %d), latency sum %d (report %d)", open, bad, res.StatusCodeDistribution["503"], sum, res.Hail.Counts.LatencySumNS)
			}
			for c := range conns {
				if c < 0 || c >= 4 {
					t.Errorf("connection number %d of 4", c)
				}
			}
		}
	})
}
