package hail_test

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/testtier"
)

// Most of this package's tests wait on loopback servers and timers: they
// run 8 at a time (testtier.Main).
func TestMain(m *testing.M) { testtier.Main(m) }
