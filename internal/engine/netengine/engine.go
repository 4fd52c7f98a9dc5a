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

	"hail/internal/engine"
)

// Engine is the net engine. The zero value is ready to use.
type Engine struct{}

// Name implements engine.Engine.
func (Engine) Name() string { return "net" }

// Run implements engine.Engine.
func (Engine) Run(j *engine.Job) error {
	var tickets chan engine.Ticket
	if j.Source.Open() {
		tickets = make(chan engine.Ticket, j.Connections)
		go engine.Pace(j, tickets)
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
