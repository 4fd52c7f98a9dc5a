//go:build race

package runner

import "time"

// timingSlack is how far the stage tests let a boundary move: the race
// detector slows every goroutine switch, and `go test -race ./...` runs
// packages side by side. Without it the bound is the plan's ±100 ms
// (norace_test.go).
const timingSlack = 250 * time.Millisecond
