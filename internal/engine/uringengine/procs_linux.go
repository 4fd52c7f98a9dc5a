package uringengine

import (
	"runtime"
	"sync"
)

// procs counts the Ps that the uring runs in progress hold, so that runs
// side by side in one process (a library's callers, a test suite) each get
// theirs. A worker holds its P while it waits in io_uring_enter (a raw
// system call, see uring.Ring), and one more P lets the rest of the program
// (collector, live view, signals) run without taking a worker's. When each
// run raised GOMAXPROCS alone and put back what it had found, the first to
// end put it back under the second's workers: they then held every P, and
// the rest of the process waited in turns of up to 50 ms.
var procs struct {
	mu   sync.Mutex
	held int // workers of the runs in progress
	base int // GOMAXPROCS before the first of them
}

// holdProcs raises GOMAXPROCS so that n more workers each hold a P and one
// is left for everything else, and returns the function that gives them
// back.
func holdProcs(n int) (release func()) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	if procs.held == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.held += n
	setProcs()
	return func() {
		procs.mu.Lock()
		defer procs.mu.Unlock()
		procs.held -= n
		setProcs()
	}
}

// setProcs sets GOMAXPROCS for the workers held (procs.mu held).
func setProcs() {
	want := procs.base
	if procs.held > 0 {
		want = max(want, procs.held+1)
	}
	if runtime.GOMAXPROCS(0) != want {
		runtime.GOMAXPROCS(want)
	}
}
