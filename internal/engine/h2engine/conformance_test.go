package h2engine_test

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/engine/h2engine"
	"github.com/hail-loadgen/hail/internal/enginetest"
	"github.com/hail-loadgen/hail/internal/plan"
)

// The HTTP/2 engine passes the conformance table (h2c).
func TestConformance(t *testing.T) {
	t.Parallel() // beside the package's other tests: the cases mostly wait
	enginetest.Run(t, func(p *plan.Plan) engine.Engine { return h2engine.Engine{Streams: p.StreamsPerConn()} }, enginetest.Options{Proto: enginetest.H2C})
}
