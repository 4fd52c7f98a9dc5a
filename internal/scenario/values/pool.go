package values

import (
	"sync"
	"sync/atomic"

	"github.com/hail-loadgen/hail/internal/random"
)

// DefaultPoolMax is how many values a pool holds unless the file says
// otherwise; when full, adding a value drops an old one (counted).
const DefaultPoolMax = 1_000_000

const poolShards = 16

// Pool is a concurrency-safe bag of captured values (ids, tokens). Pick
// reads a random live value; Take removes one, so a value taken (say, for a
// DELETE) is never handed out again. It is sharded: a worker adds into its
// own shard and picks from a random one, moving on to the next shard when
// that one is empty, so workers rarely contend on a lock.
type Pool struct {
	// Name is the pool's name in the file (capture and template keys).
	Name    string
	max     int
	dropped atomic.Int64
	count   atomic.Int64
	nshards int
	shards  [poolShards]poolShard
}

type poolShard struct {
	mu   sync.Mutex
	buf  []string // ring: values are buf[(head+i) % len(buf)] for i < n
	head int
	n    int
	max  int
	_    [64]byte
}

// NewPool returns an empty pool holding at most max values (≤ 0: DefaultPoolMax).
func NewPool(name string, max int) *Pool {
	if max <= 0 {
		max = DefaultPoolMax
	}
	p := &Pool{Name: name, max: max, nshards: min(poolShards, max)}
	for i := range p.nshards {
		p.shards[i].max = max / p.nshards
		if i < max%p.nshards {
			p.shards[i].max++
		}
	}
	return p
}

// Len is the number of live values.
func (p *Pool) Len() int { return int(p.count.Load()) }

// Dropped is how many values were dropped because the pool was full.
func (p *Pool) Dropped() int64 { return p.dropped.Load() }

// Max is the pool's capacity.
func (p *Pool) Max() int { return p.max }

// Put adds v; hint (a worker number) chooses the shard. A full shard
// passes v on to the next one with room, so a pool filled by fewer
// workers than shards still holds max values; only when the whole pool
// is full does v replace the oldest value of the hint's shard (counted as
// dropped).
func (p *Pool) Put(v string, hint int) {
	first := uint(hint) % uint(p.nshards)
	for k := range uint(p.nshards) {
		if k > 0 && p.count.Load() >= int64(p.max) {
			break
		}
		s := &p.shards[(first+k)%uint(p.nshards)]
		s.mu.Lock()
		if s.n < s.max {
			if s.n == len(s.buf) {
				s.grow()
			}
			s.buf[(s.head+s.n)%len(s.buf)] = v
			s.n++
			s.mu.Unlock()
			p.count.Add(1)
			return
		}
		if k == 0 && p.count.Load() >= int64(p.max) {
			s.overwrite(v) // the pool is full: no need to lock the shard again
			s.mu.Unlock()
			p.dropped.Add(1)
			return
		}
		s.mu.Unlock()
	}
	// Every shard was full, or the pool filled up meanwhile.
	s := &p.shards[first]
	s.mu.Lock()
	s.overwrite(v)
	s.mu.Unlock()
	p.dropped.Add(1)
}

// overwrite replaces the value at head, (about) the oldest, with v, in a
// full shard; the caller holds s.mu.
func (s *poolShard) overwrite(v string) {
	s.buf[s.head] = v
	s.head = (s.head + 1) % len(s.buf)
}

func (s *poolShard) grow() {
	size := min(max(2*len(s.buf), 64), s.max)
	nb := make([]string, size)
	for i := range s.n {
		nb[i] = s.buf[(s.head+i)%len(s.buf)]
	}
	s.buf, s.head = nb, 0
}

// Pick returns a random live value, or ok=false when the pool is empty.
func (p *Pool) Pick(r *random.Rand) (string, bool) { return p.get(r, false) }

// Take removes and returns a random live value, or ok=false when the pool
// is empty.
func (p *Pool) Take(r *random.Rand) (string, bool) { return p.get(r, true) }

func (p *Pool) get(r *random.Rand, remove bool) (string, bool) {
	if p.count.Load() <= 0 {
		return "", false
	}
	first := r.Intn(p.nshards)
	for k := range p.nshards {
		s := &p.shards[(first+k)%p.nshards]
		s.mu.Lock()
		if s.n == 0 {
			s.mu.Unlock()
			continue
		}
		i := (s.head + r.Intn(s.n)) % len(s.buf)
		v := s.buf[i]
		if remove {
			// Move the value at head into the hole, then advance head.
			s.buf[i] = s.buf[s.head]
			s.buf[s.head] = ""
			s.head = (s.head + 1) % len(s.buf)
			s.n--
		}
		s.mu.Unlock()
		if remove {
			p.count.Add(-1)
		}
		return v, true
	}
	return "", false
}
