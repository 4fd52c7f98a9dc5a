// Package metrics serves a run's live measurements as Prometheus /
// OpenMetrics metrics (--metrics-addr). It reads the stats.Collector's
// running totals when scraped, so it adds nothing to the hot path: values
// are as of the collector's last once-a-second tick.
package metrics

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
)

// LatencyBuckets are the upper bounds (seconds) of the latency histogram.
var LatencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// LagBuckets are the upper bounds (seconds) of the schedule-lag histogram.
var LagBuckets = []float64{0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 1}

// TokenBuckets are the upper bounds (seconds) of the histograms of the
// time between tokens (hail_llm_tpot_seconds, hail_llm_itl_seconds).
var TokenBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5}

// Exporter is a prometheus.Collector over a run's stats.Collector.
type Exporter struct {
	mu   sync.Mutex
	coll *stats.Collector

	requests, responses, errs, bodyBytes, sentBytes, queued, unsent *prometheus.Desc
	notSent, failedSent, cutOff, allSent                            *prometheus.Desc
	latency, lag, connWait, firstByte                               *prometheus.Desc
	inFlight, connsOpen, cpu, targetRSS, targetCPU, elapsed         *prometheus.Desc
	events, tokens, truncated                                       *prometheus.Desc
	streamsLive, inTokens, completed, good, goodTokens              *prometheus.Desc
	ttft, ttftSent, tpot, itl, e2e, e2eSent                         *prometheus.Desc
	info                                                            *prometheus.Desc
	infoLabels                                                      []string
}

// Info labels hail_run_info: the target URL, model, engine and shard.
type Info struct {
	URL, Model, Engine, Shard string
}

// NewExporter returns an Exporter; constLabels are added to every metric
// (a shard label lets a dashboard sum over the shards of a distributed run).
func NewExporter(info Info, constLabels prometheus.Labels) *Exporter {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("hail_"+name, help, labels, constLabels)
	}
	return &Exporter{
		requests:    d("requests_total", "Requests ended (responses and errors)."),
		responses:   d("responses_total", "Requests that got an HTTP response, by status code.", "code"),
		errs:        d("errors_total", "Requests that failed without a response, by kind.", "kind"),
		bodyBytes:   d("response_body_bytes_total", "Response body bytes received."),
		sentBytes:   d("sent_bytes_total", "Request bytes written."),
		queued:      d("queued_requests_total", "Open model: requests that waited for a free connection."),
		latency:     d("request_duration_seconds", "Latency of responses: from the intended send time (open model) or the send (closed) to the last byte."),
		lag:         d("schedule_lag_seconds", "Open model: hail's own lateness in sending a request (its send delay less any wait for a free connection)."),
		connWait:    d("connection_wait_seconds", "Open model: how long a request waited because every connection had a request in flight (the target's backpressure)."),
		unsent:      d("unsent_requests_total", "Requests taken but never sent because the run stopped first (not counted as requests)."),
		notSent:     d("not_sent_requests_total", "Requests that failed before a byte was written (connection refused, connect timeout, TLS…): errors, never sent."),
		failedSent:  d("failed_sent_requests_total", "Sent requests that failed (a timeout, a reset…), not cut off by the run's end: in hail_all_sent_duration_seconds."),
		cutOff:      d("cut_off_requests_total", "Sent requests the run's end (deadline, interrupt) aborted: in no latency."),
		allSent:     d("all_sent_duration_seconds", "Latency of every sent request: a response at its latency, a failure at its elapsed time (requests cut off by the run's end left out)."),
		firstByte:   d("first_byte_seconds", "Time from send to the first response byte."),
		inFlight:    d("in_flight_requests", "Requests in flight at the last tick."),
		connsOpen:   d("open_connections", "Connections open at the last tick."),
		cpu:         d("generator_cpu_cores", "hail's own CPU use in the last second, in cores."),
		targetRSS:   d("target_rss_bytes", "The monitored target process's resident memory (--target-pid)."),
		targetCPU:   d("target_cpu_cores", "The monitored target process's CPU use in the last second, in cores (--target-pid)."),
		elapsed:     d("run_elapsed_seconds", "Seconds since the run started."),
		events:      d("stream_events_total", "Server-sent events read from streaming responses, as of the last whole second."),
		tokens:      d("output_tokens_total", "hail llm: output tokens streamed, as of the last whole second (a failed or cut stream's taken back when it ends)."),
		truncated:   d("truncated_streams_total", "Streams still running when the run's drain ended: cut by hail, not errors."),
		streamsLive: d("streams_in_flight", "Streams begun and not yet ended, as of the last whole second."),
		inTokens:    d("llm_input_tokens_total", "hail llm: input tokens of the completed requests (the server's usage, else as asked)."),
		completed:   d("llm_completed_requests_total", "hail llm: requests whose stream ended well."),
		good:        d("llm_goodput_requests_total", "hail llm: completed requests that met every --slo objective."),
		goodTokens:  d("llm_goodput_output_tokens_total", "hail llm: output tokens of the requests that met every --slo objective."),
		ttft:        d("llm_ttft_seconds", "hail llm: time to first token from the request's intended send time (the queue included)."),
		ttftSent:    d("llm_ttft_from_send_seconds", "hail llm: time to first token from the request's actual send."),
		tpot:        d("llm_tpot_seconds", "hail llm: time per output token, (last token − first token) ÷ (output tokens − 1), per completed request."),
		itl:         d("llm_itl_seconds", "hail llm: inter-token latency, per token (a chunk of k tokens after a gap g counts k values of g/k)."),
		e2e:         d("llm_e2e_seconds", "hail llm: end-to-end latency of a completed request, from its intended send time."),
		e2eSent:     d("llm_e2e_from_send_seconds", "hail llm: end-to-end latency of a completed request, from its actual send."),
		info:        d("run_info", "The run: target URL, model, engine and sharding (I/N).", "url", "model", "engine", "sharding"),
		infoLabels:  []string{info.URL, info.Model, info.Engine, info.Shard},
	}
}

// Observe starts exporting c (run.Options.Observe); c then drains its
// stream histograms every second (stats.Collector.LiveStreams), so that
// TTFT and ITL move while the run goes.
func (e *Exporter) Observe(c *stats.Collector) {
	c.LiveStreams()
	e.mu.Lock()
	e.coll = c
	e.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{e.requests, e.responses, e.errs, e.bodyBytes, e.sentBytes, e.queued, e.unsent,
		e.notSent, e.failedSent, e.cutOff, e.allSent, e.latency, e.lag, e.connWait, e.firstByte, e.inFlight, e.connsOpen, e.cpu, e.targetRSS, e.targetCPU, e.elapsed,
		e.events, e.tokens, e.truncated, e.streamsLive, e.inTokens, e.completed, e.good, e.goodTokens,
		e.ttft, e.ttftSent, e.tpot, e.itl, e.e2e, e.e2eSent, e.info} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(e.info, prometheus.GaugeValue, 1, e.infoLabels...)
	e.mu.Lock()
	c := e.coll
	e.mu.Unlock()
	if c == nil {
		return // the run has not started yet
	}
	snap := c.Snapshot()
	c.View(func(t *stats.Totals, series []stats.Second) {
		counter := func(d *prometheus.Desc, v int64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
		}
		counter(e.requests, t.Requests())
		for code, n := range t.Status {
			if n > 0 {
				counter(e.responses, n, status.Name(code))
			}
		}
		for k, n := range t.Errors {
			if n > 0 {
				counter(e.errs, n, stats.ErrorKind(k).String())
			}
		}
		counter(e.bodyBytes, t.BodyBytes)
		counter(e.sentBytes, t.SentBytes)
		counter(e.queued, t.Queued)
		counter(e.unsent, t.Unsent)
		counter(e.notSent, t.NotSent)
		counter(e.failedSent, t.Failed.TotalCount())
		counter(e.cutOff, t.CutOff())
		ch <- histogram(e.latency, LatencyBuckets, float64(t.LatencySum)/1e9, t.LatencyOK, t.LatencyBad)
		ch <- histogram(e.allSent, LatencyBuckets, float64(t.LatencySum+t.FailedSum)/1e9, t.LatencyOK, t.LatencyBad, t.Failed)
		ch <- histogram(e.lag, LagBuckets, -1, t.Lag)
		ch <- histogram(e.connWait, LagBuckets, -1, t.ConnWait)
		ch <- histogram(e.firstByte, LatencyBuckets, -1, t.FirstByte)
		var events, tokens int64
		for i := range series {
			events += series[i].Events
			tokens += series[i].Tokens
		}
		if events > 0 || t.Truncated() > 0 {
			counter(e.events, events)
			counter(e.tokens, tokens)
			counter(e.truncated, t.Truncated())
		}
		if st := t.Stream; st != nil {
			ch <- prometheus.MustNewConstMetric(e.streamsLive, prometheus.GaugeValue, float64(st.InFlight()))
			if k := st.Tokens; k != nil {
				counter(e.inTokens, k.InSum)
				counter(e.completed, st.Completed)
				counter(e.good, k.Good)
				counter(e.goodTokens, k.GoodTokens)
				ch <- histogram(e.ttft, LatencyBuckets, -1, k.TTFT)
				ch <- histogram(e.ttftSent, LatencyBuckets, -1, k.TTFTSent)
				ch <- histogram(e.tpot, TokenBuckets, -1, k.TPOT)
				ch <- histogram(e.itl, TokenBuckets, -1, k.ITL)
				ch <- histogram(e.e2e, LatencyBuckets, -1, k.E2E)
				ch <- histogram(e.e2eSent, LatencyBuckets, -1, k.E2ESent)
			}
		}
	})
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	gauge(e.inFlight, float64(snap.Last.InFlight))
	gauge(e.connsOpen, float64(snap.Last.ConnsOpen))
	gauge(e.cpu, snap.Last.CPU)
	if snap.Last.TargetRSS > 0 {
		gauge(e.targetRSS, float64(snap.Last.TargetRSS))
		gauge(e.targetCPU, snap.Last.TargetCPU)
	}
	gauge(e.elapsed, snap.Elapsed.Seconds())
}

// histogram turns HdrHistograms of nanoseconds into one Prometheus
// histogram with the given bucket bounds (seconds). sum < 0 estimates the
// sum from the histograms' means.
func histogram(d *prometheus.Desc, bounds []float64, sum float64, hs ...*hdr.Histogram) prometheus.Metric {
	counts := make(map[float64]uint64, len(bounds))
	var total uint64
	est := 0.0
	for _, h := range hs {
		n := h.TotalCount()
		if n == 0 {
			continue
		}
		total += uint64(n)
		est += h.Mean() * float64(n) / 1e9
		for _, bar := range h.Distribution() {
			if bar.Count == 0 {
				continue
			}
			v := float64(bar.From) / 1e9
			for _, b := range bounds {
				if v <= b {
					counts[b] += uint64(bar.Count)
				}
			}
		}
	}
	for _, b := range bounds {
		if _, ok := counts[b]; !ok {
			counts[b] = 0
		}
	}
	if sum < 0 {
		sum = est
	}
	return prometheus.MustNewConstHistogram(d, total, sum, counts)
}

// Server serves /metrics.
type Server struct {
	mux  *http.ServeMux
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Serve starts serving e's metrics (and Go runtime metrics of hail itself)
// at addr's /metrics.
func Serve(addr string, e *Exporter) (*Server, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(e); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %v", addr, unwrapOpErr(err))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/metrics", http.StatusFound)
	})
	s := &Server{mux: mux, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Handle serves h at pattern beside /metrics (a shard's start barrier).
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
}

func unwrapOpErr(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}
