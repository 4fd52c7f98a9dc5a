package main

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseCount: any -n value either fails with hail's one-line message or gives a count that
// prints back to itself.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"1000", "10k", "2m", "1.5k", "1g", "0", "-1", "1e3", "0x10", "inf", "NaN", "9223372036854775807", "1.0001k", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseCount(s)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "whole number") {
				t.Fatalf("%q: error %q is not one line naming what was wrong", s, msg)
			}
			return
		}
		back, err := parseCount(strconv.FormatUint(n, 10))
		if err != nil || back != n {
			t.Fatalf("%q -> %d, which parses back as %d, %v", s, n, back, err)
		}
	})
}

// FuzzParseDuration: any -z/-t value either fails with one line or gives a positive duration
// that prints back to itself.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10s", "1m30s", "250ms", "1.5", "0", "-1s", "1e-12", "1e9", "1e10", "300000h", "1ns", "0.5us", " 2s ",
		"2min", "1m 30s", "1s 500ms", "3 hours", "1y", "5 parsecs", "1h30m", "2 weeks 1day", "9999999h", "300 years", ".s", "1.h",
		"0s", "0ms", "-0s", "0.1ns", "0m 0s", "0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if errors.Is(err, errZeroDuration) { // each flag says whether it takes 0
			if strings.ContainsAny(s, "123456789") {
				t.Fatalf("%q read as zero", s)
			}
			return
		}
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "10s") && !strings.Contains(msg, "too long") {
				t.Fatalf("%q: error %q is not one line with an example or the limit", s, msg)
			}
			if _, perr := time.ParseDuration(strings.TrimSpace(s)); strings.Contains(err.Error(), "too long") && perr == nil {
				t.Fatalf("%q: called too long, but time.ParseDuration reads it", s)
			}
			return
		}
		if d <= 0 {
			t.Fatalf("%q -> %v, not a positive duration", s, d)
		}
		back, err := parseDuration(d.String())
		if err != nil || back != d {
			t.Fatalf("%q -> %v, which parses back as %v, %v", s, d, back, err)
		}
	})
}
