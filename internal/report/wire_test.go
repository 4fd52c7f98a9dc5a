package report

import (
	"bytes"
	"encoding/json"
	"github.com/hail-loadgen/hail/result"
	"testing"
	"time"
)

// TestWireUnits: a part declared in package result writes its unit-tagged
// Durations in the JSON's units (seconds, microseconds), its untagged ones
// in nanoseconds, and reads them back as the same Durations.
func TestWireUnits(t *testing.T) {
	t.Parallel()
	r := sampleResult(t)
	r.Hail.Drain = &result.Drain{Duration: 1500 * time.Millisecond, Requests: 3, InRates: true}
	r.Hail.Generator.User, r.Hail.Generator.CPUPerRequest = 250*time.Millisecond, 12345*time.Nanosecond
	r.Hail.SendDelay.Own.P99 = 2 * time.Millisecond
	r.Hail.Counts.LatencySum = 7 * time.Second
	var b bytes.Buffer
	if err := result.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hail struct {
			Drain     map[string]any `json:"drain"`
			Generator map[string]any `json:"generator"`
			SendDelay struct {
				Own map[string]any `json:"own"`
			} `json:"send_delay"`
			Counts map[string]any `json:"counts"`
		} `json:"hail"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	h := doc.Hail
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"drain.seconds", h.Drain["seconds"], 1.5},
		{"generator.cpu_user_seconds", h.Generator["cpu_user_seconds"], 0.25},
		{"generator.cpu_per_request_us", h.Generator["cpu_per_request_us"], 12.345},
		{"send_delay.own.p99", h.SendDelay.Own["p99"], 0.002},
		{"counts.latency_sum_ns", h.Counts["latency_sum_ns"], 7e9},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	back, err := result.ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if *back.Hail.Drain != *r.Hail.Drain || back.Hail.Generator != r.Hail.Generator || back.Hail.SendDelay != r.Hail.SendDelay ||
		back.Hail.Counts != r.Hail.Counts {
		t.Errorf("read back %+v %+v %+v, wrote %+v %+v %+v", *back.Hail.Drain, back.Hail.Generator, back.Hail.SendDelay,
			*r.Hail.Drain, r.Hail.Generator, r.Hail.SendDelay)
	}
}
