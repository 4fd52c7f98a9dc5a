package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/term"

	"hail/internal/plan"
	"hail/internal/report"
	"hail/internal/run"
	"hail/internal/stats"
	"hail/internal/tui"
)

// execute runs p for the load and run commands: with the live view when
// stdout is a terminal (else a progress line on a terminal stderr), with
// the results features wired in, and returns the Result with every traced
// request written. The caller writes the report.
func execute(p *plan.Plan, f *outputFlags, stop func(), out *output, results *resultsRun, opts run.Options, scen *tui.Scenario) (*report.Result, error) {
	var live *liveView
	if wantTUI(f) {
		var steps []string
		if opts.Workload != nil {
			steps = opts.Workload.Steps
		}
		live = startLiveView(p, f, stop, out, steps, scen, results.targetPID())
	}
	progress := live == nil && term.IsTerminal(int(os.Stderr.Fd()))
	if progress {
		opts.Progress = func(s stats.Snapshot) { printProgress(os.Stderr, s) }
	}
	if live != nil {
		opts.Observe = live.observe
	}
	results.wire(&opts)
	res, err := run.Run(context.Background(), p, opts)
	if err != nil {
		results.abort()
	} else {
		err = results.finish(res) // every traced request written, the SQLite file closed
	}
	if live != nil {
		live.close()
	}
	if progress {
		fmt.Fprint(os.Stderr, "\r\x1b[K")
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// handleSignals makes the first SIGINT/SIGTERM (or stop, called by the live
// view) close interrupt, which ends the run with a full report, and a second
// signal exit at once with status 130, leaving no half-written output.
// Call release when the run is over.
func handleSignals(out *output) (interrupt chan struct{}, stop func(), release func()) {
	interrupt = make(chan struct{})
	stop = sync.OnceFunc(func() { close(interrupt) })
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		stop()
		<-sigs
		out.Discard()
		restoreTerminal()
		fmt.Fprintln(os.Stderr, "hail: interrupted twice, exiting at once")
		os.Exit(130)
	}()
	return interrupt, stop, func() { signal.Stop(sigs) }
}
