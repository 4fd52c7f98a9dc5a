package run_test

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/enginetest"
)

// Every engine passes the same conformance table.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every engine through the whole table")
	}
	for _, e := range enginetest.Engines {
		t.Run(e.Name, func(t *testing.T) { enginetest.Run(t, e) })
	}
}
