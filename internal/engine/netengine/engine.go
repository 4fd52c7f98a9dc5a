// Package netengine is hail's portable engine: one goroutine per connection
// over net.Conn (TCP, TLS, unix sockets), speaking HTTP/1.1 through the
// shared internal/http1 codec. Requests are encoded once before the run and
// responses are parsed in place from a per-connection buffer, so a request
// costs no allocation in steady state.
//
// In the open model every connection paces itself (engine.Taker): it claims
// the next request and sleeps on the run's schedule.Alarm until its
// intended time. A request that falls due while every connection is busy
// is claimed by the first connection to become free, and its wait is
// counted as the target's backpressure. Latency is measured from the
// intended time either way.
package netengine

import (
	"sync"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/schedule"
)

// Engine is the net engine. The zero value is ready to use.
type Engine struct{}

// Name implements engine.Engine.
func (Engine) Name() string { return "net" }

// Run implements engine.Engine.
func (Engine) Run(j *engine.Job) error {
	var alarm *schedule.Alarm
	if j.Source.Open() {
		alarm = schedule.NewAlarm(j.Start, j.Pacing)
		defer alarm.Close()
	}
	workers := make([]*worker, j.Connections)
	var occ *engine.Occupancy
	if alarm != nil {
		occ = engine.NewOccupancy(j.Connections)
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, dialSlots)
	for i := range workers {
		w := newWorker(j, i, alarm, slots)
		if occ != nil {
			w.take.Share(occ)
		}
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
