package engine

import (
	"time"

	"hail/internal/schedule"
)

// Ticket is one request handed to a worker: its number and its intended
// send time (in the closed model, the time it was claimed).
type Ticket struct {
	Hit uint64
	At  time.Duration
}

// Pace releases the job's requests at their intended times on tickets
// (open model) until the source is exhausted or the job stops, then closes
// tickets. Engines whose workers are one goroutine per connection (or per
// stream) run one Pace goroutine per run and buffer tickets to their
// number of workers: a request that finds every worker busy waits there.
func Pace(j *Job, tickets chan<- Ticket) {
	defer close(tickets)
	sleeper := schedule.NewSleeper()
	defer sleeper.Close()
	for {
		hit, at, ok := j.Source.Claim(j.Since())
		if !ok {
			return
		}
		if !sleeper.Until(j.Start, at, j.Stop) {
			return
		}
		select {
		case tickets <- Ticket{hit, at}:
		case <-j.Stop:
			return
		}
	}
}

// Next waits for a worker's next request. In the open model (tickets not
// nil) it takes one from Pace; queued reports that the ticket was already
// waiting, that is, no worker was free at its intended time. In the closed
// model it claims from the source, honouring connection stages: while
// connection slot conn is ramped down it calls idle once (close the
// connection) and waits. ok=false means the worker is done.
func Next(j *Job, tickets <-chan Ticket, conn int, idle func()) (t Ticket, queued, ok bool) {
	if tickets != nil {
		select {
		case t, ok = <-tickets:
			return t, true, ok
		default:
		}
		select {
		case t, ok = <-tickets:
			return t, false, ok
		case <-j.Stop:
			return t, false, false
		}
	}
	for {
		active, wait, never := j.Source.Active(conn, j.Since())
		if active {
			break
		}
		if never {
			return t, false, false
		}
		idle()
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-j.Stop:
			timer.Stop()
			return t, false, false
		}
	}
	hit, at, ok := j.Source.Claim(j.Since())
	return Ticket{hit, at}, false, ok
}
