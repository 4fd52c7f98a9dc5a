// Package random makes the random values of a run, fast and without
// allocating: Rand, a pseudo-random generator owned by one worker, and
// Regex, random strings that match a regular expression (oha's
// --rand-regex-url, a scenario's {{regex}}). Neither is for secrets.
//
// Both are written here rather than taken from a library: math/rand/v2's
// Rand reaches its source through an interface (a call per value), its
// sources alone have no bounded draws, and no maintained Go package
// generates regex matches with oha's repeat rules into a caller's buffer.
package random

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Rand is a small, fast pseudo-random generator (wyrand) owned by one
// worker: no locking, no allocation. It is not for secrets.
type Rand struct{ state uint64 }

// New returns a generator seeded with seed.
func New(seed uint64) *Rand { return &Rand{state: SplitMix(seed)} }

// Uint64 returns a uniformly distributed 64-bit value.
func (r *Rand) Uint64() uint64 {
	r.state += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.state, r.state^0xe7037ed1a0b428db)
	return hi ^ lo
}

// Uint64n returns a value in [0, n); n must be > 0. (Lemire's multiply
// method; the bias is below 2^-64·n, irrelevant here.)
func (r *Rand) Uint64n(n uint64) uint64 {
	hi, _ := bits.Mul64(r.Uint64(), n)
	return hi
}

// Intn returns a value in [0, n); n must be > 0.
func (r *Rand) Intn(n int) int { return int(r.Uint64n(uint64(n))) }

// SplitMix is the SplitMix64 finalizer, used to derive seeds (one per
// worker from a run's seed).
func SplitMix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

var seedCounter atomic.Uint64

// Seed returns a seed for runs that do not fix one: a new one at
// every call.
func Seed() uint64 {
	return SplitMix(uint64(time.Now().UnixNano()) ^ seedCounter.Add(0x9E3779B97F4A7C15))
}
