package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

func sampleResult(t *testing.T) *result.Result {
	t.Helper()
	return sampleResultForFuzz()
}

func sampleResultForFuzz() *result.Result {
	tot := stats.NewTotals()
	for i := int64(1); i <= 1000; i++ {
		_ = tot.LatencyOK.RecordValue(i * 1000)
		_ = tot.FirstByte.RecordValue(i * 500)
		tot.LatencySum += i * 1000
	}
	_ = tot.LatencyBad.RecordValue(5e6)
	tot.LatencySum += 5e6
	_ = tot.Lag.RecordValue(20000)
	tot.Status[200], tot.Status[503] = 1000, 1
	tot.Errors[stats.ErrReset], tot.Errors[stats.ErrAborted] = 3, 2
	for range 3 { // the resets, sent and failed at 2 ms
		_ = tot.Failed.RecordValue(2e6)
		tot.FailedSum += 2e6
	}
	tot.BodyBytes = 1001 * 12
	tot.Connects, tot.ConnectSum, tot.ConnectMin, tot.ConnectMax = 4, 4e5, 5e4, 2e5
	tot.DNSMin, tot.DNSMax = 0, 0
	series := []stats.Second{{Index: 0, Span: time.Second, Requests: 600}, {Index: 1, Span: time.Second, Requests: 400}, {Index: 2, Span: 500 * time.Millisecond, Requests: 6}}
	return Build(Input{Totals: tot, Series: series, Elapsed: 2500 * time.Millisecond, Cores: 2,
		Usage: stats.Usage{User: time.Second, System: time.Second}, Engine: "net", Open: true, Rate: 1000,
		Start: time.Unix(1700000000, 0), Config: map[string]any{"url": "http://127.0.0.1/"}, Version: "test", SuccessSplit: true})
}

// hail's JSON carries every key oha's published schema requires, with the
// schema's types. The schema is oha's own, so it is not in this repository:
// it is read from ../shared/oha/schema.json beside the project (CI has it);
// the expectations below are written out too, so a clone without it still
// checks oha's layout.
func TestJSONMatchesOhaSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, sampleResult(t)); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	// Our own expectations of oha's layout.
	pct := []string{"p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99"}
	want := map[string][]string{
		"summary":              {"successRate", "total", "slowest", "fastest", "average", "requestsPerSec", "totalData", "sizePerRequest", "sizePerSec"},
		"metrics":              {"success_rate", "requests_per_sec", "latency_ms"},
		"latencyPercentiles":   pct,
		"firstBytePercentiles": pct,
		"rps":                  {"mean", "stddev", "max", "min", "percentiles"},
		"details":              {"DNSDialup", "DNSLookup", "firstByte"},
	}
	for obj, keys := range want {
		m, ok := doc[obj].(map[string]any)
		if !ok {
			t.Fatalf("%s missing or not an object", obj)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s.%s missing", obj, k)
			}
		}
	}
	for _, k := range []string{"responseTimeHistogram", "firstByteHistogram", "statusCodeDistribution", "errorDistribution", "hail"} {
		if _, ok := doc[k].(map[string]any); !ok {
			t.Errorf("%s missing or not an object", k)
		}
	}
	if s := doc["summary"].(map[string]any); s["totalData"] != float64(12012) {
		t.Errorf("summary.totalData = %v, want 12012", s["totalData"])
	}

	path := filepath.Join("..", "..", "..", "shared", "oha", "schema.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Logf("oha's schema not found at %s: checked the written expectations only", path)
		return
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	checkSchema(t, "$", schema, doc)
}

func checkSchema(t *testing.T, at string, schema map[string]any, v any) {
	t.Helper()
	if ty, ok := schema["type"]; ok && !typeMatches(ty, v) {
		t.Errorf("%s: %v does not have schema type %v", at, v, ty)
		return
	}
	obj, _ := v.(map[string]any)
	if obj == nil {
		return
	}
	if req, ok := schema["required"].([]any); ok {
		for _, k := range req {
			if _, ok := obj[k.(string)]; !ok {
				t.Errorf("%s: required key %q missing", at, k)
			}
		}
	}
	props, _ := schema["properties"].(map[string]any)
	for k, sub := range props {
		if val, ok := obj[k]; ok {
			checkSchema(t, at+"."+k, sub.(map[string]any), val)
		}
	}
	if ap, ok := schema["additionalProperties"].(map[string]any); ok {
		for k, val := range obj {
			if _, named := props[k]; !named {
				checkSchema(t, at+"."+k, ap, val)
			}
		}
	}
}

func typeMatches(ty any, v any) bool {
	switch tt := ty.(type) {
	case []any:
		for _, x := range tt {
			if typeMatches(x, v) {
				return true
			}
		}
		return false
	case string:
		switch tt {
		case "object":
			_, ok := v.(map[string]any)
			return ok
		case "number":
			_, ok := v.(float64)
			return ok
		case "integer":
			f, ok := v.(float64)
			return ok && f == math.Trunc(f)
		case "null":
			return v == nil
		case "string":
			_, ok := v.(string)
			return ok
		case "array":
			_, ok := v.([]any)
			return ok
		case "boolean":
			_, ok := v.(bool)
			return ok
		}
	}
	return false
}

// A written result reads back with the same numbers and exact histograms.
func TestJSONRoundTrip(t *testing.T) {
	r := sampleResult(t)
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Summary != r.Summary || back.Hail.Counts != r.Hail.Counts {
		t.Errorf("summary/counts changed in a round trip:\n%+v\n%+v", r.Summary, back.Summary)
	}
	h, err := DecodeHist(back.Hail.Histograms.LatencyOK)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 1000 || h.Max() < 999_000 {
		t.Errorf("decoded histogram: count %d, max %d", h.TotalCount(), h.Max())
	}
	if _, err := result.ReadJSON(strings.NewReader(`{"summary":{"successRate":1,"total":1},"hail":{"histograms":{"latency_2xx":"!!"}}}`)); err == nil {
		t.Error("a corrupt histogram was accepted")
	}
}

func TestSummaryArithmetic(t *testing.T) {
	r := sampleResult(t)
	// 1001 responses of 1006 requests, 2 of them aborted: 1001/1004.
	if got, want := r.Summary.SuccessRate, 1001.0/1004.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("successRate = %v, want %v", got, want)
	}
	if got, want := r.Summary.RequestsPerSec, 1006/2.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("requestsPerSec = %v, want %v", got, want)
	}
	if r.RPS.Mean != 500 || r.RPS.Min != 400 || r.RPS.Max != 600 {
		t.Errorf("rps = %+v, want mean 500 over the two whole seconds", r.RPS)
	}
	if r.ErrorDistribution["connection reset by peer"] != 3 || r.StatusCodeDistribution["503"] != 1 {
		t.Errorf("distributions: %v %v", r.ErrorDistribution, r.StatusCodeDistribution)
	}
	var hist int64
	for _, c := range r.ResponseTimeHistogram {
		hist += c
	}
	if hist != 1001 {
		t.Errorf("response time histogram holds %d, want 1001", hist)
	}
	// 1006 requests in 2.5 s at -q 1000 is 40% of the rate, but hail sent
	// on time (own lateness 20 µs): short of the rate is said, not blamed on hail.
	if v := r.Hail.Verdict; v.GeneratorLimited || !strings.Contains(strings.Join(v.Reasons, " "), "achieved 402.4 req/s, 40% of the -q 1000 target") {
		t.Errorf("verdict %+v: want none, saying the rate fell short", v)
	}
	if a := r.Hail.AllSent; a.Requests != 1004 || a.Failed != 3 || a.CutOff != 2 || a.Max != r.Summary.Slowest {
		t.Errorf("all sent %+v: want the 1001 responses and 3 resets, 2 cut off", a)
	}
	if rt := r.Hail.Rates; rt.RequestsPerSec != r.Summary.RequestsPerSec || rt.CompletedPerSec != 1001/2.5 || rt.SuccessfulPerSec != 1000/2.5 {
		t.Errorf("rates %+v", rt)
	}
}

func TestTextReport(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, sampleResult(t), TextOptions{Unit: "ms"}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Success rate:", "Requests/sec:", "Response time histogram:", "99.90% in", "[200] 1000 responses",
		"[3] connection reset by peer", "Send delay, hail's own:", "Bottleneck: none", "achieved 402.4 req/s",
		"Latency of all sent requests (a failure at its elapsed time):", "1006 sent: 1001 responses, 3 failed (at their elapsed time), 2 cut off by the run's end (left out)",
		"requests 402.40 (every request that ended, as Requests/sec), completed 400.40 (sent, answered), successful 400.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("escape codes without Color")
	}
}

// report, compare and merge refuse JSON that is not a hail or oha result
// (they printed zeros or "-100% better" before); oha's own output is read.
func TestReadJSONRefusesOtherJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`null`, "the file holds a JSON null"},
		{`[1,2,3]`, "the file holds a JSON list"},
		{` "x"`, "the file holds a JSON string"},
		{`42`, "the file holds a JSON number"},
		{`{}`, "it has no summary"},
		{`{"summary":null}`, "it has no summary"},
		{`{"summary":{"total":1}}`, "its summary has no successRate"},
		{`{"latencies":{"total":1000,"mean":5},"requests":10,"rate":2,"success":1}`, "it has no summary"}, // vegeta's report
		{`{"summary":[1]}`, "it has no summary"},
		{`not json`, "not a hail result"},
	} {
		_, err := result.ReadJSON(strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), "not a hail result") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
	oha := `{"summary":{"successRate":1.0,"total":1.5,"slowest":0.01,"fastest":0.001,"average":0.002,"requestsPerSec":133.3,
		"totalData":2400,"sizePerRequest":12,"sizePerSec":1600},"responseTimeHistogram":{"0.001":100,"0.002":100},
		"latencyPercentiles":{"p10":0.001,"p25":0.001,"p50":0.002,"p75":0.002,"p90":0.003,"p95":0.004,"p99":0.008,"p99.9":0.01,"p99.99":0.01},
		"rps":{"mean":133,"stddev":1,"max":140,"min":120,"percentiles":{"p10":130}},
		"details":{"DNSDialup":{"average":0.0001,"fastest":0.0001,"slowest":0.0002},"DNSLookup":{"average":0,"fastest":0,"slowest":0}},
		"statusCodeDistribution":{"200":200},"errorDistribution":{}}`
	r, err := result.ReadJSON(strings.NewReader(oha))
	if err != nil || r.Summary.RequestsPerSec != 133.3 || r.StatusCodeDistribution["200"] != 200 {
		t.Errorf("oha's result: %v", err)
	}
}
