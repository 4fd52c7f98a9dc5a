// Package report turns a run's measurements into a Result — one JSON
// document with oha's keys plus a "hail" section — and renders Results as
// text, JSON and CSV. Reports never re-measure: every renderer reads only
// the Result, so a saved result re-renders identically.
package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hail/internal/stats"
)

// Result is the outcome of a run. Its JSON keys, names and units (seconds)
// match oha's --output-format json (WriteJSON writes them in oha's order and
// number format); Hail holds what oha lacks.
type Result struct {
	Summary                            Summary          `json:"summary"`
	Metrics                            Metrics          `json:"metrics"`
	ResponseTimeHistogram              map[string]int64 `json:"responseTimeHistogram"`
	LatencyPercentiles                 Percentiles      `json:"latencyPercentiles"`
	ResponseTimeHistogramSuccessful    map[string]int64 `json:"responseTimeHistogramSuccessful,omitempty"`
	LatencyPercentileSuccessful        *Percentiles     `json:"latencyPercentilesSuccessful,omitempty"`
	ResponseTimeHistogramNotSuccessful map[string]int64 `json:"responseTimeHistogramNotSuccessful,omitempty"`
	LatencyPercentileNotSuccessful     *Percentiles     `json:"latencyPercentilesNotSuccessful,omitempty"`
	FirstByteHistogram                 map[string]int64 `json:"firstByteHistogram"`
	FirstBytePercentiles               Percentiles      `json:"firstBytePercentiles"`
	RPS                                RPS              `json:"rps"`
	Details                            Details          `json:"details"`
	StatusCodeDistribution             map[string]int64 `json:"statusCodeDistribution"`
	ErrorDistribution                  map[string]int64 `json:"errorDistribution"`
	Hail                               Hail             `json:"hail"`
}

// Summary is oha's summary block.
type Summary struct {
	SuccessRate    float64 `json:"successRate"`    // responses / requests not aborted at the deadline
	Total          float64 `json:"total"`          // s
	Slowest        float64 `json:"slowest"`        // s
	Fastest        float64 `json:"fastest"`        // s
	Average        float64 `json:"average"`        // s
	RequestsPerSec float64 `json:"requestsPerSec"` // requests ended / total
	TotalData      int64   `json:"totalData"`      // body bytes
	SizePerRequest int64   `json:"sizePerRequest"` // body bytes per response
	SizePerSec     float64 `json:"sizePerSec"`     // body bytes / total
}

// Metrics is oha's CI-friendly block.
type Metrics struct {
	SuccessRate    float64   `json:"success_rate"`
	RequestsPerSec float64   `json:"requests_per_sec"`
	LatencyMs      LatencyMs `json:"latency_ms"`
}

// LatencyMs are selected latency statistics in milliseconds.
type LatencyMs struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Percentiles in seconds (or requests/s for RPS).
type Percentiles struct {
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	P9999 float64 `json:"p99.99"`
}

// RPS summarises requests per second over the run's whole seconds.
type RPS struct {
	Mean        float64     `json:"mean"`
	Stddev      *float64    `json:"stddev"`
	Max         float64     `json:"max"`
	Min         float64     `json:"min"`
	Percentiles Percentiles `json:"percentiles"`
}

// Details are connection-setup and first-byte times.
type Details struct {
	DNSDialup MinAvgMax `json:"DNSDialup"`
	DNSLookup MinAvgMax `json:"DNSLookup"`
	FirstByte MinAvgMax `json:"firstByte"`
}

// MinAvgMax in seconds.
type MinAvgMax struct {
	Average float64 `json:"average"`
	Fastest float64 `json:"fastest"`
	Slowest float64 `json:"slowest"`
}

// Hail is what hail reports beyond oha's keys.
type Hail struct {
	Version string `json:"version"`
	// Engine that ran and why it was chosen.
	Engine       string `json:"engine"`
	EngineReason string `json:"engine_reason"`
	// Model is "closed" or "open".
	Model string `json:"model"`
	// StartUnixNano is the wall-clock start, for aligning shards.
	StartUnixNano int64 `json:"start_unix_nano"`
	// Interrupted is set when a signal ended the run early.
	Interrupted bool `json:"interrupted"`
	// Counts are the exact totals the summaries derive from.
	Counts Counts `json:"counts"`
	// Histograms are HdrHistograms (ns, V2 compressed, base64) for exact merges.
	Histograms Histograms `json:"histograms"`
	// Lag is hail's own send lateness (open model), seconds: SendDelay.Own,
	// under its earlier name.
	Lag LagStats `json:"schedule_lag"`
	// SendDelay is how late requests were sent against their intended
	// times (open model), split into hail's own lateness and the wait for
	// a free connection (the target's backpressure), over every sent request.
	SendDelay SendDelay `json:"send_delay"`
	// UnsentReason says why requests were left unsent: "deadline",
	// "interrupt", "threshold" or "data" (a scenario's unique feed ran
	// out; absent when none were).
	UnsentReason string `json:"unsent_reason,omitempty"`
	// Generator is hail's own resource use.
	Generator Generator `json:"generator"`
	// Verdict says whether the generator, not the target, limited the test.
	Verdict Verdict `json:"verdict"`
	// Hints are one line of advice per error kind with a known fix.
	Hints []string `json:"hints"`
	// Series is one entry per second of the run.
	Series []stats.Second `json:"series"`
	// Config is the run's configuration, secrets redacted.
	Config map[string]any `json:"config"`
	// Protocol is the HTTP version spoken: "HTTP/1.1", "HTTP/1.0", "h2",
	// "h2c" or "h3"; ALPN what TLS negotiated ("" without TLS or ALPN).
	Protocol string `json:"protocol,omitempty"`
	ALPN     string `json:"alpn,omitempty"`
	// Transport is how connections travelled: "tcp", "tls", "unix",
	// "vsock", "vsock-uds", "proxy" or "quic".
	Transport string `json:"transport,omitempty"`
	// TLS counts the run's TLS handshakes and how many resumed a session
	// (absent without TLS).
	TLS *TLSCounts `json:"tls,omitempty"`
	// Steps are a scenario's per-step results (absent for a plain run).
	Steps []Step `json:"steps,omitempty"`
	// Thresholds are a scenario's checks, each with its measured value.
	Thresholds []Threshold `json:"thresholds,omitempty"`
	// StoppedBy says why a scenario run stopped early (a failed threshold
	// with abort_on_fail).
	StoppedBy string `json:"stopped_by,omitempty"`
	// Scenario names the scenario and the state of its pools at the end.
	Scenario *ScenarioInfo `json:"scenario,omitempty"`
	// Setup and Teardown are a scenario's steps run once before and after
	// the load (not part of its statistics).
	Setup    *Phase `json:"setup,omitempty"`
	Teardown *Phase `json:"teardown,omitempty"`
	// Shard says which part of a distributed run this is (--shard I/N).
	Shard *Shard `json:"shard,omitempty"`
	// Merged describes a result made by hail merge from several shards.
	Merged *Merged `json:"merged,omitempty"`
	// Target is the monitored target process's resource use (--target-pid).
	Target *Target `json:"target,omitempty"`
	// GRPC describes the run's gRPC calls (absent when it made none).
	GRPC *GRPC `json:"grpc,omitempty"`
}

// GRPC describes a run's gRPC calls. A call is one request whatever its
// streaming kind; its messages are counted here.
type GRPC struct {
	// Call is the method hail grpc called ("package.Service/Method") and
	// Kind its streaming kind ("unary", "client streaming", "server
	// streaming", "bidi streaming"); absent for a scenario's several.
	Call string `json:"call,omitempty"`
	Kind string `json:"kind,omitempty"`
	// Calls were sent; MessagesSent and MessagesReceived are their
	// request and response messages.
	Calls            int64 `json:"calls"`
	MessagesSent     int64 `json:"messages_sent"`
	MessagesReceived int64 `json:"messages_received"`
}

// Counts are exact integer totals. Every intended request ended as exactly
// one of: sent (then a response or an error: Requests), unsent (still in
// hail when the run stopped sending: never counted as a request, an error
// or in requests/s), or skipped (a request number no step could serve).
type Counts struct {
	Intended int64 `json:"intended"`
	Sent     int64 `json:"sent"`
	Unsent   int64 `json:"unsent"`
	Skipped  int64 `json:"skipped,omitempty"`
	// Reconnects are requests sent again, once, on a new connection because
	// the server had closed their keep-alive connection without answering
	// (as browsers and net/http do): not errors.
	Reconnects int64 `json:"reconnects"`
	Requests   int64 `json:"requests"`
	Responses  int64 `json:"responses"`
	Errors     int64 `json:"errors"`
	Aborted    int64 `json:"aborted"`
	// Expected are responses whose status counts as failed (HTTP ≥ 400,
	// gRPC not OK) but that their scenario step expects (expect: status):
	// responses, not failures.
	Expected     int64 `json:"expected,omitempty"`
	BodyBytes    int64 `json:"body_bytes"`
	WireBytes    int64 `json:"wire_bytes"`
	SentBytes    int64 `json:"sent_bytes"`
	LatencySumNS int64 `json:"latency_sum_ns"`
	Queued       int64 `json:"queued"`
	QueueWaitNS  int64 `json:"queue_wait_ns"`
	Connects     int64 `json:"connects"`
	ConnectSumNS int64 `json:"connect_sum_ns"`
	ConnectMinNS int64 `json:"connect_min_ns"`
	ConnectMaxNS int64 `json:"connect_max_ns"`
	DNSSumNS     int64 `json:"dns_sum_ns"`
	DNSMinNS     int64 `json:"dns_min_ns"`
	DNSMaxNS     int64 `json:"dns_max_ns"`
}

// Histograms hold encoded HdrHistograms of nanosecond values.
type Histograms struct {
	LatencyOK  string `json:"latency_2xx"`
	LatencyBad string `json:"latency_other"`
	FirstByte  string `json:"first_byte"`
	Lag        string `json:"schedule_lag"`
	ConnWait   string `json:"conn_wait,omitempty"`
}

// SendDelay splits the open model's send delay, seconds.
type SendDelay struct {
	// Own is hail's own lateness: a connection was free, or the request
	// had not even been taken yet.
	Own LagStats `json:"own"`
	// ConnWait is the wait because every connection had a request in
	// flight: the target's backpressure.
	ConnWait LagStats `json:"conn_wait"`
}

// LagStats describe schedule lag in seconds.
type LagStats struct {
	Samples int64   `json:"samples"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
	P999    float64 `json:"p99.9"`
	Max     float64 `json:"max"`
}

// Generator is hail's own resource use over the run.
type Generator struct {
	UserSeconds       float64 `json:"cpu_user_seconds"`
	SystemSeconds     float64 `json:"cpu_system_seconds"`
	CPUPerRequestUS   float64 `json:"cpu_per_request_us"`
	Cores             int     `json:"cores"`
	Utilization       float64 `json:"cpu_utilization"` // share of Cores used over the run
	VoluntarySwitches int64   `json:"voluntary_context_switches"`
	ForcedSwitches    int64   `json:"involuntary_context_switches"`
	MaxRSSBytes       int64   `json:"max_rss_bytes"`
	// OthersCPU is the share of hail's CPUs that other processes used over
	// the run, Steal the share the hypervisor stole, and CPUPressure the
	// share of the time some task on the machine waited for a CPU (PSI;
	// -1 unknown). Linux only.
	OthersCPU   float64 `json:"others_cpu"`
	Steal       float64 `json:"steal"`
	CPUPressure float64 `json:"cpu_pressure"`
	// Machine identifies the machine (its kernel's boot id), so hail
	// merge counts the cores of shards that shared one once; MachineCPUs
	// is how many CPUs it has.
	Machine     string `json:"machine,omitempty"`
	MachineCPUs int    `json:"machine_cpus,omitempty"`
}

// Verdict says who limited the test.
type Verdict struct {
	// Bottleneck is one of BottleneckNone, BottleneckTarget,
	// BottleneckGenerator, BottleneckOthers, BottleneckWakeup.
	Bottleneck string `json:"bottleneck"`
	// GeneratorLimited is true for the three generator-side kinds
	// (generator, other-processes, timer-wakeup).
	GeneratorLimited bool `json:"generator_limited"`
	// Reasons are the evidence, sentences with numbers.
	Reasons []string `json:"reasons"`
}

// Input is what Build needs from a finished run.
type Input struct {
	Totals       *stats.Totals
	Series       []stats.Second
	Elapsed      time.Duration
	Usage        stats.Usage
	Cores        int
	Engine       string
	EngineReason string
	Open         bool
	Rate         float64 // -q, 0 when closed
	Start        time.Time
	Interrupted  bool
	Config       map[string]any
	Version      string
	SuccessSplit bool // --stats-success-breakdown
	// Protocol, ALPN, Transport and TLS describe how the run connected.
	Protocol  string
	ALPN      string
	Transport string
	TLS       *TLSCounts
	// Intent accounts for every intended request.
	Intent Intent
	// Machine is what happened on hail's CPUs (others' use, steal, pressure).
	Machine stats.MachineUse
	// Connections is -c (for the target's sustained rate in the verdict).
	Connections int
}

// Intent accounts for a run's intended requests: Intended = Sent + Unsent
// + Skipped.
type Intent struct {
	Intended, Sent, Unsent, Skipped int64
	// Reason is why requests were left unsent ("" when the run ran out).
	Reason string
}

// TLSCounts are a run's TLS handshakes (QUIC's included) and resumptions.
type TLSCounts struct {
	Handshakes  int64 `json:"handshakes"`
	Resumptions int64 `json:"resumptions"`
}

func sec(ns int64) float64 { return float64(ns) / 1e9 }

// Build makes the Result of a run.
func Build(in Input) *Result {
	r := &Result{}
	buildOha(r, in)
	buildHail(r, in)
	return r
}

// buildOha fills oha's part of r: the summary, histograms, percentiles,
// requests/s, details and the status and error distributions.
func buildOha(r *Result, in Input) {
	t := in.Totals
	lat := t.Latency()
	total := in.Elapsed.Seconds()
	responses := t.Responses()
	requests := t.Requests()
	aborted := t.Errors[stats.ErrAborted]
	s := &r.Summary
	s.Total = total
	if n := requests - aborted; n > 0 {
		s.SuccessRate = float64(responses) / float64(n)
	}
	if responses > 0 {
		s.Slowest = sec(lat.Max())
		s.Fastest = sec(lat.Min())
		s.Average = sec(t.LatencySum) / float64(responses)
		s.SizePerRequest = t.BodyBytes / responses
	}
	if total > 0 {
		s.RequestsPerSec = float64(requests) / total
		s.SizePerSec = float64(t.BodyBytes) / total
	}
	s.TotalData = t.BodyBytes
	r.Metrics = Metrics{SuccessRate: s.SuccessRate, RequestsPerSec: s.RequestsPerSec, LatencyMs: LatencyMs{
		Min: roundMs(s.Fastest), Mean: roundMs(s.Average), P50: ms(lat, 50), P95: ms(lat, 95), P99: ms(lat, 99), Max: roundMs(s.Slowest)}}
	r.ResponseTimeHistogram = histogram(lat)
	r.LatencyPercentiles = percentiles(lat)
	if in.SuccessSplit {
		r.ResponseTimeHistogramSuccessful = histogram(t.LatencyOK)
		p := percentiles(t.LatencyOK)
		r.LatencyPercentileSuccessful = &p
		r.ResponseTimeHistogramNotSuccessful = histogram(t.LatencyBad)
		q := percentiles(t.LatencyBad)
		r.LatencyPercentileNotSuccessful = &q
	}
	r.FirstByteHistogram = histogram(t.FirstByte)
	r.FirstBytePercentiles = percentiles(t.FirstByte)
	r.RPS = rps(in.Series, float64(requests), total)
	if t.Connects > 0 {
		r.Details.DNSDialup = MinAvgMax{Average: sec(t.ConnectSum) / float64(t.Connects), Fastest: sec(t.ConnectMin), Slowest: sec(t.ConnectMax)}
		r.Details.DNSLookup = MinAvgMax{Average: sec(t.DNSSum) / float64(t.Connects), Fastest: sec(t.DNSMin), Slowest: sec(t.DNSMax)}
	}
	if n := t.FirstByte.TotalCount(); n > 0 {
		r.Details.FirstByte = MinAvgMax{Average: t.FirstByte.Mean() / 1e9, Fastest: sec(t.FirstByte.Min()), Slowest: sec(t.FirstByte.Max())}
	}
	r.StatusCodeDistribution = map[string]int64{}
	for code, n := range t.Status {
		if n > 0 {
			r.StatusCodeDistribution[stats.StatusName(code)] = n
		}
	}
	r.ErrorDistribution = map[string]int64{}
	for k, n := range t.Errors {
		if n > 0 {
			r.ErrorDistribution[stats.ErrorKind(k).String()] = n
		}
	}
}

// buildHail fills r's "hail" section: exact counts, encoded histograms,
// schedule lag, the generator's resource use, the verdict and hints, the
// series and the configuration. It runs after buildOha: the verdict reads
// the summary.
func buildHail(r *Result, in Input) {
	t := in.Totals
	total := in.Elapsed.Seconds()
	requests, responses, aborted := t.Requests(), t.Responses(), t.Errors[stats.ErrAborted]
	h := &r.Hail
	h.Version = in.Version
	h.Engine, h.EngineReason = in.Engine, in.EngineReason
	h.Model = "closed"
	if in.Open {
		h.Model = "open"
	}
	h.StartUnixNano = in.Start.UnixNano()
	h.Interrupted = in.Interrupted
	in.Intent.Sent = requests
	in.Intent.Intended = max(in.Intent.Intended, in.Intent.Sent+in.Intent.Unsent+in.Intent.Skipped)
	unsent := in.Intent.Intended - in.Intent.Sent - in.Intent.Skipped
	h.Counts = Counts{Intended: in.Intent.Intended, Sent: requests, Unsent: unsent, Skipped: in.Intent.Skipped,
		Requests: requests, Responses: responses, Errors: t.ErrorCount(), Aborted: aborted, Expected: t.Expected,
		BodyBytes: t.BodyBytes, WireBytes: t.WireBytes, SentBytes: t.SentBytes, LatencySumNS: t.LatencySum,
		Queued: t.Queued, QueueWaitNS: t.QueueWait, Reconnects: t.Reconnects, Connects: t.Connects, ConnectSumNS: t.ConnectSum,
		DNSSumNS: t.DNSSum}
	if t.Connects > 0 {
		h.Counts.ConnectMinNS, h.Counts.ConnectMaxNS = t.ConnectMin, t.ConnectMax
		h.Counts.DNSMinNS, h.Counts.DNSMaxNS = t.DNSMin, t.DNSMax
	}
	if unsent > 0 {
		h.UnsentReason = in.Intent.Reason
	}
	h.Histograms = Histograms{LatencyOK: encode(t.LatencyOK), LatencyBad: encode(t.LatencyBad),
		FirstByte: encode(t.FirstByte), Lag: encode(t.Lag), ConnWait: encode(t.ConnWait)}
	h.SendDelay = SendDelay{Own: lagStats(t.Lag), ConnWait: lagStats(t.ConnWait)}
	h.Lag = h.SendDelay.Own
	g := &h.Generator
	g.UserSeconds, g.SystemSeconds = in.Usage.User.Seconds(), in.Usage.System.Seconds()
	g.Cores = in.Cores
	if requests > 0 {
		g.CPUPerRequestUS = in.Usage.CPU().Seconds() * 1e6 / float64(requests)
	}
	if total > 0 && in.Cores > 0 {
		g.Utilization = in.Usage.CPU().Seconds() / total / float64(in.Cores)
	}
	g.VoluntarySwitches, g.ForcedSwitches, g.MaxRSSBytes = in.Usage.Voluntary, in.Usage.Involuntary, in.Usage.MaxRSS
	g.OthersCPU, g.Steal, g.CPUPressure = in.Machine.Others, in.Machine.Steal, in.Machine.Pressure
	h.Verdict = verdict(in, r)
	h.Hints = hints(t)
	h.Series = in.Series
	if h.Series == nil {
		h.Series = []stats.Second{}
	}
	h.Config = in.Config
	h.Protocol, h.ALPN, h.Transport, h.TLS = in.Protocol, in.ALPN, in.Transport, in.TLS
}

// lagStats summarises a histogram of ns values in seconds.
func lagStats(h *hdr.Histogram) LagStats {
	return LagStats{Samples: h.TotalCount(), P50: sec(h.ValueAtQuantile(50)), P90: sec(h.ValueAtQuantile(90)),
		P99: sec(h.ValueAtQuantile(99)), P999: sec(h.ValueAtQuantile(99.9)), Max: sec(h.Max())}
}

// ms is h's q-th percentile in milliseconds, rounded as roundMs.
func ms(h *hdr.Histogram, q float64) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	return roundMs(sec(h.ValueAtQuantile(q)))
}

// roundMs turns seconds into milliseconds rounded to the microsecond, as
// oha's metrics.latency_ms are.
func roundMs(s float64) float64 { return math.Round(s*1e6) / 1e3 }

func percentiles(h *hdr.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	q := func(p float64) float64 { return sec(h.ValueAtQuantile(p)) }
	return Percentiles{P10: q(10), P25: q(25), P50: q(50), P75: q(75), P90: q(90), P95: q(95), P99: q(99), P999: q(99.9), P9999: q(99.99)}
}

// histogram bins h as oha does: 11 labels from the minimum to the maximum in
// equal steps (seconds); each label counts the values above the previous
// label up to itself, the first only the minimum. HdrHistogram's buckets
// (0.1% wide) are placed by their middle, the minimum's and the maximum's at
// the ends; latencies all in one bucket make one label.
func histogram(h *hdr.Histogram) map[string]int64 {
	out := map[string]int64{}
	if h.TotalCount() == 0 {
		return out
	}
	loNS, hiNS := h.Min(), h.Max()
	lo, hi := sec(loNS), sec(hiNS)
	const bins = 11
	step := (hi - lo) / (bins - 1)
	if h.ValuesAreEquivalent(loNS, hiNS) { // one bucket: one label
		step, lo = 0, hi
	}
	counts := make([]int64, bins)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		i := 0
		switch {
		case step == 0 || b.From <= loNS:
		case b.To >= hiNS:
			i = bins - 1
		default:
			v := min(max(sec((b.From+b.To)/2), lo), hi)
			i = min(int(math.Ceil((v-lo)/step)), bins-1)
		}
		counts[i] += b.Count
	}
	for i, c := range counts {
		out[strconv.FormatFloat(lo+step*float64(i), 'f', -1, 64)] += c
	}
	return out
}

// SortedKeys returns a histogram's keys in numeric order.
func SortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, _ := strconv.ParseFloat(keys[i], 64)
		b, _ := strconv.ParseFloat(keys[j], 64)
		return a < b
	})
	return keys
}

func rps(series []stats.Second, requests, total float64) RPS {
	var xs []float64
	for _, s := range series {
		if s.Span >= 0.999 {
			xs = append(xs, float64(s.Requests)/s.Span)
		}
	}
	if len(xs) == 0 {
		if total > 0 {
			xs = []float64{requests / total}
		} else {
			xs = []float64{0}
		}
	}
	sort.Float64s(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	out := RPS{Mean: mean, Min: xs[0], Max: xs[len(xs)-1]}
	if len(xs) > 1 {
		var v float64
		for _, x := range xs {
			v += (x - mean) * (x - mean)
		}
		sd := math.Sqrt(v / float64(len(xs)-1))
		out.Stddev = &sd
	}
	q := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(xs)))) - 1
		return xs[max(0, min(i, len(xs)-1))]
	}
	out.Percentiles = Percentiles{P10: q(10), P25: q(25), P50: q(50), P75: q(75), P90: q(90), P95: q(95), P99: q(99), P999: q(99.9), P9999: q(99.99)}
	return out
}

func encode(h *hdr.Histogram) string {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b) // already base64
}

// DecodeHist decodes a histogram from a Result's Histograms field.
func DecodeHist(s string) (*hdr.Histogram, error) {
	if s == "" {
		return stats.NewHist(), nil
	}
	return hdr.Decode([]byte(s))
}

// fmtDur formats seconds with a fitting unit.
func fmtDur(s float64) string {
	switch {
	case s < 1e-3:
		return fmt.Sprintf("%.1fµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.2fms", s*1e3)
	}
	return fmt.Sprintf("%.3fs", s)
}
