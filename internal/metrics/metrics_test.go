package metrics

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hail-loadgen/hail/internal/stats"
)

func TestExporter(t *testing.T) {
	rec := stats.NewRecorder()
	for i := range 1000 {
		rec.Response(200, int64(200_000+i*1000), 100_000, 12, 80)
	}
	rec.Response(503, 2_000_000, 1_000_000, 0, 60)
	rec.Error(stats.ErrReset)
	rec.Failed(stats.ErrTimeout, 2_000_000_000) // sent, never answered: at its elapsed time
	rec.Failed(stats.ErrAborted, 50_000_000)    // cut off by the run's end: in no latency
	rec.NotSent(stats.ErrConnectRefused)        // never sent
	rec.Delay(30_000, 0)
	coll := stats.NewCollector([]*stats.Recorder{rec}, time.Now().Add(-time.Second))
	coll.Tick(time.Now())

	e := NewExporter(Info{URL: "http://127.0.0.1/", Model: "open", Engine: "net", Shard: "1/3"}, prometheus.Labels{"shard": "1"})
	srv, err := Serve("127.0.0.1:0", e)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func() string {
		resp, err := http.Get("http://" + srv.Addr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if body := get(); !strings.Contains(body, "hail_run_info{") || strings.Contains(body, "hail_requests_total") {
		t.Errorf("before the run:\n%s", body)
	}
	e.Observe(coll)
	body := get()
	for _, want := range []string{
		`hail_requests_total{shard="1"} 1005`,
		`hail_not_sent_requests_total{shard="1"} 1`,
		`hail_failed_sent_requests_total{shard="1"} 1`,
		`hail_cut_off_requests_total{shard="1"} 1`,
		`hail_all_sent_duration_seconds_bucket{shard="1",le="1"} 1001`,
		`hail_all_sent_duration_seconds_bucket{shard="1",le="2.5"} 1002`,
		`hail_all_sent_duration_seconds_count{shard="1"} 1002`,
		`hail_responses_total{code="200",shard="1"} 1000`,
		`hail_responses_total{code="503",shard="1"} 1`,
		`hail_errors_total{kind="connection reset by peer",shard="1"} 1`,
		`hail_request_duration_seconds_bucket{shard="1",le="0.00025"} 51`,
		`hail_request_duration_seconds_bucket{shard="1",le="0.0025"} 1001`,
		`hail_request_duration_seconds_count{shard="1"} 1001`,
		`hail_schedule_lag_seconds_count{shard="1"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	if _, err := Serve(srv.Addr(), e); err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("second server on a busy address: %v", err)
	}
}

// A streaming run's events, output tokens and truncated streams are
// counters, as of the last whole second.
func TestExporterStreams(t *testing.T) {
	rec := stats.NewRecorder()
	start := time.Now().Add(-2 * time.Second)
	coll := stats.NewCollector([]*stats.Recorder{rec}, start)
	rec.StreamBegin(true)
	for range 5 {
		rec.StreamEvent()
		rec.StreamChunk(2)
	}
	rec.StreamEnd(&stats.StreamSample{Tokens: true, Counted: 10, Out: 10, In: 3, FirstEvent: 1, TTFT: 1, TTFTSent: 1, TPOT: 1, E2E: 1, E2ESent: 1})
	rec.StreamBegin(true)
	rec.StreamEvent()
	rec.StreamEnd(&stats.StreamSample{Truncated: true, FirstEvent: -1, TTFT: -1, Tokens: true})
	coll.Tick(start.Add(time.Second))
	e := NewExporter(Info{}, nil)
	e.Observe(coll)
	srv, err := Serve("127.0.0.1:0", e)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"hail_stream_events_total 6", "hail_output_tokens_total 10", "hail_truncated_streams_total 1"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("no %q in\n%s", want, b)
		}
	}
}
