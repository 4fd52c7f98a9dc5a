package run

import (
	"fmt"

	"hail/internal/engine"
	"hail/internal/engine/netengine"
	"hail/internal/plan"
)

// Select picks the engine for p and says why.
func Select(p *plan.Plan) (engine.Engine, string, error) {
	switch p.Engine {
	case "net":
		return netengine.Engine{}, "--engine net", nil
	case "uring":
		return nil, "", fmt.Errorf("--engine uring: the io_uring engine is not built into this version; use --engine net")
	}
	return netengine.Engine{}, "auto: the net engine serves every target", nil
}
