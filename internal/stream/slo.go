package stream

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSLO reads objectives as hail llm's --slo and a scenario's llm
// steps take them: ttft=D,tpot=D,e2e=D (e2el too, vLLM's name; NAME:D as
// well); a plain number is milliseconds, as vLLM's --goodput takes them.
// The error quotes s and says what is accepted.
func ParseSLO(s string) (SLO, error) {
	var slo SLO
	if strings.TrimSpace(s) == "" {
		return slo, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			k, v, ok = strings.Cut(strings.TrimSpace(part), ":")
		}
		d, err := sloDuration(strings.TrimSpace(v))
		if !ok || err != nil || d <= 0 {
			return slo, fmt.Errorf("%q: %q is not NAME=DURATION with a positive duration; write e.g. ttft=500ms,tpot=50ms,e2e=10s", s, part)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "ttft":
			slo.TTFT = d
		case "tpot":
			slo.TPOT = d
		case "e2e", "e2el":
			slo.E2E = d
		default:
			return slo, fmt.Errorf("%q: unknown objective %q: the objectives are ttft, tpot and e2e", s, k)
		}
	}
	return slo, nil
}

// sloDuration is a duration, or a plain number of milliseconds.
func sloDuration(v string) (time.Duration, error) {
	if ms, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	return time.ParseDuration(v)
}
