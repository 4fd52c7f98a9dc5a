// Package testtier gates the test suite's slow tiers. `go test ./...` is
// the fast tier (under a minute); a test of a slow tier runs only when its
// tier's environment variable is set, as .ci/run sets each in turn.
package testtier

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// The slow tiers, by their environment variables.
const (
	// Timing holds strict timing bounds (latency percentiles, lateness
	// against the kernel's receive times, full-length coordinated
	// omission): they hold on a quiet machine without -race, so .ci/run
	// runs them one package at a time after the race run.
	Timing = "HAIL_TIMING"
	// Soak holds long runs and many repetitions (a 2-minute run at a high
	// rate, a hundred interrupted runs); HAIL_SOAK=<duration> sets the
	// soak's length.
	Soak = "HAIL_SOAK"
	// Memory holds the body-memory rule measured with 256 MiB bodies on
	// every path (gigabytes through loopback: not in the fast tier).
	Memory = "HAIL_MEMORY"
	// Browser holds the HTML report rendered in headless chromium (some
	// seconds a page, and a browser to install).
	Browser = "HAIL_BROWSER"
	// Terminal holds the live view's end-to-end tests: hail (and hail
	// demo, hail llm, hail run) in a real terminal, tmux, driven by keys
	// and read from the screen (some seconds each, mostly waiting on the
	// screen, and tmux to install). The views themselves, at every size,
	// and their keys are the fast tier's.
	Terminal = "HAIL_TERMINAL"
	// Docs runs the shell blocks of README and docs/*.md that start their
	// own target, as written, each in a network namespace (some 9 s, 4.5 s
	// of CPU); the fast tier checks that every hail command in the docs
	// parses (TestDocsCommandsParse).
	Docs = "HAIL_DOCS"
	// Module holds the build of a module that requires hail from this
	// checkout (go run and go test in it: two builds and links, ~25 s
	// here); .ci/run runs it right after the fast tier.
	Module = "HAIL_MODULE"
)

// On reports whether tier's variable is set.
func On(tier string) bool { return os.Getenv(tier) != "" }

// Require skips the test unless tier's variable is set, saying how to run it.
func Require(tb testing.TB, tier string) {
	tb.Helper()
	if !On(tier) {
		tb.Skipf("a slow tier: set %s=1 to run it (.ci/run does)", tier)
	}
}

// WaitBound lets n tests marked t.Parallel run at once, unless
// -test.parallel says otherwise; call it from TestMain before m.Run. It is
// for packages whose tests mostly wait (on loopback servers, timers, child
// processes): the default, GOMAXPROCS, leaves such a package's tests
// queueing two at a time behind each other's sleeps on a 2-core machine.
// Under the race detector, which makes every test CPU-bound, it leaves the
// default.
func WaitBound(n int) {
	if Race {
		return
	}
	if f := flag.Lookup("test.parallel"); f != nil && !flag.Parsed() {
		f.Value.Set(strconv.Itoa(n))
	}
}

// Main is the TestMain of a package whose tests mostly wait: it runs them
// 8 at a time (WaitBound) and exits with their result.
func Main(m *testing.M) {
	WaitBound(8)
	os.Exit(m.Run())
}
