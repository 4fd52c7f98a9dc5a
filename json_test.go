package hail_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hail-loadgen/hail"
)

// Files the command wrote (testdata/cli-*.json: hail -j with the 2xx
// breakdown, a run against a closed port, hail run with setup, steps,
// teardown and thresholds, hail run with stages, a warmup, a stage's
// threshold and a -w drain, hail grpc) read into a Result and write back
// byte for byte, through ReadJSON/WriteJSON and through encoding/json (compacted).
func TestJSONRoundTripOfTheCommandsFiles(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/cli-*.json")
	if len(files) < 5 {
		t.Fatalf("testdata/cli-*.json: %d files, want 5", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := hail.ReadJSON(bytes.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := hail.WriteJSON(&got, res); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("WriteJSON(ReadJSON(%s)) differs from the file:\n%s", f, firstDiff(got.Bytes(), want))
			}
			var viaStd hail.Result
			if err := json.Unmarshal(want, &viaStd); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b) // json.Marshal would escape <, > and & as \u003c…
			enc.SetEscapeHTML(false)
			if err := enc.Encode(viaStd); err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, want); err != nil {
				t.Fatal(err)
			}
			compact.WriteByte('\n')
			if !bytes.Equal(b.Bytes(), compact.Bytes()) {
				t.Errorf("encoding/json's round trip of %s differs from the file (compacted):\n%s", f, firstDiff(b.Bytes(), compact.Bytes()))
			}
		})
	}
}

// The times read from the file are time.Durations of the file's seconds.
func TestJSONTimesAreDurations(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/cli-load.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Summary struct{ Total, Slowest float64 }
		Metrics struct {
			Latency struct{ P99 float64 } `json:"latency_ms"`
		}
		Hail struct {
			Start     int64 `json:"start_unix_nano"`
			Generator struct {
				PerRequest float64 `json:"cpu_per_request_us"`
			}
		}
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	res, err := hail.ReadJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  time.Duration
		want float64 // in the unit's nanoseconds
	}{
		{"summary.total", res.Summary.Total, raw.Summary.Total * 1e9},
		{"summary.slowest", res.Summary.Slowest, raw.Summary.Slowest * 1e9},
		{"metrics.latency_ms.p99", res.Metrics.Latency.P99, raw.Metrics.Latency.P99 * 1e6},
		{"hail.generator.cpu_per_request_us", res.Hail.Generator.CPUPerRequest, raw.Hail.Generator.PerRequest * 1e3},
	} {
		if c.got <= 0 || float64(c.got)-c.want > 0.5 || c.want-float64(c.got) > 0.5 {
			t.Errorf("%s: %v, want %.0f ns", c.name, c.got, c.want)
		}
	}
	if res.Hail.Start.UnixNano() != raw.Hail.Start {
		t.Errorf("hail.start_unix_nano %d read as %v", raw.Hail.Start, res.Hail.Start)
	}
}

// firstDiff shows where a and b first differ, with some context.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return "got:  …" + string(a[lo:min(len(a), i+100)]) + "\nwant: …" + string(b[lo:min(len(b), i+100)])
}
