//go:build race

package testtier

// Race is true in `go test -race` builds (see norace.go).
const Race = true
