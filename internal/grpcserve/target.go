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

// maxPayload bounds a reply's size-requested payload: 4 MiB.
const maxPayload = 4 << 20

// payloadBytes is the source of size-requested payloads, built on first
// use: a reply slices it instead of building its own.
var payloadBytes = sync.OnceValue(func() string { return strings.Repeat("x", maxPayload) })

func (s *Server) targetDesc() *grpc.ServiceDesc {
	sd := s.sch.d.target
	return &grpc.ServiceDesc{
		ServiceName: string(sd.FullName()),
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			s.unary(sd, "Echo", s.echo),
			s.unary(sd, "Stats", s.stats),
		},
		Streams: []grpc.StreamDesc{
			{StreamName: "Collect", Handler: s.collect, ClientStreams: true},
			{StreamName: "Expand", Handler: s.expand, ServerStreams: true},
			{StreamName: "Chat", Handler: s.chat, ClientStreams: true, ServerStreams: true},
		},
		Metadata: ProtoFile,
	}
}

// unary is sd's unary method name, its handler fn taking a dynamic message
// of the method's input type, adapted to grpc-go. The interceptor sees
// the method as "/package.Service/Method".
func (s *Server) unary(sd protoreflect.ServiceDescriptor, name string, fn func(context.Context, *dynamicpb.Message) (proto.Message, error)) grpc.MethodDesc {
	md := sd.Methods().ByName(protoreflect.Name(name)).Input()
	full := "/" + string(sd.FullName()) + "/" + name
	return grpc.MethodDesc{MethodName: name, Handler: func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
		req := dynamicpb.NewMessage(md)
		if err := dec(req); err != nil {
			return nil, err
		}
		if icpt == nil {
			return fn(ctx, req)
		}
		return icpt(ctx, req, &grpc.UnaryServerInfo{Server: s, FullMethod: full}, func(ctx context.Context, r any) (any, error) {
			return fn(ctx, r.(*dynamicpb.Message))
		})
	}}
}

func (s *Server) reply(payload string, messages int64) *dynamicpb.Message {
	d := &s.sch.d
	m := dynamicpb.NewMessage(d.echoReply)
	if payload != "" {
		m.Set(d.replyPayload, protoreflect.ValueOfString(payload))
	}
	if messages > 0 {
		m.Set(d.replyMessages, protoreflect.ValueOfInt64(messages))
	}
	return m
}

// payloadOf is what a reply to req carries: size bytes, or req's payload.
func (s *Server) payloadOf(req *dynamicpb.Message) string {
	if n := req.Get(s.sch.d.reqSize).Int(); n > 0 {
		return payloadBytes()[:min(n, maxPayload)]
	}
	return req.Get(s.sch.d.reqPayload).String()
}

func (s *Server) echo(ctx context.Context, req *dynamicpb.Message) (proto.Message, error) {
	if err := s.behave(ctx, req); err != nil {
		return nil, err
	}
	return s.reply(s.payloadOf(req), 0), nil
}

// recvAll receives st's request messages until the client's end of stream,
// calling fn with each and its number, from 1.
func (s *Server) recvAll(st grpc.ServerStream, fn func(n int64, req *dynamicpb.Message) error) error {
	for n := int64(1); ; n++ {
		req := dynamicpb.NewMessage(s.sch.d.echoRequest)
		if err := st.RecvMsg(req); err != nil {
			if isEOF(err) {
				return nil
			}
			return err
		}
		if err := fn(n, req); err != nil {
			return err
		}
	}
}

func (s *Server) collect(_ any, st grpc.ServerStream) error {
	var n int64
	var last string
	err := s.recvAll(st, func(i int64, req *dynamicpb.Message) error {
		if i == 1 {
			if err := s.behave(st.Context(), req); err != nil {
				return err
			}
		}
		n, last = i, s.payloadOf(req)
		return nil
	})
	if err != nil {
		return err
	}
	return st.SendMsg(s.reply(last, n))
}

func (s *Server) expand(_ any, st grpc.ServerStream) error {
	req := dynamicpb.NewMessage(s.sch.d.echoRequest)
	if err := st.RecvMsg(req); err != nil {
		return err
	}
	if err := s.behave(st.Context(), req); err != nil {
		return err
	}
	count := max(req.Get(s.sch.d.reqCount).Int(), 1)
	p := s.payloadOf(req)
	for i := int64(1); i <= count; i++ {
		if err := st.SendMsg(s.reply(p, i)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) chat(_ any, st grpc.ServerStream) error {
	return s.recvAll(st, func(n int64, req *dynamicpb.Message) error {
		if err := s.behave(st.Context(), req); err != nil {
			return err
		}
		return st.SendMsg(s.reply(s.payloadOf(req), n))
	})
}

func (s *Server) stats(_ context.Context, req *dynamicpb.Message) (proto.Message, error) {
	d := &s.sch.d
	m := dynamicpb.NewMessage(d.statsReply)
	calls := m.Mutable(d.statsCalls).Map()
	for _, name := range s.Methods() {
		calls.Set(protoreflect.ValueOfString(name).MapKey(), protoreflect.ValueOfInt64(s.Calls(name)))
	}
	recv, sent := s.Messages()
	m.Set(d.statsReceived, protoreflect.ValueOfInt64(recv))
	m.Set(d.statsSent, protoreflect.ValueOfInt64(sent))
	if req.Get(d.statsReset).Bool() {
		s.Reset()
	}
	return m, nil
}

// behave applies a request's delay and status mix.
func (s *Server) behave(ctx context.Context, req *dynamicpb.Message) error {
	if d := req.Get(s.sch.d.reqDelay).String(); d != "" {
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
	if st := req.Get(s.sch.d.reqStatus).String(); st != "" {
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
