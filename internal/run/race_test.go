//go:build race

package run

// raceDetector is true in `go test -race` builds, whose instrumentation slows every goroutine
// switch and whose CI run tests packages in parallel: timing bounds get more slack there, and
// .ci/run checks the strict bounds again without the detector, one package at a time.
const raceDetector = true
