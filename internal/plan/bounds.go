package plan

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// MaxSchedule is the longest an open-model run bounded only by its number
// of requests (Requests, no Duration) may be scheduled to last: a longer
// one is a mistake (-q 1e-9 -n 5 would send one request and wait 127
// years), and a Duration bounds a run that truly is that long.
const MaxSchedule = 7 * 24 * time.Hour

// LongSchedule is how long such a schedule may be before Notes says how
// long it is.
const LongSchedule = time.Hour

// scheduleSpan is when the last of the open model's Requests is due, in
// seconds from the start, with the field that sets the pace, its value and
// how the requests go out; ok is false for the closed model and for runs a
// Duration bounds.
func (p *Plan) scheduleSpan() (span float64, field, value, how string, ok bool) {
	if p.Requests == 0 || p.Duration > 0 {
		return 0, "", "", "", false
	}
	n := float64(p.Requests)
	switch {
	case p.Rate > 0:
		return (n - 1) / p.Rate, "Rate", strconv.FormatFloat(p.Rate, 'g', -1, 64),
			fmt.Sprintf("with {Requests} %d", p.Requests), true
	case p.BurstEvery > 0:
		size := max(p.BurstSize, 1)
		return (math.Ceil(n/float64(size)) - 1) * p.BurstEvery.Seconds(), "BurstEvery", p.BurstEvery.String(),
			fmt.Sprintf("with {Requests} %d in bursts of %d", p.Requests, size), true
	}
	return 0, "", "", "", false
}

// validateSchedule refuses an open-model schedule longer than MaxSchedule.
func (p *Plan) validateSchedule() error {
	span, field, value, how, ok := p.scheduleSpan()
	if !ok || span <= MaxSchedule.Seconds() {
		return nil
	}
	return &FieldError{Field: field, Value: value, Problem: fmt.Sprintf(
		"%s the last request would be due after %s, beyond any load test (at most %s without {Duration}): raise the rate, lower {Requests}, or give {Duration} to run for a set time",
		how, spanText(span), spanText(MaxSchedule.Seconds()))}
}

// Notes are what the user should know before a valid plan runs, rendered
// with name(field) for each field they mention (FlagName on the command
// line): an open-model schedule longer than LongSchedule, or a Duration too
// short for more than the first request at the Rate.
func (p *Plan) Notes(name func(field string) string) []string {
	var notes []string
	if span, field, value, how, ok := p.scheduleSpan(); ok && span > LongSchedule.Seconds() {
		notes = append(notes, (&FieldError{Field: field, Value: value, Problem: fmt.Sprintf(
			"%s the run lasts %s: the last request is due then ({Duration} bounds the run)", how, spanText(span))}).Message(name))
	}
	if p.Duration > 0 && p.Rate > 0 && p.Duration.Seconds()*p.Rate < 1 {
		notes = append(notes, (&FieldError{Field: "Duration", Value: p.Duration.String(), Problem: fmt.Sprintf(
			"at {Rate} %s only the first request is due within it", strconv.FormatFloat(p.Rate, 'g', -1, 64))}).Message(name))
	}
	return notes
}

// FitConnections lowers Connections to what a run bounded by its number of
// requests (Requests without Duration) can use — the requests, over the
// streams per connection — since a connection beyond them would never
// send, and its state (buffers, a goroutine or ring slots) would be wasted.
// It returns a note saying so, rendered with name as Notes are, or "" when
// nothing changed.
func (p *Plan) FitConnections(name func(field string) string) string {
	if p.Requests == 0 || p.Duration > 0 {
		return ""
	}
	streams := uint64(p.StreamsPerConn())
	need := (p.Requests + streams - 1) / streams
	if uint64(p.Connections) <= need {
		return ""
	}
	e := &FieldError{Field: "Connections", Value: strconv.Itoa(p.Connections),
		Problem: fmt.Sprintf("lowered to %d: a run of %d requests ({Requests}) needs no more connections", need, p.Requests)}
	if streams > 1 {
		e.Problem = fmt.Sprintf("lowered to %d: %d requests ({Requests}) over %d streams per connection ({Streams}) need no more", need, p.Requests, streams)
	}
	p.Connections = int(need)
	return e.Message(name)
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
