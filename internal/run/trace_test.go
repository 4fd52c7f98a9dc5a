package run

import (
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// traceRun runs p with a Tracer and returns every record it delivered.
func traceRun(t *testing.T, p *plan.Plan) ([]stats.TraceRecord, *result.Result) {
	t.Helper()
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
	return recs, res
}

// checkTrace checks that every one of n requests was traced exactly once,
// with consistent times, its outcome and its connection (of conns), and
// that the records add up to the report.
func checkTrace(t *testing.T, what string, recs []stats.TraceRecord, res *result.Result, n, conns int) {
	t.Helper()
	c := res.Hail.Counts
	if int64(len(recs)) != c.Requests || len(recs) != n {
		t.Fatalf("%s: %d records, %d requests, want %d", what, len(recs), c.Requests, n)
	}
	var bad, failed, sum int64
	for _, r := range recs {
		if r.Start < r.Intended || r.End < r.Start || r.Conn < 0 || int(r.Conn) >= conns {
			t.Fatalf("%s: record %+v (%d connections)", what, r, conns)
		}
		if _, ok := r.Failed(); ok {
			if r.Status != 0 {
				t.Fatalf("%s: failed record with a status: %+v", what, r)
			}
			failed++
			continue
		}
		if r.Status != 200 && r.Status != 503 || r.Body < 0 || r.FirstByte == 0 {
			t.Fatalf("%s: record %+v", what, r)
		}
		if r.Status == 503 {
			bad++
		}
		sum += r.End - r.Intended
	}
	if bad != res.StatusCodeDistribution["503"] || failed != c.Errors || sum != int64(c.LatencySum) {
		t.Errorf("%s: %d 503s (report %d), %d errors (report %d), latency sum %d (report %d)", what,
			bad, res.StatusCodeDistribution["503"], failed, c.Errors, sum, c.LatencySum)
	}
}

// Every engine hands every request to the per-request log exactly once,
// with consistent times, its outcome and its connection.
func TestTraceEveryRequest(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, engine string) {
		base, _ := servetest.Start(t)
		for _, open := range []bool{false, true} {
			p := newPlan(t, base+"/?status=503:10", engine)
			p.Requests, p.Connections = 1500, 4
			if open {
				p.Rate = 3000
			}
			recs, res := traceRun(t, p)
			what := map[bool]string{false: "closed", true: "open"}[open]
			checkTrace(t, what, recs, res, 1500, 4)
		}
	})
}

// The HTTP/2 and HTTP/3 engines trace every request too: responses, stream
// resets, and the setup time of each connection on the first request that
// used it.
func TestTraceH2H3(t *testing.T) {
	t.Parallel()
	// h2c: every 10th request is a 503, every 25th is reset by the server.
	var seen atomic.Int64
	h := h3serve.Handler()
	h2c := servetest.StartH2(t, nil, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := seen.Add(1)
		if n%25 == 0 {
			panic(http.ErrAbortHandler)
		}
		if n%10 == 0 {
			r.URL.RawQuery = "status=503"
		}
		h.ServeHTTP(w, r)
	}))

	h3 := h3serve.New(h3serve.Config{Addr: "127.0.0.1:0"})
	a, err := h3.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go h3.Serve()
	t.Cleanup(func() { h3.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, h3.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ name, url, version, ca string }{
		{"h2c", h2c.URL + "/", "2", ""},
		{"h3", "https://" + a.String() + "/", "3", ca},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, open := range []bool{false, true} {
				seen.Store(0)
				p := newPlan(t, tc.url, "auto")
				p.Requests, p.Connections, p.Streams, p.HTTPVersion, p.CACert = 500, 4, 4, plan.Proto(tc.version), tc.ca
				if open {
					p.Rate = 3000
				}
				recs, res := traceRun(t, p)
				what := map[bool]string{false: "closed", true: "open"}[open]
				if res.Hail.Engine != tc.name[:2] {
					t.Fatalf("%s: engine %q", what, res.Hail.Engine)
				}
				checkTrace(t, what, recs, res, 500, 4)
				c := res.Hail.Counts
				if tc.name == "h2c" && (c.Errors != 20 || res.StatusCodeDistribution["503"] != 40) {
					t.Errorf("%s: %d errors %v, %d 503s; want 20 resets, 40 503s", what, c.Errors, res.ErrorDistribution, res.StatusCodeDistribution["503"])
				}
				var connects int64
				for _, r := range recs {
					if r.Connect > 0 {
						connects++
						if r.DNS < 0 || r.DNS > r.Connect {
							t.Errorf("%s: record %+v", what, r)
						}
					}
				}
				if connects < 1 || connects > c.Connects {
					t.Errorf("%s: %d records with a connection setup time, %d connections opened", what, connects, c.Connects)
				}
			}
		})
	}
}
