package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"hail/internal/bodyfile"
)

// countValue is a request count with optional k/m/g suffixes (1k = 1000).
type countValue struct{ n *uint64 }

func (v countValue) String() string { return strconv.FormatUint(*v.n, 10) }
func (v countValue) Type() string   { return "N" }
func (v countValue) Set(s string) error {
	n, err := parseCount(s)
	if err != nil {
		return err
	}
	*v.n = n
	return nil
}

func parseCount(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, t[:len(t)-1]
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, t[:len(t)-1]
	case strings.HasSuffix(t, "g"):
		mult, t = 1e9, t[:len(t)-1]
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f*mult > math.MaxInt64 || f*mult != math.Trunc(f*mult) {
		return 0, fmt.Errorf("%q is not a whole number of requests (e.g. 1000, 10k, 2m)", s)
	}
	return uint64(f * mult), nil
}

// intValue is a plain integer with a friendly error.
type intValue struct {
	n    *int
	what string
}

func (v intValue) String() string { return strconv.Itoa(*v.n) }
func (v intValue) Type() string   { return "N" }
func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a whole number (%s)", s, v.what)
	}
	*v.n = n
	return nil
}

// floatValue is a number such as a rate.
type floatValue struct {
	f    *float64
	what string
}

func (v floatValue) String() string {
	if *v.f == 0 {
		return ""
	}
	return strconv.FormatFloat(*v.f, 'g', -1, 64)
}
func (v floatValue) Type() string { return "RATE" }
func (v floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return fmt.Errorf("%q is not a positive number (%s)", s, v.what)
	}
	*v.f = f
	return nil
}

// durationValue is a Go duration ("10s", "1m30s", "250ms") or a plain number of seconds.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if *v.d == 0 {
		return ""
	}
	return v.d.String()
}
func (v durationValue) Type() string { return "DURATION" }
func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f > 1e9 {
			return 0, fmt.Errorf("%q is too long: a plain number of seconds goes up to 1e9 (31 years)", s)
		}
		d := time.Duration(f * float64(time.Second))
		if f <= 0 || d <= 0 {
			return 0, fmt.Errorf("%q must be a positive duration of at least 1ns, such as 10s, 1m or 250ms", s)
		}
		return d, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil && durationSyntax.MatchString(t) {
		return 0, fmt.Errorf("%q is too long: the longest duration is %dh (292 years)", s, math.MaxInt64/int64(time.Hour))
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a duration: write it like 10s, 1m or 250ms", s)
	}
	return d, nil
}

// durationSyntax is the form time.ParseDuration reads, without a sign: a
// value of this form that it refuses is out of range.
var durationSyntax = regexp.MustCompile(`^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// choiceValue accepts one of a fixed set of words.
type choiceValue struct {
	s       *string
	choices []string
}

func (v choiceValue) String() string { return *v.s }
func (v choiceValue) Type() string   { return strings.Join(v.choices, "|") }
func (v choiceValue) Set(s string) error {
	for _, c := range v.choices {
		if s == c {
			*v.s = s
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(v.choices, ", "))
}

// sizeValue is a size in bytes with a binary suffix (64MiB, 512k, 2g).
type sizeValue struct{ n *int64 }

func (v sizeValue) String() string {
	if *v.n == 0 {
		return ""
	}
	return bodyfile.FormatSize(*v.n)
}
func (v sizeValue) Type() string { return "SIZE" }
func (v sizeValue) Set(s string) error {
	n, err := bodyfile.ParseSize(s)
	if err != nil {
		return err
	}
	*v.n = n
	return nil
}
