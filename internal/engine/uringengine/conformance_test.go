//go:build linux

package uringengine_test

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/engine/uringengine"
	"github.com/hail-loadgen/hail/internal/enginetest"
	"github.com/hail-loadgen/hail/internal/plan"
)

// The io_uring engine passes the conformance table. Not in parallel with
// the package's other tests, which load the CPU (TestTinyBuffers,
// TestSQPoll): beside them, a stream case's 150 ms run sent nothing once.
func TestConformance(t *testing.T) {
	if err := uringengine.Available(); err != nil {
		t.Skip(err)
	}
	enginetest.Run(t, func(p *plan.Plan) engine.Engine { return &uringengine.Engine{SQPoll: p.SQPoll} }, enginetest.Options{Proto: enginetest.HTTP1})
}
