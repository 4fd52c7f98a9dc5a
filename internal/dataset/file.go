package dataset

import (
	"bytes"
	"fmt"
	"os"
)

// file is a dataset file mapped into memory with the offset of each
// usable record: 8 bytes a record, whatever the records' size.
type file struct {
	path   string
	data   []byte
	off    []uint64
	unmap  func()
	mapped bool // data is a mapping of the file (its pages may be released), not memory of the heap
}

// openFile maps path.
func openFile(path string) (*file, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, unmap, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: cannot map it: %v", path, err)
	}
	return &file{path: path, data: data, unmap: unmap, mapped: mapped}, nil
}

// releaseEvery is how much of the file the index pass reads before it
// gives the pages read back to the kernel.
const releaseEvery = 64 << 20

// pageSize is the memory page's size.
var pageSize = os.Getpagesize()

// lines calls fn with each non-blank line of the file (its number from 1
// and its bounds, without the newline or a carriage return before it),
// releasing the pages behind it as it goes; fn's error stops the pass.
func (f *file) lines(fn func(line int, start, end int) error) error {
	b := f.data
	f.off = make([]uint64, 0, f.count('\n')+1)
	released := 0
	line := 0
	for i := 0; i < len(b); {
		line++
		end := i
		for end < len(b) && b[end] != '\n' {
			end++
		}
		next := end + 1
		if end > i && b[end-1] == '\r' {
			end--
		}
		if ws(b[:end], i) < end {
			if err := fn(line, i, end); err != nil {
				return err
			}
		}
		i = next
		if i-released >= releaseEvery && f.mapped {
			release(b[released:i:i])
			released = i &^ (pageSize - 1)
		}
	}
	return nil
}

// count counts the bytes c in the file (so that the index is made at its
// size, not grown by appending), releasing the pages as it goes.
func (f *file) count(c byte) int {
	n := 0
	for i := 0; i < len(f.data); i += releaseEvery {
		w := f.data[i:min(i+releaseEvery, len(f.data))]
		n += bytes.Count(w, []byte{c})
		if f.mapped {
			release(w)
		}
	}
	return n
}

// lineAt is the line that starts at offset off.
func (f *file) lineAt(off uint64) []byte {
	b := f.data[off:]
	for i, c := range b {
		if c == '\n' {
			if i > 0 && b[i-1] == '\r' {
				i--
			}
			return b[:i]
		}
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// close unmaps the file.
func (f *file) close() {
	if f.unmap != nil {
		f.unmap()
		f.unmap = nil
	}
}
