package tokenizer

import "sync/atomic"

// table keeps pieces' counts: open addressing over atomic pointers to
// entries that never change once stored, so readers take no lock and
// writers only swap a nil slot. When the slots a piece may go to are
// full, its count is not kept (and is computed again when it comes back).
type table struct {
	slots [tableSize]atomic.Pointer[entry]
}

// entry is one piece's count.
type entry struct {
	key   string
	first bool
	n     int32
}

const (
	tableSize = 1 << 17 // slots (a megabyte of pointers)
	probes    = 8       // slots a piece may go to
)

// hash is FNV-1a of the piece, and of whether it starts the text.
func hash(p []byte, first bool) uint32 {
	h := uint32(2166136261)
	if first {
		h = 0x811c9dc6
	}
	for _, c := range p {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// get is the count kept for p.
func (t *table) get(p []byte, first bool) (int, bool) {
	h := hash(p, first)
	for k := uint32(0); k < probes; k++ {
		e := t.slots[(h+k)%tableSize].Load()
		if e == nil {
			return 0, false
		}
		if e.first == first && e.key == string(p) {
			return int(e.n), true
		}
	}
	return 0, false
}

// put keeps p's count, if one of its slots is free.
func (t *table) put(p string, first bool, n int) {
	h := hash([]byte(p), first)
	e := &entry{key: p, first: first, n: int32(min(n, 1<<30))}
	for k := uint32(0); k < probes; k++ {
		if t.slots[(h+k)%tableSize].CompareAndSwap(nil, e) {
			return
		}
	}
}
