package grpcserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// EchoRequest's and EchoReply's field numbers (hail.proto).
const (
	fPayload = 1
	fDelay   = 2
	fStatus  = 3
	fCount   = 4
	fSize    = 5

	fMessages = 2
)

func (s *Server) targetDesc() *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "hail.v1.Target",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			{MethodName: "Echo", Handler: s.unary("/hail.v1.Target/Echo", "EchoRequest", s.echo)},
			{MethodName: "Stats", Handler: s.unary("/hail.v1.Target/Stats", "StatsRequest", s.stats)},
		},
		Streams: []grpc.StreamDesc{
			{StreamName: "Collect", Handler: s.collect, ClientStreams: true},
			{StreamName: "Expand", Handler: s.expand, ServerStreams: true},
			{StreamName: "Chat", Handler: s.chat, ClientStreams: true, ServerStreams: true},
		},
		Metadata: ProtoFile,
	}
}

// unary adapts fn, which takes a dynamic message of type in, to grpc-go.
func (s *Server) unary(method, in string, fn func(context.Context, *dynamicpb.Message) (proto.Message, error)) grpc.MethodHandler {
	md := s.sch.msg(in)
	return func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
		req := dynamicpb.NewMessage(md)
		if err := dec(req); err != nil {
			return nil, err
		}
		if icpt == nil {
			return fn(ctx, req)
		}
		return icpt(ctx, req, &grpc.UnaryServerInfo{Server: s, FullMethod: method}, func(ctx context.Context, r any) (any, error) {
			return fn(ctx, r.(*dynamicpb.Message))
		})
	}
}

func (s *Server) reply(payload string, messages int64) *dynamicpb.Message {
	md := s.sch.msg("EchoReply")
	m := dynamicpb.NewMessage(md)
	if payload != "" {
		m.Set(md.Fields().ByNumber(fPayload), protoreflect.ValueOfString(payload))
	}
	if messages > 0 {
		m.Set(md.Fields().ByNumber(fMessages), protoreflect.ValueOfInt64(messages))
	}
	return m
}

func str(m *dynamicpb.Message, n protoreflect.FieldNumber) string {
	return m.Get(m.Descriptor().Fields().ByNumber(n)).String()
}

func num(m *dynamicpb.Message, n protoreflect.FieldNumber) int64 {
	return m.Get(m.Descriptor().Fields().ByNumber(n)).Int()
}

// payloadOf is what a reply to req carries: size bytes, or req's payload.
func payloadOf(req *dynamicpb.Message) string {
	if n := num(req, fSize); n > 0 {
		return strings.Repeat("x", int(min(n, 4<<20)))
	}
	return str(req, fPayload)
}

func (s *Server) echo(ctx context.Context, req *dynamicpb.Message) (proto.Message, error) {
	if err := behave(ctx, req); err != nil {
		return nil, err
	}
	return s.reply(payloadOf(req), 0), nil
}

func (s *Server) collect(_ any, st grpc.ServerStream) error {
	md := s.sch.msg("EchoRequest")
	var n int64
	var last string
	for {
		req := dynamicpb.NewMessage(md)
		if err := st.RecvMsg(req); err != nil {
			if isEOF(err) {
				break
			}
			return err
		}
		if n == 0 {
			if err := behave(st.Context(), req); err != nil {
				return err
			}
		}
		n++
		last = payloadOf(req)
	}
	return st.SendMsg(s.reply(last, n))
}

func (s *Server) expand(_ any, st grpc.ServerStream) error {
	req := dynamicpb.NewMessage(s.sch.msg("EchoRequest"))
	if err := st.RecvMsg(req); err != nil {
		return err
	}
	if err := behave(st.Context(), req); err != nil {
		return err
	}
	count := max(num(req, fCount), 1)
	p := payloadOf(req)
	for i := int64(1); i <= count; i++ {
		if err := st.SendMsg(s.reply(p, i)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) chat(_ any, st grpc.ServerStream) error {
	md := s.sch.msg("EchoRequest")
	for n := int64(1); ; n++ {
		req := dynamicpb.NewMessage(md)
		if err := st.RecvMsg(req); err != nil {
			if isEOF(err) {
				return nil
			}
			return err
		}
		if err := behave(st.Context(), req); err != nil {
			return err
		}
		if err := st.SendMsg(s.reply(payloadOf(req), n)); err != nil {
			return err
		}
	}
}

func (s *Server) stats(_ context.Context, req *dynamicpb.Message) (proto.Message, error) {
	md := s.sch.msg("StatsReply")
	m := dynamicpb.NewMessage(md)
	calls := m.Mutable(md.Fields().ByName("calls")).Map()
	for _, name := range s.Methods() {
		calls.Set(protoreflect.ValueOfString(name).MapKey(), protoreflect.ValueOfInt64(s.Calls(name)))
	}
	recv, sent := s.Messages()
	m.Set(md.Fields().ByName("messages_received"), protoreflect.ValueOfInt64(recv))
	m.Set(md.Fields().ByName("messages_sent"), protoreflect.ValueOfInt64(sent))
	if req.Get(req.Descriptor().Fields().ByName("reset")).Bool() {
		s.Reset()
	}
	return m, nil
}

// behave applies a request's delay and status mix.
func behave(ctx context.Context, req *dynamicpb.Message) error {
	if d := str(req, fDelay); d != "" {
		mix, err := parseMix(d, parseDelay)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "delay %q: %v", d, err)
		}
		if wait := mix.pick(); wait > 0 {
			t := time.NewTimer(time.Duration(wait))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return status.FromContextError(ctx.Err()).Err()
			}
		}
	}
	if st := str(req, fStatus); st != "" {
		mix, err := parseMix(st, parseCode)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "status %q: %v", st, err)
		}
		if c := codes.Code(mix.pick()); c != codes.OK {
			return status.Errorf(c, "hail serve: status mix %q", st)
		}
	}
	return nil
}

// mix is a distribution of values: value i with percentage pct[i]; the
// rest of 100 is the zero value.
type mix struct {
	vals []int64
	pct  []float64
}

func (m *mix) pick() int64 {
	if len(m.vals) == 1 && m.pct[0] >= 100 {
		return m.vals[0]
	}
	r := rand.Float64() * 100
	for i, p := range m.pct {
		if r < p {
			return m.vals[i]
		}
		r -= p
	}
	return 0
}

var (
	mixes    sync.Map // spec → *mix: parsed once
	mixCount atomic.Int64
)

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// parseMix reads "V" (always V) or "V:P,V:P" (V with P percent).
func parseMix(spec string, val func(string) (int64, error)) (*mix, error) {
	if m, ok := mixes.Load(spec); ok {
		return m.(*mix), nil
	}
	m := &mix{}
	var total float64
	for _, part := range strings.Split(spec, ",") {
		v, p, hasP := strings.Cut(strings.TrimSpace(part), ":")
		x, err := val(v)
		if err != nil {
			return nil, err
		}
		pct := 100.0
		if hasP {
			if pct, err = strconv.ParseFloat(p, 64); err != nil || pct < 0 {
				return nil, fmt.Errorf("percentage %q: expected a number from 0 to 100", p)
			}
		}
		total += pct
		m.vals, m.pct = append(m.vals, x), append(m.pct, pct)
	}
	if total > 100.0001 {
		return nil, fmt.Errorf("the percentages add up to %g, over 100", total)
	}
	if mixCount.Add(1) <= 1000 { // a bounded cache: specs are few in practice
		mixes.Store(spec, m)
	}
	return m, nil
}

func parseDelay(s string) (int64, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("expected a duration such as 5ms, found %q", s)
	}
	return int64(d), nil
}

// parseCode reads a gRPC code by name (NotFound, NOT_FOUND) or number.
func parseCode(s string) (int64, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n <= 16 {
		return int64(n), nil
	}
	want := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.ToLower(c.String()) == want {
			return int64(c), nil
		}
	}
	return 0, fmt.Errorf("expected a gRPC status name such as Unavailable or NOT_FOUND, found %q", s)
}
