//go:build !unix

package dataset

import (
	"io"
	"os"
)

// mapped says mapFile's memory is the heap's, not a mapping.
const mapped = false

// mapFile reads the file whole where it cannot be mapped.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, func() {}, err
}

func release([]byte) {}
