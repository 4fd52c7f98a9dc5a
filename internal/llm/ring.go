package llm

import "sync/atomic"

// ring remembers the lengths the last requests built asked for, by
// request number, for Expect to answer at the stream's end without reading
// and counting the dataset record again: a slot per number modulo its
// size, holding the number's high bits as a tag, the input and the output
// length in one word (lock-free; a slot another request has taken since is
// a miss, and Expect reads the record).
type ring [1 << 16]atomic.Uint64

const (
	ringBits = 16
	lenBits  = 24
	lenMax   = 1<<lenBits - 1
)

// put remembers request hit's lengths.
func (r *ring) put(hit uint64, in, out int) {
	tag := (hit>>ringBits)&(1<<15-1) | 1<<15 // the top bit marks a slot in use
	r[hit%(1<<ringBits)].Store(tag<<48 | uint64(min(in, lenMax))<<lenBits | uint64(min(out, lenMax)))
}

// get is request hit's lengths, if its slot still holds them.
func (r *ring) get(hit uint64) (in, out int, ok bool) {
	v := r[hit%(1<<ringBits)].Load()
	tag := (hit>>ringBits)&(1<<15-1) | 1<<15
	if v>>48 != tag {
		return 0, 0, false
	}
	return int(v >> lenBits & lenMax), int(v & lenMax), true
}
