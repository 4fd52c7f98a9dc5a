package bodyfile

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps the size bytes of the regular file f read-only, preceded
// by room writable bytes (zero), as one slice: the file is not copied, its
// pages are the page cache's, read in as they are sent. The mapping lives
// as long as the process: a body is held for the whole run.
//
// The room is an anonymous page (or more) placed just before the file's
// pages (MAP_FIXED into a reservation), so that a prefix written there —
// a gRPC message's length prefix — and the file are contiguous.
func mapFile(f *os.File, size int64, room int) ([]byte, error) {
	page := os.Getpagesize()
	pre := (room + page - 1) / page * page
	total := uintptr(pre) + uintptr(size)
	base, err := unix.MmapPtr(-1, 0, nil, total, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	if pre > 0 {
		if err := unix.Mprotect(unsafe.Slice((*byte)(base), pre), unix.PROT_READ|unix.PROT_WRITE); err != nil {
			_ = unix.MunmapPtr(base, total)
			return nil, err
		}
	}
	if _, err := unix.MmapPtr(int(f.Fd()), 0, unsafe.Add(base, pre), uintptr(size), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
		_ = unix.MunmapPtr(base, total)
		return nil, err
	}
	return unsafe.Slice((*byte)(unsafe.Add(base, pre-room)), room+int(size)), nil
}
