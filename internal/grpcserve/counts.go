package grpcserve

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/stats"
)

// counts is the server's stats.Handler: calls by method, messages both
// ways, and the metadata values calls carried. Server reflection's own
// questions are not counted: a load generator's count of calls is held
// against the rest.
type counts struct {
	byMethod   sync.Map // method → *atomic.Int64
	total      atomic.Int64
	recv, sent atomic.Int64

	mu sync.Mutex
	md map[string]map[string]int64 // key → value → calls
}

// maxMetadataValues bounds the distinct values kept per key.
const maxMetadataValues = 1000

type methodKey struct{}

func (c *counts) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, methodKey{}, info.FullMethodName)
}

func (c *counts) HandleRPC(ctx context.Context, s stats.RPCStats) {
	m, _ := ctx.Value(methodKey{}).(string)
	if strings.HasPrefix(m, "/grpc.reflection.") {
		return
	}
	switch s := s.(type) {
	case *stats.Begin:
		v, ok := c.byMethod.Load(m)
		if !ok {
			v, _ = c.byMethod.LoadOrStore(m, new(atomic.Int64))
		}
		v.(*atomic.Int64).Add(1)
		c.total.Add(1)
	case *stats.InPayload:
		c.recv.Add(1)
	case *stats.OutPayload:
		c.sent.Add(1)
	case *stats.InHeader:
		if !hasMetadata(s.Header) {
			return // the common call: no lock taken
		}
		c.mu.Lock()
		for k, vs := range s.Header {
			if reservedMetadata(k) {
				continue
			}
			if c.md == nil {
				c.md = map[string]map[string]int64{}
			}
			byVal := c.md[k]
			if byVal == nil {
				byVal = map[string]int64{}
				c.md[k] = byVal
			}
			for _, v := range vs {
				if _, ok := byVal[v]; ok || len(byVal) < maxMetadataValues {
					byVal[v]++
				}
			}
		}
		c.mu.Unlock()
	}
}

// hasMetadata reports whether h holds a key that is not reserved, one
// that HandleRPC counts.
func hasMetadata(h map[string][]string) bool {
	for k := range h {
		if !reservedMetadata(k) {
			return true
		}
	}
	return false
}

func (c *counts) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *counts) HandleConn(context.Context, stats.ConnStats)                       {}

func (c *counts) calls(method string) int64 {
	if v, ok := c.byMethod.Load(method); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

func (c *counts) metadata(key string) map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int64{}
	for v, n := range c.md[key] {
		out[v] = n
	}
	return out
}

func (c *counts) reset() {
	c.byMethod.Range(func(_, v any) bool {
		v.(*atomic.Int64).Store(0)
		return true
	})
	c.total.Store(0)
	c.recv.Store(0)
	c.sent.Store(0)
	c.mu.Lock()
	c.md = nil
	c.mu.Unlock()
}
