package h3engine_test

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/engine/h3engine"
	"github.com/hail-loadgen/hail/internal/enginetest"
	"github.com/hail-loadgen/hail/internal/plan"
)

// The HTTP/3 engine passes the conformance table.
func TestConformance(t *testing.T) {
	t.Parallel() // beside the package's other tests: the cases mostly wait
	enginetest.Run(t, func(p *plan.Plan) engine.Engine { return h3engine.Engine{Streams: p.StreamsPerConn()} }, enginetest.Options{Proto: enginetest.H3})
}
