package h2engine_test

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/testtier"
)

// Most of this package's tests wait on loopback servers and timers.
func TestMain(m *testing.M) { testtier.Main(m) }
