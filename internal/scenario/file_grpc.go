// A gRPC step: grpc: {call, data, metadata, stream_count} in place of a
// request's method, target and body, and the file's top-level grpc key
// (where the schema comes from). See grpc.go for how its calls are built.

package scenario

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/scenario/template"
)

var (
	grpcStepKeys = []string{"call", "data", "metadata", "stream_count"}
	grpcTopKeys  = []string{"proto", "import_paths", "protoset"}
	// httpOnlyKeys are step keys a gRPC step's call replaces.
	httpOnlyKeys = []string{"method", "url", "path", "body", "body_file", "body_lines"}
)

// grpcSource returns the schema gRPC steps resolve their calls in: the
// file's grpc.proto or grpc.protoset (paths relative to the file), else
// what LoadOptions.GRPC finds at the step's origin (hail run asks the
// server by reflection). It is made once, when the first gRPC step (of the
// origin) needs it.
func (l *loader) grpcSource(at *yaml.Node) (grpccall.Source, error) {
	if l.grpcSrc != nil {
		return l.grpcSrc, nil
	}
	if src := l.grpcSrcs[l.cur]; src != nil {
		return src, nil
	}
	var protos, imports []string
	protoset := ""
	if n, ok := l.nodes["grpc"]; ok {
		err := l.fields(n, "grpc", grpcTopKeys, func(key string, k, v *yaml.Node) error {
			var err error
			switch key {
			case "proto":
				protos, err = l.strings(v, "grpc.proto")
			case "import_paths":
				imports, err = l.strings(v, "grpc.import_paths")
			case "protoset":
				protoset, err = l.str(v, "grpc.protoset")
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		for i := range protos {
			protos[i] = l.path(protos[i])
		}
		for i := range imports {
			imports[i] = l.path(imports[i])
		}
	}
	var src grpccall.Source
	var err error
	switch {
	case protoset != "" && len(protos) > 0:
		return nil, l.errAt(l.nodes["grpc"], "grpc: give proto or protoset, not both")
	case protoset != "":
		src, err = grpccall.FromProtoset(l.path(protoset), l.o.FileLimit)
	case len(protos) > 0:
		src, err = grpccall.FromProto(protos, imports)
	case l.o.GRPC != nil:
		if src, err = l.o.GRPC(l.s.Origins[l.cur].URL, l.s.Settings.Insecure); err == nil {
			l.grpcSrcs[l.cur] = src
			return src, nil
		}
	default:
		return nil, l.errAt(at, "a grpc step needs the service's schema: expected grpc: {proto: FILE.proto} (or protoset) at the top of the file")
	}
	if err != nil {
		if n, ok := l.nodes["grpc"]; ok {
			return nil, l.errAt(n, "grpc: %v", err)
		}
		return nil, l.errAt(at, "%v", err)
	}
	l.grpcSrc = src
	return src, nil
}

// strings reads a string or a list of strings.
func (l *loader) strings(n *yaml.Node, what string) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := l.str(n, what)
		return []string{s}, err
	}
	items, err := l.list(n, what)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, it := range items {
		s, err := l.str(it, fmt.Sprintf("%s[%d]", what, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// grpcRequest compiles a gRPC step's request: a POST to the method's path
// with gRPC's headers, the file's and the step's headers, the metadata, and
// the data as the body (encoded now when it is static, per call otherwise).
func (l *loader) grpcRequest(st *Step, it *yaml.Node, n stepFields, env *template.Env) error {
	what := st.Name + ".grpc"
	for _, k := range httpOnlyKeys {
		if n.keys[k] != nil {
			return l.errAt(n.keys[k], "%s: a grpc step's request is its call: expected no %s", st.Name, k)
		}
	}
	g := n.vals["grpc"]
	vals := map[string]*yaml.Node{}
	if err := l.fields(g, what, grpcStepKeys, func(key string, k, v *yaml.Node) error {
		vals[key] = v
		return nil
	}); err != nil {
		return err
	}
	if st.origin < 0 {
		return l.errAt(g, "%s: a grpc step needs a base: expected base: http://HOST:PORT (h2c) or https://HOST:PORT at the top of the file, or a target", what)
	}
	callN := vals["call"]
	if callN == nil {
		return l.errAt(g, "%s: expected a call (call: package.Service/Method), found none", what)
	}
	call, err := l.str(callN, what+".call")
	if err != nil {
		return err
	}
	if _, _, err := grpccall.ParseCall(call); err != nil {
		return l.errAt(callN, "%s.call: %v", what, strings.TrimPrefix(err.Error(), "--call "))
	}
	src, err := l.grpcSource(callN)
	if err != nil {
		return err
	}
	m, err := grpccall.Resolve(src, call)
	if err != nil {
		return l.errAt(callN, "%s.call: %v", what, strings.TrimPrefix(err.Error(), "--call "+call+": "))
	}
	gs := newGRPCStep(m)
	if v := vals["stream_count"]; v != nil {
		c, err := l.integer(v, what+".stream_count", 1, 1_000_000)
		if err != nil {
			return err
		}
		if !m.ClientStreams() {
			return l.errAt(v, "%s.stream_count: %s is %s; expected a client or bidi streaming call", what, m.Name(), m.Kind())
		}
		gs.count = int(c)
	}
	st.Method, st.Target, st.sendsCL, st.grpc = "POST", m.Path(), true, gs
	if err := l.grpcHead(st, n, vals["metadata"], env); err != nil {
		return err
	}
	return l.grpcData(st, gs, vals["data"], env)
}

// grpcHead compiles the request head: the method's path, gRPC's headers,
// the deadline (the file's timeout, as grpc-timeout), the headers and the
// metadata (lower-case keys; templates allowed).
func (l *loader) grpcHead(st *Step, n stepFields, md *yaml.Node, env *template.Env) error {
	hdr := "Content-Type: application/grpc\r\nTE: trailers\r\n"
	if t := l.s.Settings.Timeout; t > 0 {
		hdr += "grpc-timeout: " + grpccall.Timeout(t) + "\r\n"
	}
	parts := []*template.Template{template.Text("POST " + st.Target + " HTTP/1.1\r\nHost: " + l.s.Origins[st.origin].URL.Host + "\r\n" + hdr)}
	hs, err := l.mergeHeaders(headerSource{n.vals["headers"], st.Name + ".headers"}, headerSource{md, st.Name + ".grpc.metadata"})
	if err != nil {
		return err
	}
	for _, h := range hs {
		lk := strings.ToLower(h.name)
		if lk == "content-type" || lk == "te" || lk == "host" || strings.HasPrefix(lk, "grpc-") && lk != "grpc-trace-bin" {
			return l.errAt(h.k, "%s: %s is gRPC's own: expected other metadata", h.what, h.name)
		}
	}
	for _, h := range hs {
		t, err := template.Compile(h.v.Value, env, template.Header)
		if err != nil {
			return l.errIn(h.v, err, st.Name+".grpc.metadata."+h.name)
		}
		parts = append(parts, template.Text(strings.ToLower(h.name)+": "), t, template.Text("\r\n"))
	}
	parts = append(parts, template.Text("User-Agent: hail/"+plan.Version+"\r\n"))
	st.head = template.Concat(parts...)
	return nil
}

// grpcData compiles the data: JSON text (a template), or YAML written as
// a mapping or a list, whose strings are templates of their own with
// their generated values JSON-escaped (bodyJSON, strings kept strings).
// Static data is encoded (and checked) now; templated data is checked on
// a sample expansion and encoded per call.
func (l *loader) grpcData(st *Step, gs *grpcStep, n *yaml.Node, env *template.Env) error {
	what := st.Name + ".grpc.data"
	var t *template.Template
	switch {
	case n == nil:
		t = template.Text("{}")
	case n.Kind == yaml.ScalarNode:
		src, err := l.str(n, what)
		if err != nil {
			return err
		}
		if t, err = template.Compile(src, env, template.Raw); err != nil {
			return l.errIn(n, err, what)
		}
	default:
		var err error
		if t, err = l.bodyJSON(n, what, env, false); err != nil {
			return err
		}
	}
	if t.Static() {
		body, err := gs.encode(nil, t.Literal(), 0) // variables expanded (empty: {})
		if err != nil {
			return l.errAt(n, "%s.grpc.data: %v", st.Name, err)
		}
		st.bodyLit = body
		return nil
	}
	st.body = t
	v := l.sampleVU(st, "1") // "1" fits string and number fields alike
	if _, err := gs.encode(nil, t.AppendTo(nil, &v.ctx), 0); err != nil {
		return l.errAt(n, "%s.grpc.data: %v (in a sample expansion of its templates)", st.Name, err)
	}
	return nil
}
