//go:build unix

package dataset

import (
	"golang.org/x/sys/unix"
	"os"
)

// mapped says mapFile's memory is a mapping of the file.
const mapped = true

// mapFile maps f's size bytes read-only: the records are read in place,
// from the page cache, and the kernel may drop any page it needs.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { unix.Munmap(b) }, nil
}

// release tells the kernel the pages of b are not needed soon (the index
// pass has read them): they leave the process's resident set, not the
// page cache.
func release(b []byte) {
	if len(b) > 0 {
		unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
