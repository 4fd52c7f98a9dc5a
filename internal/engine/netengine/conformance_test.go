package netengine_test

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/engine/netengine"
	"github.com/hail-loadgen/hail/internal/enginetest"
	"github.com/hail-loadgen/hail/internal/plan"
)

// The net engine passes the conformance table.
func TestConformance(t *testing.T) {
	t.Parallel() // beside the package's other tests: the cases mostly wait
	enginetest.Run(t, func(*plan.Plan) engine.Engine { return netengine.Engine{} }, enginetest.Options{Proto: enginetest.HTTP1})
}
