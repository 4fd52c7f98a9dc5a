package dataset

import (
	"fmt"
	"math/bits"
)

// Order is how requests take records.
type Order int

// The orders.
const (
	// Shuffle takes the records in a seeded random order, each once per
	// pass over the file (sampling without replacement), a new order
	// each pass.
	Shuffle Order = iota
	// Sequential takes them in the file's order, over and over.
	Sequential
	// Replace draws each request's record independently (with
	// replacement).
	Replace
)

// ParseOrder parses shuffle, sequential or random.
func ParseOrder(s string) (Order, error) {
	switch s {
	case "shuffle", "":
		return Shuffle, nil
	case "sequential":
		return Sequential, nil
	case "random":
		return Replace, nil
	}
	return 0, fmt.Errorf("%q: give shuffle (each record once per pass, in a seeded order), sequential (the file's order) or random (independent draws)", s)
}

// String is the order's name.
func (o Order) String() string {
	return [...]string{"shuffle", "sequential", "random"}[o]
}

// pick is the record of request hit among n, in order o.
func pick(o Order, hit, n, seed uint64) uint64 {
	switch {
	case n <= 1:
		return 0
	case o == Sequential:
		return hit % n
	case o == Replace:
		return mix(hit, seed) % n
	}
	return permute(hit%n, n, mix(hit/n, seed^0x7065726d))
}

// permute maps x in [0, n) to its place in a permutation of [0, n) chosen
// by key: a four-round Feistel network on the smallest even number of bits
// that holds n, walked until it lands below n (at most four steps on
// average). Nothing is stored.
func permute(x, n, key uint64) uint64 {
	b := bits.Len64(n - 1)
	b += b & 1
	h := uint(b / 2)
	mask := uint64(1)<<h - 1
	for {
		l, r := x>>h, x&mask
		for round := uint64(0); round < 4; round++ {
			l, r = r, l^(mix(r, key+round)&mask)
		}
		x = l<<h | r
		if x < n {
			return x
		}
	}
}

// mix is a 64-bit hash of a number and a salt (splitmix64's finalizer).
func mix(x, salt uint64) uint64 {
	z := x*0x9e3779b97f4a7c15 + salt
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
