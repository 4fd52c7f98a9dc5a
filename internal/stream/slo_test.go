package stream

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want SLO
		err  string
	}{
		{"", SLO{}, ""},
		{"ttft=500ms,tpot=50ms,e2e=10s", SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: 10 * time.Second}, ""},
		{"ttft:200, e2el=1s", SLO{TTFT: 200 * time.Millisecond, E2E: time.Second}, ""},
		{"ttft=0s", SLO{}, `"ttft=0s" is not NAME=DURATION`},
		{"fast", SLO{}, `"fast" is not NAME=DURATION`},
		{"itl=5ms", SLO{}, `unknown objective "itl"`},
	} {
		got, err := ParseSLO(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseSLO: any text parses into positive objectives whose String
// parses back to them, or is refused with a message that quotes it.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"ttft=500ms,tpot=50ms,e2e=10s", "ttft:200", "e2el=1s", "x", "ttft=-1s", "ttft=1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("%q: error without the input: %v", s, err)
			}
			return
		}
		if slo.TTFT < 0 || slo.TPOT < 0 || slo.E2E < 0 {
			t.Fatalf("%q: negative objective %+v", s, slo)
		}
		back, err := ParseSLO(slo.String())
		if err != nil || back != slo {
			t.Fatalf("%q: %+v does not round-trip through %q: %+v, %v", s, slo, slo.String(), back, err)
		}
	})
}
