// Package bodyfile reads the files hail holds in memory for a whole run —
// request bodies (-D, a scenario's body_file), files of bodies (-Z,
// body_lines) and other line files (a scenario's pool values, the scenario
// file itself) — without ever reading more than a size limit or more than
// the memory left to the process. A file over the limit is an error that
// says how large it is and how to raise the limit (--body-file-limit), never
// an out-of-memory crash: /dev/zero, a FIFO or a 100 GB file all end in one
// line.
package bodyfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultLimit is the largest file read without --body-file-limit: 64 MiB.
const DefaultLimit int64 = 64 << 20

// Copies is how many times a body is held in memory during a run: as read,
// and encoded into its request. A file needs Copies × its size of free memory.
const Copies = 2

// Headroom is the memory kept free for the run itself (threads, connection
// buffers, histograms) when deciding whether a file fits.
const Headroom int64 = 256 << 20

// alwaysFits is a size never refused for want of memory: a process that
// cannot spare this much could not run at all.
const alwaysFits = 1 << 20

// TooLargeError is a file over the limit.
type TooLargeError struct {
	Path  string
	Size  int64 // the file's size; -1 when it is not a regular file (a pipe, a device)
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: more than the %s limit for files hail holds in memory: raise it with --body-file-limit SIZE",
			e.Path, FormatSize(e.Limit))
	}
	return fmt.Sprintf("%s: %s is over the %s limit for files hail holds in memory: raise it with --body-file-limit %s",
		e.Path, FormatSize(e.Size), FormatSize(e.Limit), suggest(e.Size))
}

// NoRoomError is a file within the limit that does not fit in the memory
// the process may still use (MemAvailable, ulimit -v, the cgroup's
// memory.max), less Headroom for the run itself.
type NoRoomError struct {
	Path   string
	Size   int64 // the file's size; -1 when it is not a regular file
	Budget int64 // the largest file that fits
}

func (e *NoRoomError) Error() string {
	const fix = "use a smaller file, or give hail more memory (ulimit -v, the cgroup's memory.max)"
	if e.Size < 0 {
		return fmt.Sprintf("%s: longer than the %s hail has memory for (it holds the file and its encoded requests): %s",
			e.Path, FormatSize(e.Budget), fix)
	}
	return fmt.Sprintf("%s: %s needs %s of memory (the file and its encoded requests) and hail has room for %s: %s",
		e.Path, FormatSize(e.Size), FormatSize(Copies*e.Size), FormatSize(e.Budget), fix)
}

// Read returns the whole file at path when it holds at most limit bytes (a
// limit ≤ 0 means DefaultLimit) and fits in memory. Errors begin with the
// path: "PATH: no such file or directory", a *TooLargeError or a
// *NoRoomError. A regular file is measured before it is read; anything else
// is read until it ends or passes the limit.
func Read(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, pathErr(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, pathErr(path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a file", path)
	}
	room, known := memoryRoom()
	room -= Headroom
	budget := limit
	if known {
		budget = min(limit, max(room/Copies, alwaysFits))
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
		switch {
		case size > limit:
			return nil, &TooLargeError{Path: path, Size: size, Limit: limit}
		case size > budget:
			return nil, &NoRoomError{Path: path, Size: size, Budget: budget}
		}
	}
	b, err := readUpTo(f, size, budget+1)
	if err != nil {
		return nil, pathErr(path, err)
	}
	if n := int64(len(b)); n > budget { // a stream, or a file that grew while read
		if size >= 0 {
			size = n
		}
		if budget < limit {
			return nil, &NoRoomError{Path: path, Size: size, Budget: budget}
		}
		return nil, &TooLargeError{Path: path, Size: size, Limit: limit}
	}
	return b, nil
}

// readUpTo reads r until it ends or max bytes were read. size, if not
// negative, is the expected length: the buffer is allocated once. A stream
// of unknown length is read into chunks of growing size and joined once at
// the end, so reading n bytes never holds more than 2n.
func readUpTo(r io.Reader, size, max int64) ([]byte, error) {
	if size >= 0 {
		b := make([]byte, 0, min(size+1, max)) // one more to see the end (or growth) at once
		for int64(len(b)) < max {
			if len(b) == cap(b) {
				b = append(b, 0)[:len(b)] // the file grew while read
			}
			k, err := r.Read(b[len(b):min(int64(cap(b)), max)])
			b = b[:len(b)+k]
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	var chunks [][]byte
	total, next := int64(0), int64(64<<10)
	for total < max {
		c := make([]byte, min(next, max-total))
		k, err := io.ReadFull(r, c)
		chunks, total = append(chunks, c[:k]), total+int64(k)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		next = min(2*next, 16<<20)
	}
	b := make([]byte, 0, total)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b, nil
}

// Lines reads the file at path as Read does and splits it into lines,
// without their line ends ("\n" or "\r\n"); a last line without a newline
// counts, an empty file has none. The lines share one buffer: nothing is
// copied.
func Lines(path string, limit int64) ([][]byte, error) {
	b, err := Read(path, limit)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		out = append(out, line[:len(line):len(line)])
	}
	return out, nil
}

// pathErr is "PATH: what went wrong", without os.PathError's operation.
func pathErr(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", path, err)
}
