// Package netengine is hail's portable engine: one goroutine per connection
// over net.Conn (TCP, TLS, unix sockets), speaking HTTP/1.1 through the
// shared internal/http1 codec. Requests are encoded once before the run and
// responses are parsed in place from a per-connection buffer, so a request
// costs no allocation in steady state.
//
// In the open model a single pacer goroutine, on a thread with 1 ns timer
// slack, releases each request at its intended time over a buffered
// channel; a connection that is free receives it directly, and a request
// that finds every connection busy waits in the channel and is counted as
// queued. Latency is measured from the intended time either way.
package netengine

import (
	"sync"
	"time"

	"hail/internal/engine"
	"hail/internal/schedule"
)

// Engine is the net engine. The zero value is ready to use.
type Engine struct{}

// Name implements engine.Engine.
func (Engine) Name() string { return "net" }

// Run implements engine.Engine.
func (Engine) Run(j *engine.Job) error {
	var tickets chan ticket
	if j.Source.Open() {
		tickets = make(chan ticket, j.Connections)
		go pace(j, tickets)
	}
	workers := make([]*worker, j.Connections)
	var wg sync.WaitGroup
	for i := range workers {
		w := newWorker(j, i, tickets)
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-j.Abort:
			for _, w := range workers {
				w.abort()
			}
		case <-done:
		}
	}()
	wg.Wait()
	close(done)
	return nil
}

// pace releases requests at their intended times until the source is done.
// ticket is one request released by the pacer.
type ticket struct {
	hit uint64        // request number
	at  time.Duration // intended send time
}

func pace(j *engine.Job, tickets chan<- ticket) {
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
		case tickets <- ticket{hit, at}:
		case <-j.Stop:
			return
		}
	}
}
