//go:build !race

package run

// raceDetector is false without -race (see race_test.go).
const raceDetector = false
