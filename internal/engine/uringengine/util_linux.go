//go:build linux

package uringengine

import (
	"fmt"
	"net"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/transport"
)

// fifo is a fixed-capacity queue that never allocates after creation.
type fifo[T any] struct {
	buf  []T
	head int
	n    int
}

func newFIFO[T any](capacity int) fifo[T] { return fifo[T]{buf: make([]T, max(capacity, 1))} }

func (f *fifo[T]) len() int { return f.n }

// push appends v; it reports false (and drops v) when the queue is full.
func (f *fifo[T]) push(v T) bool {
	if f.n == len(f.buf) {
		return false
	}
	i := f.head + f.n
	if i >= len(f.buf) {
		i -= len(f.buf)
	}
	f.buf[i] = v
	f.n++
	return true
}

// pop removes the oldest element; the queue must not be empty.
func (f *fifo[T]) pop() T {
	v := f.buf[f.head]
	f.head++
	if f.head == len(f.buf) {
		f.head = 0
	}
	f.n--
	return v
}

// putSockaddr writes ep's address into b (arena memory, sockaddrSize bytes)
// and returns its length and address family.
func putSockaddr(b []byte, ep transport.Endpoint) (uint32, int, error) {
	if ep.Unix != "" {
		sa := (*unix.RawSockaddrUnix)(unsafe.Pointer(&b[0]))
		name := ep.Unix
		if len(name) >= len(sa.Path) {
			return 0, 0, fmt.Errorf("unix socket path %q is too long (at most %d bytes): %w", name, len(sa.Path)-1, unix.ENAMETOOLONG)
		}
		*sa = unix.RawSockaddrUnix{Family: unix.AF_UNIX}
		for i := 0; i < len(name); i++ {
			sa.Path[i] = int8(name[i])
		}
		sl := 2 + len(name) + 1
		if name[0] == '@' { // abstract socket: leading NUL, no trailing one
			sa.Path[0] = 0
			sl--
		}
		return uint32(sl), unix.AF_UNIX, nil
	}
	addr, port := ep.Addr.Addr(), ep.Addr.Port()
	if !addr.IsValid() {
		return 0, 0, fmt.Errorf("no address to connect to: %w", unix.EINVAL)
	}
	if addr.Is4() || addr.Is4In6() {
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&b[0]))
		*sa = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: addr.Unmap().As4()}
		b[2], b[3] = byte(port>>8), byte(port) // network byte order
		return unix.SizeofSockaddrInet4, unix.AF_INET, nil
	}
	var scope uint32
	if z := addr.Zone(); z != "" {
		if n, err := strconv.ParseUint(z, 10, 32); err == nil {
			scope = uint32(n)
		} else if ifi, err := net.InterfaceByName(z); err == nil {
			scope = uint32(ifi.Index)
		} else {
			return 0, 0, fmt.Errorf("unknown IPv6 zone %q: %w", z, err)
		}
	}
	sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&b[0]))
	*sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: addr.As16(), Scope_id: scope}
	b[2], b[3] = byte(port>>8), byte(port)
	return unix.SizeofSockaddrInet6, unix.AF_INET6, nil
}
