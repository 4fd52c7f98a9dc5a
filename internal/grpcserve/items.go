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
	sd := s.sch.d.items
	return &grpc.ServiceDesc{
		ServiceName: string(sd.FullName()),
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			s.unary(sd, "Create", s.create),
			s.unary(sd, "Get", s.get),
			s.unary(sd, "Delete", s.remove),
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
	d := &s.sch.d
	m := dynamicpb.NewMessage(d.item)
	m.Set(d.itemID, protoreflect.ValueOfString(id))
	if it.name != "" {
		m.Set(d.itemName, protoreflect.ValueOfString(it.name))
	}
	if it.tenant != "" {
		m.Set(d.itemTenant, protoreflect.ValueOfString(it.tenant))
	}
	if it.cpus != 0 {
		m.Set(d.itemCPUs, protoreflect.ValueOfInt32(it.cpus))
	}
	return m
}

func (s *Server) create(_ context.Context, req *dynamicpb.Message) (proto.Message, error) {
	d := &s.sch.d
	it := item{name: req.Get(d.createName).String(), tenant: req.Get(d.createTenant).String(),
		cpus: int32(req.Get(d.createCPUs).Int())}
	id := s.items.newID()
	sh := s.items.shard(id)
	sh.mu.Lock()
	sh.m[id] = it
	sh.mu.Unlock()
	return s.itemMsg(id, it), nil
}

// lookUp finds the item an ItemRef names, under its shard's lock, and
// deletes it when del is set; a missing one is NotFound.
func (s *Server) lookUp(ref *dynamicpb.Message, del bool) (string, item, error) {
	id := ref.Get(s.sch.d.refID).String()
	sh := s.items.shard(id)
	sh.mu.Lock()
	it, ok := sh.m[id]
	if del {
		delete(sh.m, id)
	}
	sh.mu.Unlock()
	if !ok {
		return id, it, status.Errorf(codes.NotFound, "no item %q", id)
	}
	return id, it, nil
}

func (s *Server) get(_ context.Context, req *dynamicpb.Message) (proto.Message, error) {
	id, it, err := s.lookUp(req, false)
	if err != nil {
		return nil, err
	}
	return s.itemMsg(id, it), nil
}

func (s *Server) remove(_ context.Context, req *dynamicpb.Message) (proto.Message, error) {
	if _, _, err := s.lookUp(req, true); err != nil {
		return nil, err
	}
	return dynamicpb.NewMessage(s.sch.d.deleteItemReply), nil
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
