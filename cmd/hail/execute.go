package main

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/tui"
	"github.com/hail-loadgen/hail/result"
)

// execute runs p for the load and run commands: with the live view when
// stdout is a terminal (else a progress line on a terminal stderr), with
// the results features wired in, and returns the Result with every traced
// request written. The caller writes the report.
func execute(p *plan.Plan, f *outputFlags, stop func(), out *output, results *resultsRun, opts run.Options, scen *tui.Scenario) (*result.Result, error) {
	var live *liveView
	if wantTUI(f) {
		var steps []string
		if opts.Workload != nil {
			steps = opts.Workload.Steps
		}
		live = startLiveView(p, run.OpenModel(p, opts.Workload), f, stop, out, steps, scen, results.targetPID(), extrasOf(opts.Workload))
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
