package serve

import (
	"sync"
	"sync/atomic"
)

const (
	itemShards     = 64
	maxItemBody    = 64 << 10
	itemIDLen      = 16
	itemIDMultiple = 0x9E3779B97F4A7C15 // odd, so multiplication is a bijection mod 2^64
)

// itemStore is the /items resource store: a sharded map from item number to
// the stored JSON body (nil for none).
//
// Item n (1, 2, 3, ...) gets the id hex(((n ^ k1) * M) ^ k2), a bijection of
// n, so ids are unique, look random, and an id can be mapped back to n to
// tell whether this server ever issued it without remembering deleted ids.
type itemStore struct {
	k1, k2 uint64
	inv    uint64 // multiplicative inverse of itemIDMultiple mod 2^64
	next   atomic.Uint64
	shards [itemShards]itemShard
}

type itemShard struct {
	mu sync.Mutex
	m  map[uint64][]byte
	_  [48]byte // keep shards on separate cache lines
}

func (st *itemStore) init(seed uint64) {
	st.k1 = splitmix(seed ^ 0x1234567)
	st.k2 = splitmix(seed ^ 0x7654321)
	inv := uint64(itemIDMultiple)
	for range 5 { // Newton's iteration doubles the correct low bits: 3 -> 96
		inv *= 2 - itemIDMultiple*inv
	}
	st.inv = inv
	for i := range st.shards {
		st.shards[i].m = make(map[uint64][]byte)
	}
}

// splitmix is the SplitMix64 finalizer.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

func (st *itemStore) encode(n uint64) uint64 { return ((n ^ st.k1) * itemIDMultiple) ^ st.k2 }
func (st *itemStore) decode(x uint64) uint64 { return ((x ^ st.k2) * st.inv) ^ st.k1 }

// appendID appends the 16-hex-digit id of item n.
func (st *itemStore) appendID(b []byte, n uint64) []byte {
	const hex = "0123456789abcdef"
	x := st.encode(n)
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hex[(x>>uint(i))&15])
	}
	return b
}

// lookupID maps an id to its item number; ok is false when the id is not one
// this server has issued.
func (st *itemStore) lookupID(id []byte) (n uint64, ok bool) {
	if len(id) != itemIDLen {
		return 0, false
	}
	var x uint64
	for _, c := range id {
		switch {
		case c >= '0' && c <= '9':
			x = x<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			x = x<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	n = st.decode(x)
	return n, n >= 1 && n <= st.next.Load()
}

func (st *itemStore) shard(n uint64) *itemShard { return &st.shards[n%itemShards] }

// create stores data under a new item number and returns it.
func (st *itemStore) create(data []byte) uint64 {
	n := st.next.Add(1)
	sh := st.shard(n)
	sh.mu.Lock()
	sh.m[n] = data
	sh.mu.Unlock()
	return n
}

func (st *itemStore) get(n uint64) ([]byte, bool) {
	sh := st.shard(n)
	sh.mu.Lock()
	data, ok := sh.m[n]
	sh.mu.Unlock()
	return data, ok
}

func (st *itemStore) remove(n uint64) bool {
	sh := st.shard(n)
	sh.mu.Lock()
	_, ok := sh.m[n]
	if ok {
		delete(sh.m, n)
	}
	sh.mu.Unlock()
	return ok
}
