package kube

import (
	"testing"
	"time"
)

// A shard's log is whatever it printed: finding the result in it never
// fails badly, and a result it finds is a valid one.
func FuzzResultFromLog(f *testing.F) {
	s := &sim{t: &testing.T{}}
	res := s.result(testSpec(2), 0, 3, false, time.Unix(1700000000, 0), false)
	f.Add([]byte("hail: warning: x\n" + string(res)))
	f.Add([]byte("{\n  \"a\": 1\n}\n"))
	f.Add([]byte("{\n}\n{\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		r, err := resultFromLog(log)
		if err == nil && r == nil {
			t.Fatal("no error and no result")
		}
	})
}

// Any scrape parses without a panic.
func FuzzCounter(f *testing.F) {
	f.Add("hail_requests_total{shard=\"1\"} 1234 1700000000\n")
	f.Add("hail_requests_total{a=\"}\"} x\nhail_requests_total 5")
	f.Fuzz(func(t *testing.T, text string) {
		_, _ = counter(text, "hail_requests_total")
	})
}
