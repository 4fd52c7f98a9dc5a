//go:build race

package runner

// raceDetector is true under the race detector, which slows every
// goroutine switch while `go test -race ./...` runs packages side by side:
// a stage's boundary moved by more than 250 ms there. The boundary tests
// still run under it (their other checks hold), and their ±100 ms is held
// without it, in the fast tier and the timing tier (.ci/run).
const raceDetector = true
