//go:build race

package h2engine_test

// raceDetector is true in `go test -race` builds, whose instrumentation
// makes CPU-bound cases (a server flooding frames) many times slower.
const raceDetector = true
