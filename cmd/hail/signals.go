package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// signalWindow is how long after the first SIGINT/SIGTERM a signal still
// counts as the same one. Wrappers signal a process and its group
// microseconds apart (coreutils timeout, systemd's control-group stop,
// Ctrl-C reaching a shell pipeline), and a person cannot see the run
// stop and answer in less.
const signalWindow = 500 * time.Millisecond

// exitsAtOnce reports whether signal sig, arriving since after the first
// one (first), asks hail to exit at once: it came after the window, or it
// is a SIGINT (Ctrl-C at a terminal) after a SIGTERM (a service manager or
// timeout), which no wrapper sends as a pair.
func exitsAtOnce(first, sig os.Signal, since time.Duration) bool {
	return since >= signalWindow || first == syscall.SIGTERM && sig == os.Interrupt
}

// signals is the process's SIGINT/SIGTERM handling for a load or scenario
// run: caught from the start (catchSignals), so no signal meets the default
// action of killing hail with a temporary file left behind.
var signals struct {
	mu    sync.Mutex
	ch    chan os.Signal
	first os.Signal // the first signal; nil before it
	at    time.Time // when it arrived
	stop  func()    // stops the run gracefully; nil before handleSignals
	out   *output   // discarded when exiting at once
}

// catchSignals starts catching SIGINT and SIGTERM. A first signal before
// the run starts is held, and stops the run as soon as it starts (the
// report is then complete, and empty); see handleSignals.
func catchSignals() {
	signals.mu.Lock()
	defer signals.mu.Unlock()
	if signals.ch != nil {
		return
	}
	signals.ch = make(chan os.Signal, 8)
	signal.Notify(signals.ch, os.Interrupt, syscall.SIGTERM)
	go watchSignals(signals.ch)
}

func watchSignals(ch chan os.Signal) {
	for sig := range ch {
		now := time.Now()
		signals.mu.Lock()
		if signals.first == nil {
			signals.first, signals.at = sig, now
			stop := signals.stop
			signals.mu.Unlock()
			if stop != nil {
				stop()
			}
			continue
		}
		if !exitsAtOnce(signals.first, sig, now.Sub(signals.at)) {
			signals.mu.Unlock()
			continue
		}
		out := signals.out
		signals.mu.Unlock()
		if out != nil {
			out.Discard()
		}
		restoreTerminal()
		fmt.Fprintln(os.Stderr, "hail: interrupted twice, exiting at once")
		os.Exit(130)
	}
}

// handleSignals makes the first SIGINT/SIGTERM (or stop, called by the live
// view) close interrupt, which ends the run with a full report, and a
// second one — after signalWindow, or a SIGINT after a SIGTERM — exit at
// once with status 130, removing out's unfinished file. A signal caught
// before this call stops the run as soon as it starts. Call release when
// the run is over.
func handleSignals(out *output) (interrupt chan struct{}, stop func(), release func()) {
	catchSignals()
	interrupt = make(chan struct{})
	stop = sync.OnceFunc(func() { close(interrupt) })
	signals.mu.Lock()
	signals.stop, signals.out = stop, out
	pending := signals.first != nil
	signals.mu.Unlock()
	if pending {
		stop()
	}
	return interrupt, stop, func() {
		signals.mu.Lock()
		signals.stop = nil
		signals.mu.Unlock()
	}
}

// stopSelf stops the run as a first SIGTERM from outside does: a shard's
// coordinator asked it to stop (POST /stop at its start barrier), and the
// stop goes through the same signal handling.
func stopSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGTERM) }
