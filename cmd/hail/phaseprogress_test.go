package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/scenario/runner"
)

// Setup and teardown progress: a terminal gets one status line redrawn;
// a log gets a line every 5 s of a long step and one at its end, and
// nothing for a quick step.
func TestPhaseProgress(t *testing.T) {
	t.Parallel()
	step := runner.Progress{Phase: "teardown", Step: "cleanup", Index: 1, Steps: 2, Total: 167053, Concurrency: 64}
	at := func(done int64, el time.Duration, ended bool) runner.Progress {
		p := step
		p.Done, p.Elapsed, p.Ended = done, el, ended
		return p
	}
	var log strings.Builder
	pp := newPhaseProgress(&log, false)
	for _, p := range []runner.Progress{at(0, 0, false), at(20000, time.Second, false), at(110000, 5*time.Second, false), at(120000, 6*time.Second, false), at(167053, 7300*time.Millisecond, true)} {
		pp.show(p)
	}
	want := "hail: teardown 1/2 cleanup: 110,000/167,053 requests, 22,000/s, 64 at once, 5s\n" +
		"hail: teardown 1/2 cleanup: 167,053/167,053 requests, 22,884/s, 64 at once, done in 7.3s\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
	log.Reset()
	pp.show(at(0, 0, false))
	pp.show(at(50, 20*time.Millisecond, true))
	if log.String() != "" {
		t.Errorf("a quick step logged %q", log.String())
	}
	var term strings.Builder
	tp := newPhaseProgress(&term, true)
	tp.show(at(20000, time.Second, false))
	tp.done()
	if got := term.String(); !strings.HasPrefix(got, "\r\x1b[Khail: teardown 1/2 cleanup: 20,000/167,053 requests, 20,000/s") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("terminal: %q", got)
	}
}
