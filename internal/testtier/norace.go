//go:build !race

package testtier

// Race is false without -race: the race detector makes every test
// CPU-bound (several times slower), so WaitBound leaves the default then.
const Race = false
