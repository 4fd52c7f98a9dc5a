package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
	"github.com/hail-loadgen/hail/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it after a deliberate change):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// noResponses is a run in which every request failed.
func noResponses() *result.Result {
	tot := stats.NewTotals()
	tot.Errors[stats.ErrConnectRefused], tot.NotSent = 7, 7
	return Build(Input{Totals: tot, Elapsed: 1500 * time.Millisecond, Cores: 2, Engine: "net", Addr: "127.0.0.1:1",
		Start: time.Unix(1700000000, 0), Config: map[string]any{}, Version: "test", SuccessSplit: true})
}

// The text report, laid out as oha's, against golden files: the unit chosen
// from the slowest request, the breakdowns, no responses, colours.
func TestTextGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *result.Result
		o    TextOptions
	}{
		{"text-auto.txt", sampleResultForFuzz(), TextOptions{}},
		{"text-unit-ms.txt", sampleResultForFuzz(), TextOptions{Unit: "ms"}},
		{"text-color.txt", sampleResultForFuzz(), TextOptions{Color: true}},
		{"text-no-responses.txt", noResponses(), TextOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteText(&buf, tc.r, tc.o); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

// The JSON report against a golden file: oha's key order and number format.
func TestJSONGolden(t *testing.T) {
	for name, r := range map[string]*result.Result{"json-sample.json": sampleResultForFuzz(), "json-no-responses.json": noResponses()} {
		t.Run(name, func(t *testing.T) {
			r.Hail.Histograms = result.Histograms{} // encoded histograms are long and tested elsewhere
			var buf bytes.Buffer
			if err := result.WriteJSON(&buf, r); err != nil {
				t.Fatal(err)
			}
			golden(t, name, buf.Bytes())
		})
	}
}

func TestTextUnitFromSlowest(t *testing.T) {
	for _, tc := range []struct {
		slowest float64
		want    string
	}{
		{0.0000005, "ns"}, {0.000001, "ns"}, {0.0000011, "us"}, {0.001, "us"}, {0.0011, "ms"}, {0.9, "ms"},
		{1.5, "sec"}, {15, "sec"}, {61, "min"}, {700, "min"}, {3601, "hr"}, {math.NaN(), "ns"},
	} {
		if got := autoScale(tc.slowest).label; got != tc.want {
			t.Errorf("slowest %v s: unit %s, want %s", tc.slowest, got, tc.want)
		}
	}
	r := sampleResultForFuzz() // slowest 5 ms
	var buf bytes.Buffer
	if err := WriteText(&buf, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  Total:\t2500.0000 ms\n", "  Slowest:\t5.0012 ms (responses only; of all sent: 5.0012 ms)\n", "ms [", "Response time histogram (2xx only):",
		"Response time distribution (4xx + 5xx only):"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, buf.String())
		}
	}
}

// oha's histogram: 11 labels from the fastest to the slowest latency, every
// response counted once.
func TestHistogramOhaBins(t *testing.T) {
	tot := stats.NewTotals()
	for i := int64(1); i <= 100; i++ {
		_ = tot.LatencyOK.RecordValue(i * 1_000_000) // 1 … 100 ms
	}
	h := snapshots(nil).histogram(tot.LatencyOK)
	keys := SortedKeys(h)
	lo, hi := sec(tot.LatencyOK.Min()), sec(tot.LatencyOK.Max()) // 1 ms and 100 ms as HdrHistogram holds them
	if len(keys) != 11 || keys[0] != strconv.FormatFloat(lo, 'f', -1, 64) || keys[10] != strconv.FormatFloat(hi, 'f', -1, 64) {
		t.Fatalf("labels %v, want %v … %v", keys, lo, hi)
	}
	var n int64
	for _, k := range keys {
		n += h[k]
	}
	if n != 100 || h[keys[0]] != 1 || h[keys[10]] < 9 || h[keys[10]] > 11 {
		t.Errorf("counts %v: want 100 in all, the minimum alone in the first label", h)
	}
	one := stats.NewTotals()
	_ = one.LatencyOK.RecordValue(2_000_000)
	_ = one.LatencyOK.RecordValue(2_000_000)
	if h := snapshots(nil).histogram(one.LatencyOK); len(h) != 1 || h[SortedKeys(h)[0]] != 2 {
		t.Errorf("equal latencies: %v, want one label holding both", h)
	}
}

// A gRPC run's OK responses are its successful ones: the breakdown's
// successful section shows their latencies, not NaN, in text and JSON.
func TestSuccessBreakdownGRPC(t *testing.T) {
	tot := stats.NewTotals()
	for i := int64(1); i <= 10; i++ {
		_ = tot.LatencyOK.RecordValue(i * 1000)
		tot.LatencySum += i * 1000
	}
	_ = tot.LatencyBad.RecordValue(2e6)
	tot.LatencySum += 2e6
	tot.Status[status.GRPCBase+status.GRPCOK], tot.Status[status.GRPCBase+14] = 10, 1
	r := Build(Input{Totals: tot, Elapsed: time.Second, Cores: 2, Engine: "net",
		Start: time.Unix(1700000000, 0), Config: map[string]any{}, Version: "test", SuccessSplit: true})
	var text bytes.Buffer
	if err := WriteText(&text, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	ok := text.String()[strings.Index(text.String(), "Response time distribution (2xx only):"):]
	ok = ok[:strings.Index(ok, "\n\n")]
	if strings.Contains(ok, "NaN") || !strings.Contains(ok, "50.00%") {
		t.Errorf("the successful section of a gRPC run:\n%s", ok)
	}
	var js bytes.Buffer
	if err := result.WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Successful    map[string]any `json:"latencyPercentilesSuccessful"`
		NotSuccessful map[string]any `json:"latencyPercentilesNotSuccessful"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Successful["p50"] == nil || doc.NotSuccessful["p50"] == nil {
		t.Errorf("JSON breakdown: successful %v, not successful %v", doc.Successful, doc.NotSuccessful)
	}
}
