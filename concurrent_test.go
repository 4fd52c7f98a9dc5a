package hail_test

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
)

// Runs side by side in one process are independent: each one's counts
// are exactly its own server's, whichever engines they use, and the
// process's GOMAXPROCS is as it was once they are done. (Not parallel:
// it reads GOMAXPROCS, which the io_uring engine raises while it runs.)
func TestConcurrentRunsAreIndependent(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	plans := []hail.Plan{
		{Requests: 3000, Connections: 8},                                                  // io_uring where it runs
		{Requests: 3000, Connections: 8, Engine: hail.EngineNet},                          // the portable engine
		{Rate: 1000, Duration: 500 * time.Millisecond, Connections: 4, WaitOngoing: true}, // the open model
	}
	servers := make([]*hailtest.Server, len(plans))
	results := make([]*hail.Result, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i := range plans {
		servers[i] = hailtest.NewServer(t)
		plans[i].URL = servers[i].URL + "/?delay=200us"
		wg.Go(func() { results[i], errs[i] = hail.Run(context.Background(), plans[i]) })
	}
	wg.Wait()
	for i := range plans {
		if errs[i] != nil {
			t.Errorf("run %d: %v", i, errs[i])
			continue
		}
		hailtest.AssertExact(t, servers[i], results[i])
		hailtest.AssertNoErrors(t, results[i])
		if c := results[i].Hail.Counts; plans[i].Requests > 0 && c.Sent != int64(plans[i].Requests) {
			t.Errorf("run %d (%s engine) sent %d of %d", i, results[i].Hail.Engine, c.Sent, plans[i].Requests)
		}
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS is %d after the runs, was %d", got, procs)
	}
}

// Package hail never pulls in what a library user does not use: the live
// view (bubbletea), SQLite, Prometheus, Kubernetes.
func TestNoHeavyDependencies(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".", "./hailtest", "./scenario").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	banned := []string{"github.com/charmbracelet/", "modernc.org/sqlite", "k8s.io/", "sigs.k8s.io/", "github.com/prometheus/",
		"github.com/hail-loadgen/hail/internal/tui", "github.com/hail-loadgen/hail/internal/reqlog", "github.com/hail-loadgen/hail/internal/metrics"}
	for _, pkg := range strings.Fields(string(out)) {
		for _, b := range banned {
			if strings.HasPrefix(pkg, b) {
				t.Errorf("package hail depends on %s", pkg)
			}
		}
	}
}
