//go:build race

package testtier

// raceDetector is true in `go test -race` builds (see norace.go).
const raceDetector = true
