package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/bodyfile"
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

// intsValue is a repeatable whole-number flag: each use adds one.
type intsValue struct {
	n    *[]int
	what string
}

func (v intsValue) String() string {
	parts := make([]string, len(*v.n))
	for i, n := range *v.n {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
func (v intsValue) Type() string { return "N" }
func (v intsValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a whole number (%s)", s, v.what)
	}
	*v.n = append(*v.n, n)
	return nil
}

// durationValue is a positive duration: a Go duration ("10s", "1m30s",
// "250ms"), oha's humantime, or a plain number of seconds. zero says what
// 0 would mean and why the flag refuses it; every flag that refuses 0
// says so.
type durationValue struct {
	d    *time.Duration
	zero string
}

func (v durationValue) String() string {
	if *v.d == 0 {
		return ""
	}
	return v.d.String()
}
func (v durationValue) Type() string { return "DURATION" }
func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if errors.Is(err, errZeroDuration) {
		return errors.New(v.zero)
	}
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// zeroDurationValue is a duration flag that also takes 0 (as 0, 0s, 0ms…):
// none, or off, as the flag's help says.
type zeroDurationValue struct{ d *time.Duration }

func (v zeroDurationValue) String() string {
	if *v.d == 0 {
		return "0" // no default shown in the help
	}
	return v.d.String()
}
func (v zeroDurationValue) Type() string { return "DURATION" }
func (v zeroDurationValue) Set(s string) error {
	d, err := parseDuration(s)
	if errors.Is(err, errZeroDuration) {
		*v.d = 0
		return nil
	}
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// What 0 would mean for the flags that refuse it, and why they do.
const (
	zeroRun            = "0 would be a run of no time, which sends nothing: give a positive duration such as 10s (or -n for a number of requests)"
	zeroBurstDelay     = "0 would send every burst at once, with no pause between them: give a positive interval such as 100ms (-q 0 sends as fast as the connections allow)"
	zeroConnectTimeout = "0 would wait for a connection as long as the kernel does (about 2 minutes when nothing answers; for ever for a server that accepts and stays silent): give a positive timeout such as 5s"
)

// errZeroDuration is parseDuration's error for a duration of 0: each flag
// says whether it takes one.
var errZeroDuration = errors.New("a zero duration")

// parseDuration reads a duration as oha does (humantime: 10s, 2min,
// '1m 30s', '1s 500ms', 3h, 1day), as Go writes it (1m30s, 1.5s, 250ms), or
// a plain number of seconds. 0 in any of these forms (0, 0s, 0ms, 0.0) is
// errZeroDuration.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f > 1e9 {
			return 0, fmt.Errorf("%q is too long: a plain number of seconds goes up to 1e9 (31 years)", s)
		}
		if f == 0 && allZero(t) {
			return 0, errZeroDuration
		}
		d := time.Duration(f * float64(time.Second))
		if f < 0 || d <= 0 {
			return 0, fmt.Errorf("%q must be a positive duration of at least 1ns, such as 10s, 1m or 250ms", s)
		}
		return d, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		d, err = parseHumantime(t)
	}
	if errors.Is(err, errTooLong) {
		return 0, fmt.Errorf("%q is too long: the longest duration is %dh (292 years)", s, math.MaxInt64/int64(time.Hour))
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration: write it like 10s, 1m30s, '1m 30s', 2min or 250ms", s)
	case d == 0 && allZero(t):
		return 0, errZeroDuration
	case d <= 0 || strings.HasPrefix(t, "-"):
		return 0, fmt.Errorf("%q must be a positive duration of at least 1ns, such as 10s, 1m or 250ms", s)
	}
	return d, nil
}

// allZero reports whether every digit of a duration's text is 0 (0,
// 0.0, 0s, 0ms, '0m 0s'): a zero written as such, not a value too small
// to hold (1e-12, 0.1ns).
func allZero(t string) bool {
	if strings.ContainsAny(t, "eE") && strings.ContainsAny(t, "123456789") {
		return false
	}
	return !strings.ContainsAny(t, "123456789")
}

// humantimeUnits are the units of oha's durations (the humantime crate).
var humantimeUnits = func() map[string]time.Duration {
	m := map[string]time.Duration{}
	add := func(d time.Duration, names ...string) {
		for _, n := range names {
			m[n] = d
		}
	}
	const day = 24 * time.Hour
	add(time.Nanosecond, "nsec", "ns")
	add(time.Microsecond, "usec", "us", "µs")
	add(time.Millisecond, "msec", "ms")
	add(time.Second, "seconds", "second", "secs", "sec", "s")
	add(time.Minute, "minutes", "minute", "mins", "min", "m")
	add(time.Hour, "hours", "hour", "hrs", "hr", "h")
	add(day, "days", "day", "d")
	add(7*day, "weeks", "week", "w")
	add(2_630_016*time.Second, "months", "month", "M") // 30.44 days
	add(31_557_600*time.Second, "years", "year", "y")  // 365.25 days
	return m
}()

// errTooLong is a duration past time.Duration's range (292 years).
var errTooLong = errors.New("too long")

// parseHumantime reads a sequence of NUMBER UNIT pairs, spaces allowed
// between and inside them: "2min", "1m 30s", "1h30m", "1s 500ms".
func parseHumantime(s string) (time.Duration, error) {
	var total float64
	i, pairs := 0, 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		n, err := strconv.ParseFloat(s[i:j], 64)
		if err != nil {
			return 0, fmt.Errorf("expected a number at %q", s[i:])
		}
		for j < len(s) && s[j] == ' ' {
			j++
		}
		k := j
		for k < len(s) && s[k] != ' ' && (s[k] < '0' || s[k] > '9') && s[k] != '.' {
			k++
		}
		unit, ok := humantimeUnits[s[j:k]]
		if !ok {
			return 0, fmt.Errorf("unknown unit %q", s[j:k])
		}
		total += n * float64(unit)
		i, pairs = k, pairs+1
	}
	if pairs == 0 {
		return 0, fmt.Errorf("not a duration")
	}
	if total >= math.MaxInt64 {
		return 0, errTooLong
	}
	return time.Duration(total), nil
}

// rateValue is -q: requests per second, 0 for no limit (as oha).
type rateValue struct{ f *float64 }

func (v rateValue) String() string {
	if *v.f == 0 {
		return ""
	}
	return strconv.FormatFloat(*v.f, 'g', -1, 64)
}
func (v rateValue) Type() string { return "RATE" }
func (v rateValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return fmt.Errorf("%q is not a rate: give requests per second, a positive number (0: no limit)", s)
	}
	*v.f = f
	return nil
}

// versionValue is an HTTP version among the accepted spellings.
type versionValue struct {
	s       *string
	choices []string
}

func (v versionValue) String() string { return *v.s }
func (v versionValue) Type() string   { return "VERSION" }
func (v versionValue) Set(s string) error {
	return choiceValue(v).Set(strings.TrimSpace(s))
}

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
