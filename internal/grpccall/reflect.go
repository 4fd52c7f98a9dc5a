package grpccall

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// NoReflectionError is a server that does not offer server reflection.
type NoReflectionError struct{ Target string }

func (e *NoReflectionError) Error() string {
	return fmt.Sprintf("the server at %s does not offer server reflection (grpc.reflection.v1 or v1alpha): "+
		"give its schema with --proto FILE.proto (and -i DIR for its imports) or --protoset FILE", e.Target)
}

// reflection's two versions have the same messages on the wire, so v1's
// messages are sent to either.
var reflectionMethods = []string{
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
}

// reflectionSource is a Source that asks the server.
type reflectionSource struct {
	ctx     context.Context // ends every question (a signal during hail's setup)
	conn    grpc.ClientConnInterface
	md      metadata.MD
	target  string
	timeout time.Duration
	method  string // the reflection version that answered
	fds     map[string]*descriptorpb.FileDescriptorProto
}

// FromReflection is a Source that asks the server on conn by server
// reflection, sending md with every request (--reflect-metadata); target
// names the server in messages. Each question is bounded by timeout, and
// ends with ctx.
func FromReflection(ctx context.Context, conn grpc.ClientConnInterface, md metadata.MD, target string, timeout time.Duration) Source {
	return &reflectionSource{ctx: ctx, conn: conn, md: md, target: target, timeout: timeout, fds: map[string]*descriptorpb.FileDescriptorProto{}}
}

func (r *reflectionSource) Describe() string { return "the server (by reflection)" }

// ask sends one reflection request and returns its answer.
func (r *reflectionSource) ask(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	methods := reflectionMethods
	if r.method != "" {
		methods = []string{r.method}
	}
	var err error
	for _, m := range methods {
		var resp *rpb.ServerReflectionResponse
		resp, err = r.askVia(m, req)
		if status.Code(err) == codes.Unimplemented {
			continue
		}
		if err == nil {
			r.method = m
		}
		return resp, err
	}
	if status.Code(err) == codes.Unimplemented {
		return nil, &NoReflectionError{Target: r.target}
	}
	return nil, err
}

func (r *reflectionSource) askVia(method string, req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
	defer cancel()
	if r.md != nil {
		ctx = metadata.NewOutgoingContext(ctx, r.md)
	}
	desc := &grpc.StreamDesc{StreamName: "ServerReflectionInfo", ServerStreams: true, ClientStreams: true}
	st, err := r.conn.NewStream(ctx, desc, method)
	if err != nil {
		return nil, err
	}
	if err := st.SendMsg(req); err != nil {
		return nil, recvErr(st, err)
	}
	if err := st.CloseSend(); err != nil {
		return nil, err
	}
	resp := &rpb.ServerReflectionResponse{}
	if err := st.RecvMsg(resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// recvErr returns the stream's status when a send failed because the call
// had already ended (the server's answer, such as Unimplemented).
func recvErr(st grpc.ClientStream, err error) error {
	if err := st.RecvMsg(&rpb.ServerReflectionResponse{}); err != nil {
		return err
	}
	return err
}

func (r *reflectionSource) Services() ([]string, error) {
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"}})
	if err != nil {
		return nil, r.wrap(err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, fmt.Errorf("the server at %s: reflection could not list services: %s", r.target, e.GetErrorMessage())
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	sort.Strings(names)
	return names, nil
}

func (r *reflectionSource) Service(name string) (protoreflect.ServiceDescriptor, error) {
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: name}})
	if err != nil {
		return nil, r.wrap(err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		if codes.Code(e.GetErrorCode()) == codes.NotFound {
			return nil, &UnknownError{Name: name}
		}
		return nil, fmt.Errorf("the server at %s: reflection could not describe %s: %s", r.target, name, e.GetErrorMessage())
	}
	if err := r.add(resp); err != nil {
		return nil, err
	}
	// Fetch what the files import, by name, until nothing is missing.
	for missing := r.missing(); len(missing) > 0; missing = r.missing() {
		progress := false
		for _, dep := range missing {
			resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				return nil, r.wrap(err)
			}
			if resp.GetErrorResponse() != nil {
				continue // perhaps a well-known type hail has built in (newFiles)
			}
			if err := r.add(resp); err != nil {
				return nil, err
			}
			progress = progress || r.fds[dep] != nil
		}
		if !progress {
			break
		}
	}
	var list []*descriptorpb.FileDescriptorProto
	for _, f := range r.fds {
		list = append(list, f)
	}
	files, err := newFiles(list)
	if err != nil {
		return nil, fmt.Errorf("the server at %s: its reflection descriptors do not link: %v", r.target, err)
	}
	return FromFiles(files, r.Describe()).Service(name)
}

// add keeps the file descriptors of a reflection answer.
func (r *reflectionSource) add(resp *rpb.ServerReflectionResponse) error {
	for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		fd := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(b, fd); err != nil {
			return fmt.Errorf("the server at %s: reflection sent a bad file descriptor: %v", r.target, err)
		}
		r.fds[fd.GetName()] = fd
	}
	return nil
}

// missing are imports of the files at hand that are not at hand.
func (r *reflectionSource) missing() []string {
	var out []string
	for _, f := range r.fds {
		for _, dep := range f.GetDependency() {
			if r.fds[dep] == nil && !strings.HasPrefix(dep, "google/protobuf/") {
				out = append(out, dep)
			}
		}
	}
	sort.Strings(out)
	return out
}

// wrap phrases a failed reflection call.
func (r *reflectionSource) wrap(err error) error {
	var nr *NoReflectionError
	if errors.As(err, &nr) {
		return err
	}
	if s, ok := status.FromError(err); ok {
		return fmt.Errorf("the server at %s: reflection failed: %s: %s", r.target, s.Code(), s.Message())
	}
	return fmt.Errorf("the server at %s: reflection failed: %v", r.target, err)
}
