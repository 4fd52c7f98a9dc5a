package llmserve

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// FaultKind is a fault the mock injects into a share of its requests.
type FaultKind uint8

// The fault kinds. 429 and 503 answer at once, before the request takes a
// batch slot; the others strike a streaming response after a random number
// of tokens (see the package documentation).
const (
	faultNone  FaultKind = iota
	Fault429             // 429 Too Many Requests with Retry-After
	Fault503             // 503 Service Unavailable with Retry-After
	FaultError           // an error event in place of the next token, then [DONE]
	FaultStall           // the next token comes Duration late, then the stream goes on
	FaultDrop            // the connection is closed (HTTP/2: the stream is reset)
)

var faultNames = [...]string{faultNone: "none", Fault429: "429", Fault503: "503", FaultError: "error", FaultStall: "stall", FaultDrop: "drop"}

// String is the fault's name as written in --fault and the log.
func (k FaultKind) String() string { return faultNames[k] }

// defaultRetryAfter is the Retry-After of a 429 or 503 given no duration.
const defaultRetryAfter = time.Second

// Fault is one entry of the fault mix: Percent of the requests get Kind.
type Fault struct {
	// Kind is the fault.
	Kind FaultKind
	// Percent is the share of requests that get it, in (0, 100].
	Percent float64
	// Duration is the stall's length (FaultStall), or the Retry-After
	// (Fault429, Fault503: sent in whole seconds, rounded up).
	Duration time.Duration
}

// ParseFault parses KIND:PERCENT[:DURATION]: 429:5 (5% get 429, Retry-After:
// 1), 503:2:3s, error:1, drop:0.5, stall:1:2s (the duration is required for
// stall).
func ParseFault(s string) (Fault, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return Fault{}, fmt.Errorf("%q: write KIND:PERCENT[:DURATION], e.g. 429:5, 503:2:3s, error:1, drop:1, stall:1:2s", s)
	}
	var f Fault
	for k, name := range faultNames {
		if k != int(faultNone) && parts[0] == name {
			f.Kind = FaultKind(k)
		}
	}
	if f.Kind == faultNone {
		return Fault{}, fmt.Errorf("%q: unknown fault %q (429, 503, error, stall, drop)", s, parts[0])
	}
	p, err := strconv.ParseFloat(strings.TrimSuffix(parts[1], "%"), 64)
	if err != nil || math.IsNaN(p) || p <= 0 || p > 100 {
		return Fault{}, fmt.Errorf("%q: the percentage %q must be a number above 0 and at most 100", s, parts[1])
	}
	f.Percent = p
	switch {
	case len(parts) == 3:
		if f.Kind == FaultError || f.Kind == FaultDrop {
			return Fault{}, fmt.Errorf("%q: %s takes no duration", s, parts[0])
		}
		if f.Duration, err = parseDur(parts[2]); err != nil {
			return Fault{}, fmt.Errorf("%q: %v", s, err)
		}
	case f.Kind == FaultStall:
		return Fault{}, fmt.Errorf("%q: a stall needs its length, e.g. stall:%s:2s", s, parts[1])
	case f.Kind == Fault429 || f.Kind == Fault503:
		f.Duration = defaultRetryAfter
	}
	return f, nil
}

// String is the fault as ParseFault reads it.
func (f Fault) String() string {
	s := f.Kind.String() + ":" + strconv.FormatFloat(f.Percent, 'g', -1, 64)
	if f.Kind != FaultError && f.Kind != FaultDrop {
		s += ":" + f.Duration.String()
	}
	return s
}

// retryAfter is the Retry-After value in whole seconds, rounded up.
func (f *Fault) retryAfter() int64 {
	return int64((f.Duration + time.Second - 1) / time.Second)
}

// pickFault returns the fault a uniform u in [0, 100) selects from the mix,
// or nil: the faults take consecutive shares of [0, 100).
func pickFault(mix []Fault, u float64) *Fault {
	var cum float64
	for i := range mix {
		cum += mix[i].Percent
		if u < cum {
			return &mix[i]
		}
	}
	return nil
}
