//go:build linux

package uring

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING, Linux 5.19+)
// for buffer group Group(): a power of two of equal buffers in one anonymous
// mmap, announced to the kernel through a ring that is also an anonymous
// mmap. Multishot receives (PrepRecvmsgMultishot) take buffers from it; each CQE
// names the buffer id. After consuming the data, give buffers back with Add
// and publish them with one Advance.
//
// A BufRing belongs to its Ring's goroutine and is freed by Ring.Close.
type BufRing struct {
	bgid uint16
	mask uint32
	size int

	ringMem []byte
	bufMem  []byte
	bufs    []bufEntry
	tail    uint16  // local tail, published by Advance
	tailW   *uint32 // 32-bit word holding bufs[0].bid and the ring tail
}

// littleEndian reports host byte order (for the 32-bit tail store).
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// NewBufRing creates and registers a provided-buffer ring for group bgid
// with entries buffers (a power of two, at most 32768) of size bytes each,
// all initially available to the kernel. If the kernel lacks buffer rings
// the error wraps errors.ErrUnsupported.
func (r *Ring) NewBufRing(bgid uint16, entries uint32, size int) (*BufRing, error) {
	if r.closed {
		return nil, ErrClosed
	}
	if entries == 0 || entries > 32768 || entries&(entries-1) != 0 {
		return nil, fmt.Errorf("uring: NewBufRing: entries %d must be a power of two in 1..32768: %w", entries, unix.EINVAL)
	}
	if size <= 0 || size > 1<<30 {
		return nil, fmt.Errorf("uring: NewBufRing: bad buffer size %d: %w", size, unix.EINVAL)
	}
	page := os.Getpagesize()
	ringBytes := (int(entries)*int(unsafe.Sizeof(bufEntry{})) + page - 1) &^ (page - 1)
	b := &BufRing{bgid: bgid, mask: entries - 1, size: size}
	var err error
	b.ringMem, err = unix.Mmap(-1, 0, ringBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("uring: mmap buffer ring: %w", err)
	}
	b.bufMem, err = unix.Mmap(-1, 0, int(entries)*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		unix.Munmap(b.ringMem)
		return nil, fmt.Errorf("uring: mmap buffers: %w", err)
	}
	b.bufs = unsafe.Slice((*bufEntry)(unsafe.Pointer(&b.ringMem[0])), entries)
	b.tailW = (*uint32)(unsafe.Pointer(&b.ringMem[12]))

	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&b.ringMem[0]))), ringEntries: entries, bgid: bgid}
	if _, err := r.register(regPbufRing, unsafe.Pointer(&reg), 1); err != nil {
		b.free()
		switch {
		case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
			return nil, fmt.Errorf("uring: provided buffer rings need Linux 5.19+ (%w): %w", err, errors.ErrUnsupported)
		case errors.Is(err, unix.EEXIST):
			return nil, fmt.Errorf("uring: buffer group %d is already registered, or the ring is used from "+
				"another thread (SINGLE_ISSUER): %w", bgid, err)
		}
		return nil, fmt.Errorf("uring: register buffer ring: %w", err)
	}
	for i := uint32(0); i < entries; i++ {
		b.Add(uint16(i))
	}
	b.Advance()
	r.bufRings = append(r.bufRings, b)
	return b, nil
}

// Group returns the buffer group id (for PrepRecvmsgMultishot).
func (b *BufRing) Group() uint16 { return b.bgid }

// Buf returns buffer bid, all of it (a CQE's Res says how much holds data).
// The slice aliases mmapped memory that is reused once the buffer is added
// back, and unmapped when the Ring is closed.
func (b *BufRing) Buf(bid uint16) []byte {
	off := int(bid) * b.size
	return b.bufMem[off : off+b.size : off+b.size]
}

// Add queues buffer bid for the kernel; it becomes visible at the next
// Advance. Only add buffers the kernel gave back (CQE with CQEFBuffer) and
// that are not already queued: then the ring can never overflow.
func (b *BufRing) Add(bid uint16) {
	e := &b.bufs[uint32(b.tail)&b.mask]
	// Field by field: bufs[0].resv overlays the shared tail and must not be
	// written here.
	e.addr = uint64(uintptr(unsafe.Pointer(&b.bufMem[int(bid)*b.size])))
	e.len = uint32(b.size)
	e.bid = bid
	b.tail++
}

// Advance publishes all buffers queued by Add (store-release of the tail).
func (b *BufRing) Advance() {
	// The tail is a uint16 at byte 14 of the ring; Go has no 16-bit atomics,
	// so store the 32-bit word at byte 12, re-writing bufs[0].bid (which only
	// this goroutine writes) with its current value.
	w := uint32(b.bufs[0].bid)
	if littleEndian {
		w |= uint32(b.tail) << 16
	} else {
		w = w<<16 | uint32(b.tail)
	}
	atomic.StoreUint32(b.tailW, w)
}

// free unmaps the ring and its buffers (the kernel keeps its own references
// until it has dropped the registration).
func (b *BufRing) free() {
	if b.ringMem != nil {
		unix.Munmap(b.ringMem)
	}
	if b.bufMem != nil {
		unix.Munmap(b.bufMem)
	}
	b.ringMem, b.bufMem, b.bufs, b.tailW = nil, nil, nil, nil
}
