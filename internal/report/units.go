package report

// Times in the units the JSON document holds them (internal/wire converts
// a whole Result; these are for the renderers).

import (
	"math"
	"time"
)

// seconds is s seconds as a Duration, to the nearest nanosecond (as
// internal/wire reads a float time).
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// micros is d in microseconds, as the JSON's *_us keys hold it.
func micros(d time.Duration) float64 { return float64(d) / 1e3 }

// unixNano is t in Unix nanoseconds as the JSON's start_unix_nano holds
// it (0 for the zero Time).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
