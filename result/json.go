package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hail-loadgen/hail/internal/wire"
)

// WriteJSON writes r as indented JSON: oha's keys in oha's order, numbers
// as oha's serializer writes them (whole floats with ".0", no value as
// null: latencies without responses, percentiles of an empty breakdown,
// connection details without a connection), then the "hail" section.
func WriteJSON(w io.Writer, r *Result) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ohaView(r)); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// num is a float64 written as serde_json (ryu) writes an f64, so oha's
// readers see the same text: "1.0" for whole numbers, exponents only below
// 1e-5 and from 1e16, null for NaN and infinities.
type num float64

// MarshalJSON implements json.Marshaler.
func (n num) MarshalJSON() ([]byte, error) {
	return appendSerdeFloat(nil, float64(n)), nil
}

// appendSerdeFloat appends f in serde_json's (ryu's) format.
func appendSerdeFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// The shortest digits that read back as f, and the decimal point's
	// place: f = 0.DIGITS × 10^point.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±x
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	point := x + 1
	n := len(digits)
	switch {
	case point >= n && point <= 16: // a whole number: 1234000.0
		dst = append(dst, digits...)
		dst = append(dst, strings.Repeat("0", point-n)...)
		return append(dst, ".0"...)
	case point > 0 && point <= 16: // 12.34
		dst = append(dst, digits[:point]...)
		dst = append(dst, '.')
		return append(dst, digits[point:]...)
	case point > -5 && point <= 0: // 0.001234
		dst = append(dst, "0."...)
		dst = append(dst, strings.Repeat("0", -point)...)
		return append(dst, digits...)
	}
	dst = append(dst, digits[0])
	if n > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(point-1), 10)
}

// The oha part of a Result as WriteJSON writes it.
type (
	ohaResult struct {
		Summary                            ohaSummary        `json:"summary"`
		Metrics                            ohaMetrics        `json:"metrics"`
		ResponseTimeHistogram              map[string]int64  `json:"responseTimeHistogram"`
		LatencyPercentiles                 ohaPercentiles    `json:"latencyPercentiles"`
		FirstByteHistogram                 map[string]int64  `json:"firstByteHistogram"`
		FirstBytePercentiles               ohaPercentiles    `json:"firstBytePercentiles"`
		ResponseTimeHistogramSuccessful    *map[string]int64 `json:"responseTimeHistogramSuccessful,omitempty"`
		LatencyPercentilesSuccessful       *ohaPercentiles   `json:"latencyPercentilesSuccessful,omitempty"`
		ResponseTimeHistogramNotSuccessful *map[string]int64 `json:"responseTimeHistogramNotSuccessful,omitempty"`
		LatencyPercentilesNotSuccessful    *ohaPercentiles   `json:"latencyPercentilesNotSuccessful,omitempty"`
		RPS                                ohaRPS            `json:"rps"`
		Details                            ohaDetails        `json:"details"`
		StatusCodeDistribution             map[string]int64  `json:"statusCodeDistribution"`
		ErrorDistribution                  map[string]int64  `json:"errorDistribution"`
		Hail                               any               `json:"hail"` // *HailSection in its wire form
	}
	ohaSummary struct {
		SuccessRate    num    `json:"successRate"`
		Total          num    `json:"total"`
		Slowest        num    `json:"slowest"`
		Fastest        num    `json:"fastest"`
		Average        num    `json:"average"`
		RequestsPerSec num    `json:"requestsPerSec"`
		TotalData      int64  `json:"totalData"`
		SizePerRequest *int64 `json:"sizePerRequest"`
		SizePerSec     num    `json:"sizePerSec"`
	}
	ohaMetrics struct {
		SuccessRate    num          `json:"success_rate"`
		RequestsPerSec num          `json:"requests_per_sec"`
		LatencyMs      ohaLatencyMs `json:"latency_ms"`
	}
	ohaLatencyMs struct {
		Min  num `json:"min"`
		Mean num `json:"mean"`
		P50  num `json:"p50"`
		P95  num `json:"p95"`
		P99  num `json:"p99"`
		Max  num `json:"max"`
	}
	ohaPercentiles struct {
		P10   num `json:"p10"`
		P25   num `json:"p25"`
		P50   num `json:"p50"`
		P75   num `json:"p75"`
		P90   num `json:"p90"`
		P95   num `json:"p95"`
		P99   num `json:"p99"`
		P999  num `json:"p99.9"`
		P9999 num `json:"p99.99"`
	}
	ohaRPS struct {
		Mean        num            `json:"mean"`
		Stddev      num            `json:"stddev"`
		Max         num            `json:"max"`
		Min         num            `json:"min"`
		Percentiles ohaPercentiles `json:"percentiles"`
	}
	ohaDetails struct {
		DNSDialup ohaTriple `json:"DNSDialup"`
		DNSLookup ohaTriple `json:"DNSLookup"`
		FirstByte ohaTriple `json:"firstByte"`
	}
	ohaTriple struct {
		Average num `json:"average"`
		Fastest num `json:"fastest"`
		Slowest num `json:"slowest"`
	}
)

// or returns v, or NaN (written as null) when there is no value.
func or(v float64, none bool) num {
	if none {
		return num(math.NaN())
	}
	return num(v)
}

func ohaPct(p Percentiles, none bool) ohaPercentiles {
	return ohaPercentiles{P10: or(p.P10.Seconds(), none), P25: or(p.P25.Seconds(), none), P50: or(p.P50.Seconds(), none), P75: or(p.P75.Seconds(), none),
		P90: or(p.P90.Seconds(), none), P95: or(p.P95.Seconds(), none), P99: or(p.P99.Seconds(), none), P999: or(p.P999.Seconds(), none), P9999: or(p.P9999.Seconds(), none)}
}

// ohaRatePct are rate percentiles (requests per second) as oha writes them.
func ohaRatePct(p RatePercentiles) ohaPercentiles {
	return ohaPercentiles{P10: num(p.P10), P25: num(p.P25), P50: num(p.P50), P75: num(p.P75), P90: num(p.P90), P95: num(p.P95),
		P99: num(p.P99), P999: num(p.P999), P9999: num(p.P9999)}
}

// inMs is d in milliseconds.
func inMs(d time.Duration) float64 { return float64(d) / 1e6 }

func ohaTri(t MinAvgMax, none bool) ohaTriple {
	return ohaTriple{Average: or(t.Average.Seconds(), none), Fastest: or(t.Fastest.Seconds(), none), Slowest: or(t.Slowest.Seconds(), none)}
}

// ohaView is r as oha writes it, with null where oha has no value.
func ohaView(r *Result) *ohaResult {
	c := r.Hail.Counts
	noResp := c.Responses == 0
	s, m, l := r.Summary, r.Metrics, r.Metrics.Latency
	o := &ohaResult{
		Summary: ohaSummary{SuccessRate: or(s.SuccessRate, c.Requests-c.Aborted-c.Truncated == 0), Total: num(s.Total.Seconds()),
			Slowest: or(s.Slowest.Seconds(), noResp), Fastest: or(s.Fastest.Seconds(), noResp), Average: or(s.Average.Seconds(), noResp),
			RequestsPerSec: num(s.RequestsPerSec), TotalData: s.TotalData, SizePerSec: num(s.SizePerSec)},
		Metrics: ohaMetrics{SuccessRate: or(m.SuccessRate, c.Requests-c.Aborted-c.Truncated == 0), RequestsPerSec: num(m.RequestsPerSec),
			LatencyMs: ohaLatencyMs{Min: or(inMs(l.Min), noResp), Mean: or(inMs(l.Mean), noResp), P50: or(inMs(l.P50), noResp),
				P95: or(inMs(l.P95), noResp), P99: or(inMs(l.P99), noResp), Max: or(inMs(l.Max), noResp)}},
		ResponseTimeHistogram:  nonNil(r.ResponseTimeHistogram),
		LatencyPercentiles:     ohaPct(r.LatencyPercentiles, noResp),
		FirstByteHistogram:     nonNil(r.FirstByteHistogram),
		FirstBytePercentiles:   ohaPct(r.FirstBytePercentiles, len(r.FirstByteHistogram) == 0),
		StatusCodeDistribution: nonNil(r.StatusCodeDistribution),
		ErrorDistribution:      nonNil(r.ErrorDistribution),
		Hail:                   wire.To(&r.Hail),
	}
	if !noResp {
		spr := s.SizePerRequest
		o.Summary.SizePerRequest = &spr
	}
	if r.LatencyPercentilesSuccessful != nil && r.LatencyPercentilesNotSuccessful != nil {
		ok, other := r.SplitCounts()
		hs, hn := nonNil(r.ResponseTimeHistogramSuccessful), nonNil(r.ResponseTimeHistogramNotSuccessful)
		ps, pn := ohaPct(*r.LatencyPercentilesSuccessful, ok == 0), ohaPct(*r.LatencyPercentilesNotSuccessful, other == 0)
		o.ResponseTimeHistogramSuccessful, o.LatencyPercentilesSuccessful = &hs, &ps
		o.ResponseTimeHistogramNotSuccessful, o.LatencyPercentilesNotSuccessful = &hn, &pn
	}
	sd := num(math.NaN())
	if r.RPS.Stddev != nil {
		sd = num(*r.RPS.Stddev)
	}
	o.RPS = ohaRPS{Mean: num(r.RPS.Mean), Stddev: sd, Max: num(r.RPS.Max), Min: num(r.RPS.Min), Percentiles: ohaRatePct(r.RPS.Percentiles)}
	o.Details = ohaDetails{DNSDialup: ohaTri(r.Details.DNSDialup, c.Connects == 0), DNSLookup: ohaTri(r.Details.DNSLookup, c.Connects == 0),
		FirstByte: ohaTri(r.Details.FirstByte, len(r.FirstByteHistogram) == 0)}
	return o
}

// oldPercentiles reads percentiles under an old key (nil when absent,
// null or not percentiles).
func oldPercentiles(raw json.RawMessage) *Percentiles {
	var p *Percentiles
	w := wire.New(&p)
	if len(raw) == 0 || json.Unmarshal(raw, w) != nil {
		return nil
	}
	wire.From(&p, w)
	return p
}

func nonNil(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

// MarshalJSON encodes r as WriteJSON does (encoding/json then compacts
// it). A Result's parts (Summary, Counts, …) have no such method: alone,
// they encode as plain Go values, times in nanoseconds.
func (r Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := WriteJSON(&b, &r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// UnmarshalJSON decodes a Result as ReadJSON does: the times its parts
// hold as Durations read in the JSON's units.
func (r *Result) UnmarshalJSON(data []byte) error {
	res, err := ReadJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	*r = *res
	return nil
}

// ReadJSON reads a Result written by WriteJSON, checking what later
// computations rely on. Values written as null read as 0. Results written
// before the breakdown keys took oha's spelling (latencyPercentileSuccessful)
// read too.
//
// A hail result and an oha result (oha -j) are JSON objects whose summary
// holds successRate and total; anything else — null, a list, another
// tool's JSON — is "not a hail result", never a report of zeros.
func ReadJSON(rd io.Reader) (*Result, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("not a hail result: %v", err)
	}
	top, err := looksLikeResult(data)
	if err != nil {
		return nil, err
	}
	var r Result
	w := wire.New(&r)
	if err := json.Unmarshal(data, w); err != nil {
		return nil, fmt.Errorf("not a hail result: %v", err)
	}
	wire.From(&r, w)
	if r.LatencyPercentilesSuccessful == nil { // the old spelling
		r.LatencyPercentilesSuccessful = oldPercentiles(top["latencyPercentileSuccessful"])
		r.LatencyPercentilesNotSuccessful = oldPercentiles(top["latencyPercentileNotSuccessful"])
	}
	for _, s := range []string{r.Hail.Histograms.LatencyOK, r.Hail.Histograms.LatencyBad, r.Hail.Histograms.FirstByte, r.Hail.Histograms.Lag} { // conn_wait is optional (older results lack it)
		if s == "" {
			continue
		}
		if _, err := hdr.Decode([]byte(s)); err != nil {
			return nil, fmt.Errorf("bad histogram in result: %v", err)
		}
	}
	return &r, nil
}

// looksLikeResult checks that raw is a JSON object with the summary keys
// every hail and oha result has, and returns its members.
func looksLikeResult(raw json.RawMessage) (map[string]json.RawMessage, error) {
	const want = "a hail or oha JSON result (hail -j, oha -j) is an object with a summary"
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		if _, syntax := err.(*json.SyntaxError); syntax {
			return nil, fmt.Errorf("not a hail result: %v", err)
		}
		kind := "a JSON " + jsonKind(raw)
		return nil, fmt.Errorf("not a hail result: the file holds %s; %s", kind, want)
	}
	var summary map[string]json.RawMessage
	if err := json.Unmarshal(top["summary"], &summary); err != nil || summary == nil {
		return nil, fmt.Errorf("not a hail result: it has no summary; %s", want)
	}
	for _, k := range []string{"successRate", "total"} {
		if _, ok := summary[k]; !ok {
			return nil, fmt.Errorf("not a hail result: its summary has no %s; %s", k, want)
		}
	}
	return top, nil
}

// jsonKind names the kind of JSON value raw holds.
func jsonKind(raw json.RawMessage) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case 'n':
			return "null"
		case '[':
			return "list"
		case '"':
			return "string"
		case 't', 'f':
			return "boolean"
		case '{':
			return "object"
		}
		return "number"
	}
	return "value"
}
