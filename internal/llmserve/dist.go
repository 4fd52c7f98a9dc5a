package llmserve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// maxDuration bounds every duration the mock accepts (inter-token times,
// prefill costs, stalls, Retry-After): nothing a test or a benchmark needs
// is longer, and a typo such as 20s for 20ms stays visible.
const maxDuration = 10 * time.Minute

// Dist is a distribution of durations: the time between two output tokens.
// Its zero value is the fixed duration 0.
type Dist struct {
	kind distKind
	a, b float64 // ns: fixed a; uniform [a, b]; normal mean a, sd b
	mu   float64 // lognormal: the normal's mean and sd of ln(ns)
	sig  float64
	text string
}

type distKind uint8

const (
	distFixed distKind = iota
	distUniform
	distNormal
	distLognormal
)

// ParseDist parses a distribution of durations:
//
//	20ms                       fixed
//	uniform:10ms,30ms          uniform between the two
//	normal:20ms,5ms            normal with that mean and standard deviation
//	                           (a negative draw counts as 0)
//	lognormal:20ms,10ms        log-normal with that mean and standard deviation
//
// Durations are Go durations (a plain number means milliseconds), at most
// 10 minutes each.
func ParseDist(s string) (Dist, error) {
	name, args, ok := strings.Cut(s, ":")
	if !ok {
		d, err := parseDur(s)
		if err != nil {
			return Dist{}, err
		}
		return Dist{kind: distFixed, a: float64(d), text: s}, nil
	}
	x, y, ok := strings.Cut(args, ",")
	if !ok {
		return Dist{}, fmt.Errorf("%q: %s takes two durations, e.g. %s", s, name, distExample(name))
	}
	a, err := parseDur(x)
	if err != nil {
		return Dist{}, err
	}
	b, err := parseDur(y)
	if err != nil {
		return Dist{}, err
	}
	d := Dist{a: float64(a), b: float64(b), text: s}
	switch name {
	case "uniform":
		if b < a {
			return Dist{}, fmt.Errorf("%q: the maximum is below the minimum", s)
		}
		d.kind = distUniform
	case "normal":
		d.kind = distNormal
	case "lognormal":
		if a <= 0 {
			return Dist{}, fmt.Errorf("%q: a log-normal mean must be above 0", s)
		}
		// For a log-normal X with mean m and sd v: σ² = ln(1 + v²/m²), μ = ln m − σ²/2.
		d.kind = distLognormal
		s2 := math.Log1p(d.b * d.b / (d.a * d.a))
		d.sig = math.Sqrt(s2)
		d.mu = math.Log(d.a) - s2/2
	default:
		return Dist{}, fmt.Errorf("%q: unknown distribution %q (fixed, e.g. 20ms; uniform:10ms,30ms; normal:20ms,5ms; lognormal:20ms,10ms)", s, name)
	}
	return d, nil
}

func distExample(name string) string {
	if name == "uniform" {
		return "uniform:10ms,30ms"
	}
	return name + ":20ms,5ms"
}

// parseDur parses a non-negative Go duration of at most maxDuration; a plain
// number means milliseconds.
func parseDur(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		ms, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(ms) || math.IsInf(ms, 0) {
			return 0, fmt.Errorf("%q is not a duration (write it as 20ms, 1.5s, 250us)", s)
		}
		if ms < 0 || ms > float64(maxDuration/time.Millisecond) {
			return 0, fmt.Errorf("%q: durations must be between 0 and %v", s, maxDuration)
		}
		d = time.Duration(ms * float64(time.Millisecond))
	}
	if d < 0 || d > maxDuration {
		return 0, fmt.Errorf("%q: durations must be between 0 and %v", s, maxDuration)
	}
	return d, nil
}

// String is the text the distribution was parsed from ("0s" for the zero
// value).
func (d Dist) String() string {
	if d.text == "" {
		return time.Duration(d.a).String()
	}
	return d.text
}

// Mean is the distribution's mean (of a normal, the mean before negative
// draws are counted as 0).
func (d Dist) Mean() time.Duration {
	if d.kind == distUniform {
		return time.Duration((d.a + d.b) / 2)
	}
	return time.Duration(d.a)
}

// sample draws one duration.
func (d *Dist) sample(r *rand.Rand) time.Duration {
	var v float64
	switch d.kind {
	case distFixed:
		return time.Duration(d.a)
	case distUniform:
		v = d.a + (d.b-d.a)*r.Float64()
	case distNormal:
		v = d.a + d.b*r.NormFloat64()
	case distLognormal:
		v = math.Exp(d.mu + d.sig*r.NormFloat64())
	}
	return time.Duration(min(max(v, 0), float64(maxDuration)))
}
