//go:build !race

package runner

import "time"

// timingSlack is how far the stage tests let a boundary move from the
// plan (more under the race detector: race_test.go).
const timingSlack = 100 * time.Millisecond
