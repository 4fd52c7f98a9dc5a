package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/scenario/runner"
)

// phaseProgress shows a scenario's setup or teardown as it runs: on a
// terminal, one status line redrawn once a second (the step, its requests
// done of its total, its rate and concurrency); in a log (stderr not a
// terminal), a line every 5 s of a step that runs long, and one when a
// step that took a second or more ends (quick steps say nothing).
type phaseProgress struct {
	w        io.Writer
	terminal bool
	mu       sync.Mutex
	drawn    bool
	logged   time.Duration // the elapsed time of the step's last log line
}

// logEvery is how often a log reports a step that runs long.
const logEvery = 5 * time.Second

func newPhaseProgress(w io.Writer, terminal bool) *phaseProgress {
	return &phaseProgress{w: w, terminal: terminal}
}

// show reports p (runner.PhaseOptions.Progress).
func (pp *phaseProgress) show(p runner.Progress) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.terminal {
		fmt.Fprintf(pp.w, "\r\x1b[Khail: %s", phaseLine(p))
		pp.drawn = true
		return
	}
	switch {
	case p.Elapsed == 0 && !p.Ended:
		pp.logged = 0
	case p.Ended && (p.Elapsed >= time.Second || pp.logged > 0), !p.Ended && p.Elapsed-pp.logged >= logEvery:
		fmt.Fprintf(pp.w, "hail: %s\n", phaseLine(p))
		pp.logged = p.Elapsed
	}
}

// done clears the status line.
func (pp *phaseProgress) done() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.drawn {
		fmt.Fprint(pp.w, "\r\x1b[K")
	}
}

// phaseLine is one step's progress in words: "teardown 2/2 cleanup:
// 12,345/167,053 requests, 22,880/s, 64 at once, 0.5s".
func phaseLine(p runner.Progress) string {
	done := groupDigits(p.Done)
	if p.Total > 0 {
		done += "/" + groupDigits(p.Total)
	}
	s := fmt.Sprintf("%s %d/%d %s: %s requests", p.Phase, p.Index, p.Steps, p.Step, done)
	if p.Elapsed > 0 {
		s += fmt.Sprintf(", %s/s", groupDigits(int64(p.Rate()+0.5)))
	}
	s += fmt.Sprintf(", %d at once", p.Concurrency)
	if p.Ended {
		s += fmt.Sprintf(", done in %s", p.Elapsed.Round(time.Millisecond))
	} else if p.Elapsed > 0 {
		s += fmt.Sprintf(", %s", p.Elapsed.Round(100*time.Millisecond))
	}
	return s
}

// groupDigits writes n with thousands separated: 167,053.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
