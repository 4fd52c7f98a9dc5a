package run

import (
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// rssBytes reads this process's resident set size.
func rssBytes(t *testing.T) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func procCount(t *testing.T, what string) int {
	switch what {
	case "fds":
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc")
		}
		return len(ents)
	case "threads":
		raw, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
	}
	return 0
}

// A long run at a high rate keeps RSS flat and its series complete. It
// takes two minutes, so it runs when HAIL_SOAK is set (.ci/run sets it);
// HAIL_SOAK=1h gives the one-hour soak of docs/reliability.md.
func TestSoak(t *testing.T) {
	testtier.Require(t, testtier.Soak)
	dur := 2 * time.Minute
	if parsed, err := time.ParseDuration(os.Getenv(testtier.Soak)); err == nil {
		dur = parsed
	}
	forEnginesInTurn(t, func(t *testing.T, engine string) {
		base, _ := servetest.Start(t)
		p := newPlan(t, base+"/", engine)
		p.Duration, p.Rate, p.Connections = dur, 10000, 64
		var rss []int64
		res := mustRun(t, p, Options{Progress: func(stats.Snapshot) { rss = append(rss, rssBytes(t)) }})
		warm := 10
		if len(rss) <= warm+40 {
			t.Fatalf("only %d samples", len(rss))
		}
		// Flat: the median of the last 20 samples against the median of the
		// first 20 after warm-up (single samples ride the GC's sawtooth).
		early, late := median(rss[warm:warm+20]), median(rss[len(rss)-20:])
		lo, hi := rss[warm], rss[warm]
		for _, v := range rss[warm:] {
			lo, hi = min(lo, v), max(hi, v)
		}
		t.Logf("%s: %d requests, RSS after warm-up %.1f–%.1f MiB, median early %.1f, late %.1f MiB", dur, res.Hail.Counts.Requests,
			float64(lo)/(1<<20), float64(hi)/(1<<20), float64(early)/(1<<20), float64(late)/(1<<20))
		// 10% or 2 MiB, whichever is more: the runtime's own caches settle
		// by a MiB or so after the first minute on the goroutine engine,
		// while a leak of even two bytes a request would add 2.4 MB here.
		if float64(late) > float64(early)+max(0.1*float64(early), 2<<20) {
			t.Errorf("RSS grew from %d to %d bytes after warm-up (more than 10%% and 2 MiB)", early, late)
		}
		secs := int(dur / time.Second)
		series := res.Hail.Series
		if n := len(series); n < secs || n > secs+1 || (n == secs+1 && series[secs].Span >= time.Second) {
			t.Errorf("series has %d entries, want %d whole seconds (and at most one partial last one)", n, secs)
		}
		for i, s := range series[:min(secs, len(series))] {
			if s.Index != i || s.Requests == 0 || s.Span.Seconds() < 0.999 {
				t.Fatalf("series gap at %d: %+v", i, s)
			}
		}
	})
}

func median(xs []int64) int64 {
	ys := append([]int64(nil), xs...)
	sort.Slice(ys, func(i, j int) bool { return ys[i] < ys[j] })
	return ys[len(ys)/2]
}

// Runs leave no goroutine, file descriptor or OS thread behind. Not
// parallel: it counts the whole process's.
func TestNoLeaks(t *testing.T) {
	testtier.Require(t, testtier.Soak) // alone, a few seconds: the soak tier
	forEnginesInTurn(t, func(t *testing.T, engine string) {
		base, _ := servetest.Start(t)
		run := func() {
			for _, rate := range []float64{0, 2000} {
				p := newPlan(t, base+"/?close=20", engine)
				p.Requests, p.Connections, p.Rate = 400, 16, rate
				mustRun(t, p, Options{})
			}
			// Aborted at the deadline; the server's side of these
			// requests ends 1 s later (the deadline below allows for it).
			p := newPlan(t, base+"/?delay=1s", engine)
			p.Duration, p.Connections = 300*time.Millisecond, 8
			mustRun(t, p, Options{})
		}
		checkNoLeaks(t, run)
	})
}

// checkNoLeaks runs run once to warm up (the runtime keeps its threads), then twice, and
// checks that goroutines and file descriptors return to their counts after the warm-up and OS
// threads do not grow beyond a few.
func checkNoLeaks(t *testing.T, run func()) {
	t.Helper()
	run() // warm up: the runtime keeps its threads
	runtime.GC()
	g0, f0, t0 := runtime.NumGoroutine(), procCount(t, "fds"), procCount(t, "threads")
	for range 2 {
		run()
	}
	deadline := time.Now().Add(5 * time.Second)
	var g, f, th int
	for {
		g, f, th = runtime.NumGoroutine(), procCount(t, "fds"), procCount(t, "threads")
		if (g <= g0 && f <= f0) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if g > g0 {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines %d → %d\n%s", g0, g, buf[:runtime.Stack(buf, true)])
	}
	if f > f0 {
		t.Errorf("open fds %d → %d", f0, f)
	}
	if th > t0+4 {
		t.Errorf("threads %d → %d", t0, th)
	}
}

// The HTTP/2 (h2c) and HTTP/3 engines leave nothing behind either: closed, open and aborted runs.
// Not parallel, as TestNoLeaks; in the soak tier with it.
func TestNoLeaksH2H3(t *testing.T) {
	testtier.Require(t, testtier.Soak)
	h2c := servetest.StartH2(t, nil, nil, nil)
	_, h3base, ca := servetest.StartH3(t, h3serve.Config{})
	for _, tc := range []struct{ version, base string }{
		{"2", h2c.URL},
		{"3", h3base},
	} {
		t.Run("http"+tc.version, func(t *testing.T) {
			plan := func(path string) *plan.Plan {
				p := newPlan(t, tc.base+path, "auto")
				p.HTTPVersion, p.Streams, p.CACert = plan.Proto(tc.version), 4, ca
				return p
			}
			checkNoLeaks(t, func() {
				for _, rate := range []float64{0, 2000} {
					p := plan("/")
					p.Requests, p.Connections, p.Rate = 400, 4, rate
					mustRun(t, p, Options{})
				}
				p := plan("/?delay=1s")
				p.Duration, p.Connections = 300*time.Millisecond, 2
				mustRun(t, p, Options{})
			})
		})
	}
}
