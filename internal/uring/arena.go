//go:build linux

package uring

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Arena is a bump allocator over one anonymous mmap. Its memory is outside
// the Go heap, so the garbage collector never frees or moves it: it is the
// place for everything the kernel reads or writes after submission (request
// bytes, receive buffers, sockaddrs for connect, timespecs for timeouts,
// registered buffers). Memory is reclaimed only all at once, by Reset or
// Close. An Arena is not safe for concurrent use.
type Arena struct {
	mem []byte
	off int
}

// arenaAlign is the alignment of every Alloc (enough for timespecs,
// sockaddrs and cache-line friendliness of small objects).
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
// arena is exhausted. The slice's capacity is exactly n. Fresh memory is
// zero; memory handed out again after Reset is not re-zeroed.
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

// Timespec allocates a Timespec in the arena, set to d (nil if exhausted).
func (a *Arena) Timespec(d time.Duration) *Timespec {
	b := a.Alloc(int(unsafe.Sizeof(Timespec{})))
	if b == nil {
		return nil
	}
	ts := (*Timespec)(unsafe.Pointer(&b[0]))
	ts.SetDuration(d)
	return ts
}

// Sockaddr writes ap as a raw sockaddr_in / sockaddr_in6 into the arena and
// returns the pointer and length for PrepConnect.
func (a *Arena) Sockaddr(ap netip.AddrPort) (unsafe.Pointer, uint32, error) {
	addr := ap.Addr()
	if !addr.IsValid() {
		return nil, 0, fmt.Errorf("uring: Sockaddr: invalid address: %w", unix.EINVAL)
	}
	port := ap.Port()
	if addr.Is4() || addr.Is4In6() {
		b := a.Alloc(unix.SizeofSockaddrInet4)
		if b == nil {
			return nil, 0, fmt.Errorf("uring: Sockaddr: arena exhausted: %w", unix.ENOMEM)
		}
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&b[0]))
		sa.Family = unix.AF_INET
		sa.Addr = addr.Unmap().As4()
		b[2], b[3] = byte(port>>8), byte(port) // network byte order
		return unsafe.Pointer(sa), unix.SizeofSockaddrInet4, nil
	}
	var scope uint32
	if z := addr.Zone(); z != "" {
		if n, err := strconv.ParseUint(z, 10, 32); err == nil {
			scope = uint32(n)
		} else if ifi, err := net.InterfaceByName(z); err == nil {
			scope = uint32(ifi.Index)
		} else {
			return nil, 0, fmt.Errorf("uring: Sockaddr: unknown zone %q: %w", z, err)
		}
	}
	b := a.Alloc(unix.SizeofSockaddrInet6)
	if b == nil {
		return nil, 0, fmt.Errorf("uring: Sockaddr: arena exhausted: %w", unix.ENOMEM)
	}
	sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&b[0]))
	sa.Family = unix.AF_INET6
	sa.Addr = addr.As16()
	sa.Scope_id = scope
	b[2], b[3] = byte(port>>8), byte(port)
	return unsafe.Pointer(sa), unix.SizeofSockaddrInet6, nil
}

// Used returns the number of bytes handed out (including alignment).
func (a *Arena) Used() int { return a.off }

// Cap returns the arena size.
func (a *Arena) Cap() int { return len(a.mem) }

// Reset makes the whole arena available again. Only call it when the kernel
// no longer uses any of its memory.
func (a *Arena) Reset() { a.off = 0 }

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
