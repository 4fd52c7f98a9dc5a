package h2engine_test

import (
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/engine/h2engine"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// Most of this package's tests wait on loopback servers and timers. A
// server that never reads its acknowledgements is called a flood after 1 s
// here, not 2 (TestH2HostileFrames' "-unread" cases wait that out, twice
// over HTTP); a server that reads them reads half of 10,000 well within it.
func TestMain(m *testing.M) {
	h2engine.SetFloodPatience(time.Second)
	testtier.Main(m)
}
