//go:build unix

package dataset

import (
	"os"
	"syscall"
)

// mapFile maps f's size bytes read-only: the records are read in place,
// from the page cache, and the kernel may drop any page it needs.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}

// release tells the kernel the pages of b are not needed soon (the index
// pass has read them): they leave the process's resident set, not the
// page cache.
func release(b []byte) {
	if len(b) > 0 {
		syscall.Madvise(b, syscall.MADV_DONTNEED)
	}
}
