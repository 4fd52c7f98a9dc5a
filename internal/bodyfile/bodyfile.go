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

// MapAt is the size from which Map maps a regular file instead of reading
// it.
const MapAt = 1 << 20

// RunOverhead is the memory a run needs besides its bodies (threads,
// connection buffers, histograms, the runtime): the 40 MiB of the memory
// bound (docs/reliability.md, "Bodies and memory").
const RunOverhead int64 = 40 << 20

// virtualHeadroom is the address space kept free under ulimit -v beyond
// what the bodies need: the Go runtime reserves address space well beyond
// what it uses (heap arenas, thread stacks), and running out of it is a
// fatal error, not one that can be handled.
const virtualHeadroom int64 = 512 << 20

// alwaysFits is a size never refused for want of memory: a process that
// cannot spare this much could not run at all.
const alwaysFits = 1 << 20

// Cost is the memory a file of size bytes costs a run when the run holds
// copies of it (1: a body sent as it is, Map; 2: a file whose contents are
// also encoded or parsed, Read): the copies, a quarter of the size more,
// and RunOverhead. A body of N bytes from Map costs at most 1.25 N + 40 MiB
// of peak RSS, on every path (docs/reliability.md).
func Cost(size int64, copies int) int64 { return int64(copies)*size + size/4 + RunOverhead }

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
// the process may still use: the least of MemAvailable, what ulimit -v
// (RLIMIT_AS) leaves, and what the cgroup's limit (v2 memory.max, v1
// memory.limit_in_bytes) leaves. A Go out-of-memory is fatal and cannot be
// recovered, so this is checked before the run.
type NoRoomError struct {
	Path  string
	Size  int64  // the file's size; -1 when it is not a regular file
	Need  int64  // what the file costs (Cost)
	Room  int64  // what the binding limit leaves
	Limit string // the binding limit: "ulimit -v", "the cgroup's memory.max", "MemAvailable", …
	// Virtual says the limit bounds address space (ulimit -v): Need is
	// then the file's and the Go runtime's reservations.
	Virtual bool
}

func (e *NoRoomError) Error() string {
	const fix = "use a smaller file, or give hail more memory"
	if e.Size < 0 {
		return fmt.Sprintf("%s: longer than hail has memory for: %s leaves %s: %s", e.Path, e.Limit, FormatSize(e.Room), fix)
	}
	if e.Virtual {
		return fmt.Sprintf("%s: %s needs %s of address space (the file, and the Go runtime's reservations) and %s leaves %s: %s",
			e.Path, FormatSize(e.Size), FormatSize(e.Need), e.Limit, FormatSize(e.Room), fix)
	}
	return fmt.Sprintf("%s: %s needs %s of memory (the file and the run) and %s leaves %s: %s",
		e.Path, FormatSize(e.Size), FormatSize(e.Need), e.Limit, FormatSize(e.Room), fix)
}

// Read returns the whole file at path when it holds at most limit bytes (a
// limit ≤ 0 means DefaultLimit) and fits in memory (Cost with two copies:
// the file is also encoded or parsed). Errors begin with the path: "PATH:
// no such file or directory", a *TooLargeError or a *NoRoomError. A regular
// file is measured before it is read; anything else is read until it ends
// or passes the limit.
func Read(path string, limit int64) ([]byte, error) { return load(path, limit, 2, 0, false) }

// memLimit is one limit on the memory the process may still use.
type memLimit struct {
	name    string // as the user knows it: "ulimit -v", "the cgroup's memory.max", …
	room    int64  // what it leaves
	virtual bool   // it bounds address space (ulimit -v), not memory
}

// need is what a file of size bytes, held in copies copies, needs of l.
func (l memLimit) need(size int64, copies int) int64 {
	if l.virtual {
		return int64(copies)*size + virtualHeadroom
	}
	return Cost(size, copies)
}

// largest is the largest file of copies copies that fits in l.
func (l memLimit) largest(copies int) int64 {
	if l.virtual { // mapped or read, a file takes its size of address space per copy
		return (l.room - virtualHeadroom) / int64(copies)
	}
	return (l.room - RunOverhead) * 4 / (4*int64(copies) + 1) // Cost(largest) = room
}

// Map returns the file at path as Read does, for a body held for the run
// and sent as it is (Cost with one copy): a regular file of MapAt or more
// is mapped read-only, not read, so its bytes must not be written. The
// returned slice starts with room writable zero bytes (a prefix such as a
// gRPC message's length goes there), then the file.
func Map(path string, limit int64, room int) ([]byte, error) { return load(path, limit, 1, room, true) }

func load(path string, limit int64, copies, room int, mapIt bool) ([]byte, error) {
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
	limits := memoryLimits()
	fits := func(size int64) *NoRoomError { // nil, or the tightest limit it does not fit
		var e *NoRoomError
		tightest := int64(0)
		for _, l := range limits {
			if largest := max(l.largest(copies), alwaysFits); size > largest && (e == nil || largest < tightest) {
				e = &NoRoomError{Path: path, Size: size, Need: l.need(size, copies), Room: max(l.room, 0), Limit: l.name, Virtual: l.virtual}
				tightest = largest
			}
		}
		return e
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
		if size > limit {
			return nil, &TooLargeError{Path: path, Size: size, Limit: limit}
		}
		if e := fits(size); e != nil {
			return nil, e
		}
		if mapIt && size >= MapAt {
			if b, err := mapFile(f, size, room); err == nil {
				return b, nil
			}
		}
	}
	budget := limit
	for _, l := range limits { // the longest stream that fits
		budget = min(budget, max(l.largest(copies), alwaysFits))
	}
	b, err := readUpTo(f, size, budget+1, room)
	if err != nil {
		return nil, pathErr(path, err)
	}
	if n := int64(len(b) - room); n > budget { // a stream, or a file that grew while read
		if size >= 0 {
			size = n
		}
		if budget < limit {
			e := fits(max(n, budget+1))
			if e == nil {
				e = &NoRoomError{Path: path, Size: size, Need: Cost(max(n, budget+1), copies), Limit: "the memory hail may use"}
			}
			e.Size = size
			return nil, e
		}
		return nil, &TooLargeError{Path: path, Size: size, Limit: limit}
	}
	return b, nil
}

// readUpTo reads r until it ends or max bytes were read, after room zero
// bytes. size, if not negative, is the expected length: the buffer is
// allocated once. A stream of unknown length is read into chunks of
// growing size and joined once at the end, so reading n bytes never holds
// more than 2n.
func readUpTo(r io.Reader, size, max int64, room int) ([]byte, error) {
	if size >= 0 {
		b := make([]byte, room, int64(room)+min(size+1, max)) // one more to see the end (or growth) at once
		max += int64(room)
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
	b := make([]byte, room, int64(room)+total)
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
