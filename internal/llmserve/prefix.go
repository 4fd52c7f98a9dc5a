package llmserve

import (
	"container/list"
	"sync"
)

// BlockTokens is the prefix cache's block: prompts are cached and matched
// in whole blocks of this many tokens (vLLM's default block size).
const BlockTokens = 16

// prefixHasher hashes a prompt's tokens (its whitespace-separated pieces,
// as the mock counts them) block by block; each block's hash covers every
// token before it, so equal hashes are equal prefixes.
type prefixHasher struct {
	h      uint64
	n      int
	blocks []uint64
}

// hash hashes the tokens of s (nothing without a prefix cache: p nil).
func (p *prefixHasher) hash(s string) {
	if p == nil {
		return
	}
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' {
			if in {
				p.end()
			}
			in = false
			continue
		}
		in = true
		p.h = (p.h ^ uint64(c)) * 0x100000001b3
	}
	if in {
		p.end()
	}
}

// end closes a token.
func (p *prefixHasher) end() {
	p.h = (p.h ^ 0xff) * 0x100000001b3 // a separator no byte of a token is
	p.n++
	if p.n%BlockTokens == 0 {
		p.blocks = append(p.blocks, p.h)
	}
}

// prefixCache is the mock's prefix (KV) cache: the blocks of the prompts
// it prefilled, the least recently used evicted beyond its capacity. A
// request's prompt is matched block by block from its start when it takes
// a slot; the matched tokens skip the prefill, and its blocks are cached
// from then on.
type prefixCache struct {
	mu    sync.Mutex
	max   int // blocks
	lru   *list.List
	where map[uint64]*list.Element
}

func newPrefixCache(tokens int) *prefixCache {
	return &prefixCache{max: max(tokens/BlockTokens, 1), lru: list.New(), where: make(map[uint64]*list.Element)}
}

// match returns how many leading tokens of a prompt with these block
// hashes are cached, and caches all its blocks.
func (c *prefixCache) match(blocks []uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	hit, matching := 0, true
	for _, b := range blocks {
		if e, ok := c.where[b]; ok {
			c.lru.MoveToFront(e)
			if matching {
				hit++
			}
			continue
		}
		matching = false
		c.where[b] = c.lru.PushFront(b)
		if c.lru.Len() > c.max {
			old := c.lru.Back()
			delete(c.where, old.Value.(uint64))
			c.lru.Remove(old)
		}
	}
	return hit * BlockTokens
}
