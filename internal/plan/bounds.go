package plan

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// MaxSchedule is the longest an open-model run bounded only by its number
// of requests (-n, no -z) may be scheduled to last: a longer one is a
// mistake (-q 1e-9 -n 5 would send one request and wait 127 years), and
// -z bounds a run that truly is that long.
const MaxSchedule = 7 * 24 * time.Hour

// LongSchedule is how long such a schedule may be before hail says up front
// how long it is (Notes).
const LongSchedule = time.Hour

// scheduleSpan is when the last of the open model's -n requests is due, in
// seconds from the start, and the flags that make it so; ok is false for
// the closed model and for runs -z bounds.
func (p *Plan) scheduleSpan() (span float64, what string, ok bool) {
	if p.Requests == 0 || p.Duration > 0 {
		return 0, "", false
	}
	n := float64(p.Requests)
	switch {
	case p.Rate > 0:
		return (n - 1) / p.Rate, fmt.Sprintf("-n %d at -q %s", p.Requests, strconv.FormatFloat(p.Rate, 'g', -1, 64)), true
	case p.BurstEvery > 0:
		size := float64(max(p.BurstSize, 1))
		return (math.Ceil(n/size) - 1) * p.BurstEvery.Seconds(),
			fmt.Sprintf("-n %d in bursts of %d every %v", p.Requests, max(p.BurstSize, 1), p.BurstEvery), true
	}
	return 0, "", false
}

// validateSchedule rejects an open-model schedule longer than MaxSchedule.
func (p *Plan) validateSchedule() error {
	span, what, ok := p.scheduleSpan()
	if !ok || span <= MaxSchedule.Seconds() {
		return nil
	}
	return fmt.Errorf("%s: the last request would be due after %s, beyond any load test (at most %s without -z): raise the rate, lower -n, or give -z to run for a set time",
		what, spanText(span), spanText(MaxSchedule.Seconds()))
}

// Notes are what the user should know before a valid plan runs: an
// open-model schedule longer than LongSchedule, or a -z too short for more
// than the first request at the given rate.
func (p *Plan) Notes() []string {
	var notes []string
	if span, what, ok := p.scheduleSpan(); ok && span > LongSchedule.Seconds() {
		notes = append(notes, fmt.Sprintf("%s lasts %s: the last request is due then (-z bounds the run)", what, spanText(span)))
	}
	if p.Duration > 0 && p.Rate > 0 && float64(p.Duration)/1e9*p.Rate < 1 {
		notes = append(notes, fmt.Sprintf("at -q %s only the first request is due within -z %v",
			strconv.FormatFloat(p.Rate, 'g', -1, 64), p.Duration))
	}
	return notes
}

// FitConnections lowers Connections to what a run bounded by its number of
// requests (-n without -z) can use — the requests, over the streams per
// connection — since a connection beyond them would never send, and its
// state (buffers, a goroutine or ring slots) would be wasted. It returns a
// note saying so, or "" when nothing changed.
func (p *Plan) FitConnections() string {
	if p.Requests == 0 || p.Duration > 0 {
		return ""
	}
	streams := uint64(p.StreamsPerConn())
	need := (p.Requests + streams - 1) / streams
	if uint64(p.Connections) <= need {
		return ""
	}
	was := p.Connections
	p.Connections = int(need)
	if streams > 1 {
		return fmt.Sprintf("-c %d lowered to %d: %d requests over %d streams per connection need no more", was, need, p.Requests, streams)
	}
	return fmt.Sprintf("-c %d lowered to %d: a run of %d requests needs no more connections", was, need, p.Requests)
}

// spanText writes a length of time in seconds for people: 2h30m0s, 41
// days, 127 years.
func spanText(sec float64) string {
	const day = 24 * 3600
	switch {
	case sec >= 2*365*day:
		return fmt.Sprintf("%.0f years", sec/(365.25*day))
	case sec >= 2*day:
		return fmt.Sprintf("%.0f days", sec/day)
	}
	return time.Duration(sec * 1e9).Round(time.Second).String()
}
