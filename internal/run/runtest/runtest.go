// Package runtest runs plans for the tests of packages that run.Run builds on (engines,
// transports), which cannot import their own test helpers from package run.
package runtest

import (
	"context"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/result"
)

// Run validates p and runs it with default options, failing tb on any error. The run is
// bounded by 30 seconds whatever p says, so a broken engine cannot hang the test.
func Run(tb testing.TB, p *plan.Plan) *result.Result {
	tb.Helper()
	return RunWith(tb, p, run.Options{})
}

// RunWith is Run with options (an engine under test in o.Engine, a tracer).
func RunWith(tb testing.TB, p *plan.Plan, o run.Options) *result.Result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return RunContext(tb, ctx, p, o)
}

// RunContext validates p and runs it with o until ctx ends, failing tb on any error.
func RunContext(tb testing.TB, ctx context.Context, p *plan.Plan, o run.Options) *result.Result {
	tb.Helper()
	if err := p.Validate(); err != nil {
		tb.Fatal(err)
	}
	res, err := run.Run(ctx, p, o)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}
