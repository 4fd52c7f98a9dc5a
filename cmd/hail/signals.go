package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// The signal table: what SIGINT, SIGTERM and SIGHUP do in each phase of a
// load, gRPC or scenario run. It is implemented here and nowhere else, and
// documented in docs/reliability.md ("Signals") and the README.
//
//	phase      a signal                                     a further one
//	setup      stops the setup at once: the run starts and  exit 130 at once
//	           stops at once (a complete, empty result,
//	           exit 0); what cannot start without what was
//	           stopped (DNS, the gRPC probe and schema,
//	           --start-at) exits 130 with one line
//	load       stops sending; in-flight requests settle     exit 130 at once
//	           (-w waits, bounded by -t, else 30 s; without
//	           -w they are aborted): report written, exit 0
//	drain      (-w settling after -z or a signal) aborts    exit 130 at once
//	           what is left: report written, exit 0
//	teardown   stops the teardown (its step in flight is    exit 130 at once
//	           aborted): report written, exit 0
//	output     ignored: writing ends in milliseconds        exit 130 at once
//
// SIGHUP (a closed terminal or ssh session) is SIGTERM. A signal within
// signalWindow of the previous one, and not a SIGINT after a SIGTERM or
// SIGHUP, is the same signal (exitsAtOnce). "A further one" is any signal
// after the one that stopped the current phase, or the previous phases but
// the teardown's: the teardown, which runs after a load stopped by a
// signal too, can be stopped by a signal of its own. Exiting at once
// removes the unfinished -o file. Exit 0 is then the run's outcome, as
// after any run (main.go): 3 when no request succeeded (a signal before
// the first response came back), 2 when a scenario's threshold failed.

// phase is where a run is, as the signal table knows it.
type phase int

const (
	phaseSetup    phase = iota // flags, files, DNS, TLS, the gRPC probe and schema, a scenario's setup steps, --start-at
	phaseLoad                  // the load, and its settling (drain) once stopped: run.Run
	phaseTeardown              // a scenario's teardown steps
	phaseOutput                // writing the report and -o
)

// action is what a signal does.
type action int

const (
	actIgnore action = iota // the same signal again, or one while the output is written
	actStop                 // stop the current phase (setup, load or drain, teardown) gracefully
	actExit                 // exit 130 at once, removing the unfinished -o file
)

// signalAction is the table: what signal sig does in phase p, given the
// signal that stopped the phase already (nil: none did) and the previous
// signal that counted (prev, since ago; nil: none).
func signalAction(p phase, stoppedBy, prev, sig os.Signal, since time.Duration) action {
	switch {
	case prev != nil && !exitsAtOnce(prev, sig, since):
		return actIgnore // the same signal, delivered twice (a process and its group)
	case stoppedBy != nil:
		return actExit
	case p == phaseOutput:
		return actIgnore
	}
	return actStop
}

// signalWindow is how long after a signal another still counts as the
// same one. Wrappers signal a process and its group microseconds apart
// (coreutils timeout, systemd's control-group stop, Ctrl-C reaching a
// shell pipeline), and a person cannot see the run stop and answer in
// less.
const signalWindow = 500 * time.Millisecond

// exitsAtOnce reports whether signal sig, arriving since after the
// previous one (first), is a new signal rather than the same one again: it
// came after the window, or it is a SIGINT (Ctrl-C at a terminal) after a
// SIGTERM or SIGHUP (a service manager, timeout, a closed terminal), which
// no wrapper sends as a pair.
func exitsAtOnce(first, sig os.Signal, since time.Duration) bool {
	return since >= signalWindow || first != os.Interrupt && sig == os.Interrupt
}

// signals is the process's signal handling for a load, gRPC or scenario
// run: caught from the start (catchSignals), so no signal meets the
// default action of killing hail with a temporary file left behind.
var signals struct {
	mu        sync.Mutex
	ch        chan os.Signal
	phase     phase
	stoppedBy os.Signal // the signal that stopped the current phase (see the table)
	prev      os.Signal // the previous signal that counted; nil before any
	at        time.Time // when it arrived
	stop      func()    // stops the setup and the load (closes interrupt)
	interrupt chan struct{}
	tdStop    func()  // stops the teardown while it runs
	out       *output // discarded when exiting at once
	setupCtx  context.Context
}

// catchSignals starts catching SIGINT, SIGTERM and SIGHUP, in the setup
// phase. See the table above.
func catchSignals() {
	signals.mu.Lock()
	defer signals.mu.Unlock()
	if signals.ch != nil {
		return
	}
	interrupt := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	signals.interrupt, signals.setupCtx = interrupt, ctx
	signals.stop = sync.OnceFunc(func() {
		close(interrupt)
		cancel()
	})
	signals.ch = make(chan os.Signal, 8)
	signal.Notify(signals.ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go watchSignals(signals.ch)
}

func watchSignals(ch chan os.Signal) {
	for sig := range ch {
		if sig == syscall.SIGHUP {
			sig = syscall.SIGTERM
		}
		now := time.Now()
		signals.mu.Lock()
		act := signalAction(signals.phase, signals.stoppedBy, signals.prev, sig, now.Sub(signals.at))
		if act != actIgnore || signals.prev == nil {
			signals.prev, signals.at = sig, now
		}
		var stop func()
		switch act {
		case actIgnore:
			if signals.phase == phaseOutput && signals.stoppedBy == nil {
				signals.stoppedBy = sig // a further one exits
			}
		case actStop:
			signals.stoppedBy = sig
			stop = signals.stop
			if signals.phase == phaseTeardown {
				stop = signals.tdStop
			}
		}
		out := signals.out
		signals.mu.Unlock()
		switch act {
		case actStop:
			if stop != nil {
				stop()
			}
		case actExit:
			if out != nil {
				out.Discard()
			}
			restoreTerminal()
			fmt.Fprintln(os.Stderr, "hail: interrupted twice, exiting at once")
			os.Exit(130)
		}
	}
}

// setupContext is canceled by the signal that stops the setup: the work
// of the setup that waits on the network (DNS, the gRPC probe and
// reflection, a scenario's setup steps) ends at once. Background when
// signals are not caught (hail's quick modes).
func setupContext() context.Context {
	signals.mu.Lock()
	defer signals.mu.Unlock()
	if signals.setupCtx == nil {
		return context.Background()
	}
	return signals.setupCtx
}

// setupInterrupted reports whether a signal stopped the setup, and hail
// is still in it: an error of the setup is then the signal's doing.
func setupInterrupted() bool {
	signals.mu.Lock()
	defer signals.mu.Unlock()
	return signals.ch != nil && signals.phase == phaseSetup && signals.stoppedBy != nil
}

// handleSignals enters the load phase: the signal that stops the run (or
// stop, called by the live view) closes interrupt, which ends the run with
// a full report; one that came during the setup stops the run as soon as
// it starts. out is removed if hail exits at once. release enters the
// output phase.
func handleSignals(out *output) (interrupt chan struct{}, stop func(), release func()) {
	catchSignals()
	signals.mu.Lock()
	signals.phase, signals.out = phaseLoad, out
	interrupt, stop = signals.interrupt, signals.stop
	signals.mu.Unlock()
	return interrupt, stop, func() { enterPhase(phaseOutput) }
}

// enterPhase moves to phase p (the output phase, or back to load).
func enterPhase(p phase) {
	signals.mu.Lock()
	signals.phase = p
	signals.mu.Unlock()
}

// teardownSignals enters the teardown phase: a signal closes the
// returned channel (the teardown stops, its step in flight aborted) even
// when one stopped the load; end enters the output phase.
func teardownSignals() (interrupt <-chan struct{}, end func()) {
	ch := make(chan struct{})
	signals.mu.Lock()
	signals.phase, signals.stoppedBy = phaseTeardown, nil
	signals.tdStop = sync.OnceFunc(func() { close(ch) })
	signals.mu.Unlock()
	return ch, func() {
		signals.mu.Lock()
		signals.phase, signals.tdStop = phaseOutput, nil
		signals.mu.Unlock()
	}
}

// stopSelf stops the run as a first SIGTERM from outside does: a shard's
// coordinator asked it to stop (POST /stop at its start barrier), and the
// stop goes through the same signal handling: a SIGTERM handed to the
// signal watcher as the kernel's would be.
func stopSelf() {
	catchSignals()
	signals.mu.Lock()
	ch := signals.ch
	signals.mu.Unlock()
	ch <- syscall.SIGTERM
}
