//go:build !race

package runner

// raceDetector is false without the race detector (race_test.go).
const raceDetector = false
