//go:build !race

package h2engine_test

// raceDetector is false without -race (see race_on_test.go).
const raceDetector = false
