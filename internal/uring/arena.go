//go:build linux

package uring

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Arena is a bump allocator over one anonymous mmap. Its memory is outside
// the Go heap, so the garbage collector never frees or moves it: it is the
// place for everything the kernel reads or writes after submission (request
// bytes, sockaddrs for connect, read buffers). Memory is reclaimed only all
// at once, by Close. An Arena is not safe for concurrent use.
type Arena struct {
	mem []byte
	off int
}

// arenaAlign is the alignment of every Alloc (enough for sockaddrs and
// 8-byte counters).
const arenaAlign = 16

// NewArena maps an arena of at least size bytes (rounded up to pages).
func NewArena(size int) (*Arena, error) {
	if size <= 0 {
		return nil, fmt.Errorf("uring: NewArena: size %d: %w", size, unix.EINVAL)
	}
	page := os.Getpagesize()
	size = (size + page - 1) &^ (page - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("uring: mmap arena of %d bytes: %w", size, err)
	}
	return &Arena{mem: mem}, nil
}

// Alloc returns n bytes of arena memory (16-byte aligned), or nil if the
// arena is exhausted. The slice's capacity is exactly n; the memory is
// zero.
func (a *Arena) Alloc(n int) []byte {
	if n < 0 || a.mem == nil {
		return nil
	}
	start := (a.off + arenaAlign - 1) &^ (arenaAlign - 1)
	if start+n > len(a.mem) || start+n < start {
		return nil
	}
	a.off = start + n
	return a.mem[start : start+n : start+n]
}

// Close unmaps the arena; slices from it must not be used afterwards.
// Idempotent.
func (a *Arena) Close() error {
	if a.mem == nil {
		return nil
	}
	err := unix.Munmap(a.mem)
	a.mem, a.off = nil, 0
	return err
}
