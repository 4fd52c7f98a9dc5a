package grpcserve

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

func (s *Server) itemsDesc() *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "hail.v1.Items",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			{MethodName: "Create", Handler: s.unary("/hail.v1.Items/Create", "CreateItemRequest", s.create)},
			{MethodName: "Get", Handler: s.unary("/hail.v1.Items/Get", "ItemRef", s.get)},
			{MethodName: "Delete", Handler: s.unary("/hail.v1.Items/Delete", "ItemRef", s.remove)},
		},
		Metadata: ProtoFile,
	}
}

// item is a stored Item: name, tenant, cpus.
type item struct {
	name, tenant string
	cpus         int32
}

const itemShards = 16

// itemStore holds the items in shards, each a mutex-protected map.
type itemStore struct {
	next   atomic.Uint64
	key    uint64
	shards [itemShards]struct {
		mu sync.Mutex
		m  map[string]item
	}
}

func (st *itemStore) init() {
	st.key = rand.Uint64()
	for i := range st.shards {
		st.shards[i].m = map[string]item{}
	}
}

// newID is a fresh 16-hex-digit id: a counter scrambled by a keyed mix.
func (st *itemStore) newID() string {
	x := st.next.Add(1) ^ st.key
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], x)
	return hex.EncodeToString(b[:])
}

func (st *itemStore) shard(id string) *struct {
	mu sync.Mutex
	m  map[string]item
} {
	var h uint32
	for i := 0; i < len(id); i++ {
		h = h*31 + uint32(id[i])
	}
	return &st.shards[h%itemShards]
}

func (s *Server) itemMsg(id string, it item) *dynamicpb.Message {
	md := s.sch.msg("Item")
	m := dynamicpb.NewMessage(md)
	f := md.Fields()
	m.Set(f.ByName("id"), protoreflect.ValueOfString(id))
	if it.name != "" {
		m.Set(f.ByName("name"), protoreflect.ValueOfString(it.name))
	}
	if it.tenant != "" {
		m.Set(f.ByName("tenant"), protoreflect.ValueOfString(it.tenant))
	}
	if it.cpus != 0 {
		m.Set(f.ByName("cpus"), protoreflect.ValueOfInt32(it.cpus))
	}
	return m
}

func (s *Server) create(_ context.Context, req *dynamicpb.Message) (proto.Message, error) {
	f := req.Descriptor().Fields()
	it := item{name: req.Get(f.ByName("name")).String(), tenant: req.Get(f.ByName("tenant")).String(),
		cpus: int32(req.Get(f.ByName("cpus")).Int())}
	id := s.items.newID()
	sh := s.items.shard(id)
	sh.mu.Lock()
	sh.m[id] = it
	sh.mu.Unlock()
	return s.itemMsg(id, it), nil
}

func idOf(req *dynamicpb.Message) string {
	return req.Get(req.Descriptor().Fields().ByName("id")).String()
}

func (s *Server) get(_ context.Context, req *dynamicpb.Message) (proto.Message, error) {
	id := idOf(req)
	sh := s.items.shard(id)
	sh.mu.Lock()
	it, ok := sh.m[id]
	sh.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no item %q", id)
	}
	return s.itemMsg(id, it), nil
}

func (s *Server) remove(_ context.Context, req *dynamicpb.Message) (proto.Message, error) {
	id := idOf(req)
	sh := s.items.shard(id)
	sh.mu.Lock()
	_, ok := sh.m[id]
	delete(sh.m, id)
	sh.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no item %q", id)
	}
	return dynamicpb.NewMessage(s.sch.msg("DeleteItemReply")), nil
}

// Items is how many items are stored.
func (s *Server) Items() int {
	n := 0
	for i := range s.items.shards {
		sh := &s.items.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}
