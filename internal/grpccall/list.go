package grpccall

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// List returns every method of every service src knows, sorted by
// service and method name: what hail grpc prints without --call.
func List(src Source) ([]*Method, error) {
	names, err := src.Services()
	if err != nil {
		return nil, err
	}
	var out []*Method
	for _, name := range names {
		svc, err := src.Service(name)
		if err != nil {
			return nil, fmt.Errorf("service %s: %v", name, err)
		}
		ms := svc.Methods()
		start := len(out)
		for i := 0; i < ms.Len(); i++ {
			out = append(out, &Method{Desc: ms.Get(i)})
		}
		sort.Slice(out[start:], func(i, j int) bool { return out[start+i].Desc.Name() < out[start+j].Desc.Name() })
	}
	return out, nil
}

// Signature is the method's request and response types as a .proto file
// writes them, with full names: "(stream pkg.Req) returns (pkg.Resp)".
func (m *Method) Signature() string {
	typ := func(stream bool, md protoreflect.MessageDescriptor) string {
		if stream {
			return "stream " + string(md.FullName())
		}
		return string(md.FullName())
	}
	return "(" + typ(m.Desc.IsStreamingClient(), m.Desc.Input()) + ") returns (" + typ(m.Desc.IsStreamingServer(), m.Desc.Output()) + ")"
}

// ListText is List as hail grpc prints it: a heading naming the source,
// then one line per method, its name as --call takes it, its request and
// response types, and its streaming kind.
func ListText(src Source, methods []*Method) string {
	b := &strings.Builder{}
	noun := "methods"
	if len(methods) == 1 {
		noun = "method"
	}
	fmt.Fprintf(b, "%s: %d %s (call one with --call)\n", src.Describe(), len(methods), noun)
	w := 0
	for _, m := range methods {
		w = max(w, min(len(m.Name()), 32)) // a long name does not push every line right
	}
	for _, m := range methods {
		fmt.Fprintf(b, "  %-*s  %s  %s\n", w, m.Name(), m.Signature(), m.Kind())
	}
	return b.String()
}
