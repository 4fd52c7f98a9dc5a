//go:build linux

package uringengine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Engine is the io_uring engine. The zero value is ready to use.
type Engine struct {
	// Workers is the number of event-loop threads, each with its own ring
	// (0: GOMAXPROCS). There are never more workers than connections.
	Workers int
	// SQPoll gives every ring a kernel thread that polls its submission
	// queue (IORING_SETUP_SQPOLL): steady-state submissions need no system
	// call, at the price of a busy kernel thread per worker.
	SQPoll bool

	// bufSize and bufCount override the provided-buffer sizing (tests).
	bufSize, bufCount int
}

// Name implements engine.Engine.
func (*Engine) Name() string { return "uring" }

// Run implements engine.Engine. It returns an error, and sends nothing, when
// a worker cannot set up its ring.
func (e *Engine) Run(j *engine.Job) error {
	if err := Available(); err != nil {
		return err
	}
	if j.Dialer == nil {
		return errors.New("uring engine: the job has no dialer")
	}
	// What the engine cannot open itself is refused before anything starts
	// (run.Select already routes these plans to the net engine).
	ep, _, err := j.Dialer.Endpoint(context.Background())
	switch {
	case ep.TLS:
		return errors.New("uring engine: TLS targets need --engine net (the uring engine speaks plain HTTP/1.1)")
	case errors.Is(err, transport.ErrNoEndpoint):
		return fmt.Errorf("uring engine: %w", err)
	}
	nw := e.Workers
	if nw <= 0 {
		nw = min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	}
	nw = max(1, min(nw, j.Connections))
	// Each worker holds a P while it runs its ring. One more P lets the
	// rest of hail (collector, live view, signals) run without taking a
	// worker's P while it waits in io_uring_enter: on one core that hand-off
	// cost ~10% CPU per request with the live view on.
	defer holdProcs(nw)()
	workers := make([]*worker, nw)
	ready := make(chan error, nw)
	start := make(chan bool)
	var wg sync.WaitGroup
	base := 0
	for i := range workers {
		n := j.Connections / nw
		if i < j.Connections%nw {
			n++
		}
		w := newWorker(e, j, i, n)
		w.connBase, base = int32(base), base+n
		w.stages.nworkers = nw
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.main(ready, start)
		}()
	}
	var setupErr error
	for range workers {
		if err := <-ready; err != nil && setupErr == nil {
			setupErr = err
		}
	}
	// Every worker waits for the verdict: run, or tear down unused.
	go func() {
		for range workers {
			start <- setupErr == nil
		}
	}()
	wg.Wait()
	if setupErr != nil {
		return fmt.Errorf("uring engine: %w", setupErr)
	}
	for _, w := range workers {
		if w.err != nil {
			return fmt.Errorf("uring engine: worker %d: %w", w.id, w.err)
		}
	}
	return nil
}
