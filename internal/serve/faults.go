package serve

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const (
	maxFaultDuration = 10 * time.Minute
	maxFaultSize     = 64 << 20
	maxStallStates   = 1024
	faultCacheSize   = 4
)

// weighted is one entry of a percentage distribution; cum is the cumulative
// percentage up to and including this entry.
type weighted[T any] struct {
	cum float64
	v   T
}

// faults is the parsed fault-injection query of a request. Instances are
// immutable once built and shared through the per-connection cache.
type faults struct {
	err      string // non-empty: answer 400 with this line
	delays   []weighted[time.Duration]
	statuses []weighted[int]
	size     int64 // body size, -1 for the default body
	stall    *stallState
	closePct float64
	chunked  bool
	headers  bool // /echo?headers=1
}

// stallState is shared by all requests carrying the same stall= value.
type stallState struct {
	dur, off time.Duration
	t0       atomic.Int64 // arrival of the first request (since server start) + 1; 0 = unset
}

// cacheEntry maps a raw query string to its parsed faults.
type cacheEntry struct {
	key string
	f   *faults
}

// pick returns the value chosen by a uniform u in [0, 100).
func pick[T any](list []weighted[T], u float64) (T, bool) {
	for _, w := range list {
		if u < w.cum {
			return w.v, true
		}
	}
	var zero T
	return zero, false
}

// pct returns a uniform float64 in [0, 100).
func pct(r *rand.PCG) float64 {
	return float64(r.Uint64()>>11) * (100.0 / (1 << 53))
}

// parseFaults parses a raw query string. It never fails: errors are recorded
// in the result's err field.
func (s *Server) parseFaults(raw string) *faults {
	f := &faults{size: -1}
	seen := map[string]bool{}
	for rest := raw; rest != ""; {
		var kv string
		kv, rest, _ = strings.Cut(rest, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, "%+") {
			if u, err := url.QueryUnescape(k); err == nil {
				k = u
			}
		}
		switch k {
		case "delay", "status", "size", "stall", "close", "chunked", "headers":
		default:
			continue // not ours (cache busters, other tools' parameters)
		}
		if strings.ContainsAny(v, "%+") {
			u, err := url.QueryUnescape(v)
			if err != nil {
				f.err = badParam(k, v, "bad percent-encoding")
				return f
			}
			v = u
		}
		if seen[k] {
			f.err = badParam(k, v, "given more than once")
			return f
		}
		seen[k] = true
		if msg := s.applyFault(f, k, v); msg != "" {
			f.err = badParam(k, v, msg)
			return f
		}
	}
	return f
}

func badParam(k, v, why string) string {
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	return fmt.Sprintf("bad parameter %s=%q: %s\n", k, v, why)
}

// applyFault parses one parameter into f and returns a reason on error.
func (s *Server) applyFault(f *faults, k, v string) string {
	var err error
	switch k {
	case "delay":
		f.delays, err = parseDist(v, parseFaultDuration)
	case "status":
		f.statuses, err = parseDist(v, parseStatus)
	case "size":
		f.size, err = parseSize(v)
	case "close":
		f.closePct, err = parsePercent(v)
	case "chunked":
		f.chunked, err = parseBool(v)
	case "headers":
		f.headers, err = parseBool(v)
	case "stall":
		dur, off, perr := parseStall(v)
		if perr != nil {
			err = perr
			break
		}
		if f.stall = s.stallFor(v, dur, off); f.stall == nil {
			return fmt.Sprintf("more than %d distinct stall values on this server", maxStallStates)
		}
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// parseDist parses "v" (100%) or "v:pct,v:pct,..." (percentages summing to
// at most 100).
func parseDist[T any](v string, parse func(string) (T, error)) ([]weighted[T], error) {
	if v == "" {
		return nil, fmt.Errorf("empty value")
	}
	if !strings.ContainsAny(v, ":,") {
		x, err := parse(v)
		if err != nil {
			return nil, err
		}
		return []weighted[T]{{100, x}}, nil
	}
	var out []weighted[T]
	sum := 0.0
	for _, e := range strings.Split(v, ",") {
		val, p, ok := strings.Cut(e, ":")
		if !ok {
			return nil, fmt.Errorf("entry %q needs VALUE:PERCENT in a list", e)
		}
		x, err := parse(val)
		if err != nil {
			return nil, err
		}
		pc, err := parsePercent(p)
		if err != nil {
			return nil, err
		}
		sum += pc
		if sum > 100+1e-9 {
			return nil, fmt.Errorf("percentages sum to more than 100")
		}
		out = append(out, weighted[T]{sum, x})
	}
	return out, nil
}

// parseFaultDuration parses a Go duration or a plain number of milliseconds.
func parseFaultDuration(v string) (time.Duration, error) {
	var d time.Duration
	if ms, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "eEnNiIxXpP") {
		d = time.Duration(ms * float64(time.Millisecond))
		if ms > float64(maxFaultDuration/time.Millisecond) {
			d = maxFaultDuration + 1
		}
	} else {
		d, err = time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (like 5ms, 1.5s, or 20 meaning 20ms)", v)
		}
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration")
	}
	if d > maxFaultDuration {
		return 0, fmt.Errorf("duration exceeds %v", maxFaultDuration)
	}
	return d, nil
}

func parseStatus(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || len(v) != 3 {
		return 0, fmt.Errorf("%q is not a status code", v)
	}
	if n < 200 || n > 599 {
		return 0, fmt.Errorf("status %d outside 200-599", n)
	}
	return n, nil
}

func parsePercent(v string) (float64, error) {
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || strings.ContainsAny(v, "nNiIxXpP") {
		return 0, fmt.Errorf("%q is not a percentage", v)
	}
	if p < 0 || p > 100 {
		return 0, fmt.Errorf("percentage %v outside 0-100", v)
	}
	return p, nil
}

// parseSize parses a byte count with an optional k (KiB) or m (MiB) suffix.
func parseSize(v string) (int64, error) {
	num, mult := v, int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k', 'K':
			num, mult = v[:n-1], 1<<10
		case 'm', 'M':
			num, mult = v[:n-1], 1<<20
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || num == "" || num[0] == '+' {
		return 0, fmt.Errorf("%q is not a size (like 100, 4k or 1m)", v)
	}
	if n > maxFaultSize/mult {
		return 0, fmt.Errorf("size exceeds 64m")
	}
	return n * mult, nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (use 1 or 0)", v)
}

// parseStall parses "DURATION@OFFSET" (or "DURATION", offset 0).
func parseStall(v string) (dur, off time.Duration, err error) {
	d, o, hasOff := strings.Cut(v, "@")
	if dur, err = parseFaultDuration(d); err != nil {
		return 0, 0, err
	}
	if hasOff {
		if off, err = parseFaultDuration(o); err != nil {
			return 0, 0, err
		}
	}
	return dur, off, nil
}

// stallFor returns the shared state for a stall value, or nil when too many
// distinct values are in use.
func (s *Server) stallFor(v string, dur, off time.Duration) *stallState {
	s.stallMu.Lock()
	defer s.stallMu.Unlock()
	if st := s.stalls[v]; st != nil {
		return st
	}
	if len(s.stalls) >= maxStallStates {
		return nil
	}
	st := &stallState{dur: dur, off: off}
	s.stalls[v] = st
	return st
}

// hold returns how long a response about to be sent at now must wait, given
// that its request arrived at arrival (both since server start).
func (st *stallState) hold(arrival, now time.Duration) time.Duration {
	st.t0.CompareAndSwap(0, int64(arrival)+1)
	t0 := time.Duration(st.t0.Load() - 1)
	from, until := t0+st.off, t0+st.off+st.dur
	if now >= from && now < until {
		return until - now
	}
	return 0
}
