// Package grpccall is what hail needs to make gRPC calls without generated
// code: the method a --call names, found in a Source of descriptors (server
// reflection, .proto files compiled by protocompile, or a protoset); the
// request messages, turned from JSON into protobuf bytes once per distinct
// payload (with the path of the field that does not fit when they do not)
// and framed as gRPC's length-prefixed messages; and the way back, from a
// response's framed messages to protojson for captures.
//
// The calls themselves are HTTP/2 POSTs that hail's own HTTP/2 engine sends
// (internal/engine/h2engine reads their trailers and messages). A
// scenario's templated gRPC data is on the hot path: SplitData and Encode
// run for every call, so valid data is parsed once by each, and only
// data that does not fit is parsed again to explain why.
package grpccall

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Method is a resolved gRPC method.
type Method struct {
	// Desc describes it: its input and output messages and streaming kind.
	Desc protoreflect.MethodDescriptor
}

// Path is the method's HTTP/2 :path, "/package.Service/Method".
func (m *Method) Path() string {
	return "/" + string(m.Desc.Parent().FullName()) + "/" + string(m.Desc.Name())
}

// Name is the method's full name as --call takes it, "package.Service/Method".
func (m *Method) Name() string { return strings.TrimPrefix(m.Path(), "/") }

// Kind names the method's streaming kind: "unary", "client streaming",
// "server streaming" or "bidi streaming".
func (m *Method) Kind() string {
	switch c, s := m.Desc.IsStreamingClient(), m.Desc.IsStreamingServer(); {
	case c && s:
		return "bidi streaming"
	case c:
		return "client streaming"
	case s:
		return "server streaming"
	}
	return "unary"
}

// ClientStreams reports whether the client sends a stream of messages.
func (m *Method) ClientStreams() bool { return m.Desc.IsStreamingClient() }

// ParseCall splits a --call value, "package.Service/Method" or
// "package.Service.Method" (a leading "/" is allowed), into the service's
// full name and the method's name.
func ParseCall(call string) (service, method string, err error) {
	c := strings.TrimPrefix(strings.TrimSpace(call), "/")
	if i := strings.LastIndexByte(c, '/'); i >= 0 {
		service, method = c[:i], c[i+1:]
	} else if i := strings.LastIndexByte(c, '.'); i >= 0 {
		service, method = c[:i], c[i+1:]
	}
	if service == "" || method == "" || !validName(service) || !validIdent(method) {
		return "", "", fmt.Errorf("--call %q: expected package.Service/Method (or package.Service.Method), e.g. grpc.health.v1.Health/Check", call)
	}
	return service, method, nil
}

func validIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func validName(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !validIdent(part) {
			return false
		}
	}
	return true
}

// Source is where method descriptors come from.
type Source interface {
	// Services are the full names of the services it knows, sorted.
	Services() ([]string, error)
	// Service describes one service; an unknown one is an error.
	Service(name string) (protoreflect.ServiceDescriptor, error)
	// Describe says where the descriptors come from, for messages
	// ("server reflection", "--proto hail.proto").
	Describe() string
}

// Resolve finds call's method in src. An unknown service or method is one
// line that lists the ones src has.
func Resolve(src Source, call string) (*Method, error) {
	svcName, name, err := ParseCall(call)
	if err != nil {
		return nil, err
	}
	svc, err := src.Service(svcName)
	if err != nil {
		var unknown *UnknownError
		if !errors.As(err, &unknown) {
			return nil, err
		}
		names, lerr := src.Services()
		if lerr != nil {
			return nil, lerr
		}
		return nil, fmt.Errorf("--call %s: %s has no service %s; it has %s", call, src.Describe(), svcName, listOrNone(names))
	}
	md := svc.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		var names []string
		for i := 0; i < svc.Methods().Len(); i++ {
			names = append(names, string(svc.Methods().Get(i).Name()))
		}
		sort.Strings(names)
		return nil, fmt.Errorf("--call %s: service %s has no method %s; its methods are %s", call, svcName, name, listOrNone(names))
	}
	return &Method{Desc: md}, nil
}

// UnknownError is a name a Source does not know.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string { return "unknown " + e.Name }

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Timeout formats d as a grpc-timeout header value: at most 8 digits and
// a unit, exact in the coarsest unit that allows it, else rounded up.
func Timeout(d time.Duration) string {
	units := []struct {
		d    time.Duration
		unit string
	}{{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"}, {time.Second, "S"}, {time.Minute, "M"}, {time.Hour, "H"}}
	for i := len(units) - 1; i >= 0; i-- { // the coarsest unit that is exact
		if u := units[i]; d%u.d == 0 && d/u.d < 1e8 {
			return fmt.Sprintf("%d%s", d/u.d, u.unit)
		}
	}
	for _, u := range units { // the finest that fits, rounded up
		if n := (d + u.d - 1) / u.d; n < 1e8 {
			return fmt.Sprintf("%d%s", n, u.unit)
		}
	}
	return "99999999H"
}
