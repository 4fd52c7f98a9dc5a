//go:build linux

package main

import (
	"math/rand/v2"
	"testing"
)

// naive counts the pattern's completions in reads as bench/ssefloor.c does:
// every byte stepped.
func naive(m *matcher, reads [][]byte) int {
	n := 0
	for _, b := range reads {
		for _, c := range b {
			if m.step(c) {
				n++
			}
		}
	}
	return n
}

// split cuts b at random points into reads.
func split(r *rand.Rand, b []byte) [][]byte {
	var reads [][]byte
	for len(b) > 0 {
		k := min(len(b), 1+r.IntN(40))
		reads = append(reads, b[:k])
		b = b[k:]
	}
	return reads
}

// sample is a stream of the mock's kind: events, chunk framing, the end.
const sample = "1a\r\ndata: {\"text\":\" tok\"}\n\n\r\n" +
	"1a\r\ndata: {\"text\":\"data\"}\n\n\r\n" +
	"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"

// TestCountMatchesStepping holds count (which skips to candidate bytes)
// to the byte-by-byte matcher, for the mock's stream and for noise made
// of the patterns' own bytes, cut into reads at random points.
func TestCountMatchesStepping(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("data: {\r\n0}[]")
	inputs := [][]byte{[]byte(sample)}
	for range 200 {
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		inputs = append(inputs, b)
	}
	for i, in := range inputs {
		reads := split(r, in)
		for _, p := range []string{"data: {", "\r\n0\r\n\r\n"} {
			want := naive(&matcher{p: p}, reads)
			m, got := matcher{p: p}, 0
			for _, b := range reads {
				got += m.count(b)
			}
			if got != want {
				t.Fatalf("input %d, pattern %q: count %d, stepping %d", i, p, got, want)
			}
		}
	}
	s := newStream()
	events, ends := s.scan([]byte(sample))
	if events != 2 || ends != 1 {
		t.Fatalf("the sample: %d events, %d ends; want 2 and 1", events, ends)
	}
}

// FuzzCount is TestCountMatchesStepping on any bytes cut anywhere.
func FuzzCount(f *testing.F) {
	f.Add([]byte(sample), uint8(7))
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		k := int(cut) % (len(b) + 1)
		reads := [][]byte{b[:k], b[k:]}
		for _, p := range []string{"data: {", "\r\n0\r\n\r\n"} {
			want := naive(&matcher{p: p}, reads)
			m := matcher{p: p}
			if got := m.count(reads[0]) + m.count(reads[1]); got != want {
				t.Fatalf("pattern %q: count %d, stepping %d", p, got, want)
			}
		}
	})
}
