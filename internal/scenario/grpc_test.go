package scenario

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/grpccall"
)

// grpcHead starts a file whose gRPC steps resolve their calls in hail
// serve --grpc's schema.
const grpcHead = "base: http://127.0.0.1:1\nrequests: 1\ngrpc: {proto: ../grpcserve/hail.proto}\n"

// grpcMessage decodes the one message of a gRPC step's framed body as
// compact JSON, its keys sorted.
func grpcMessage(t *testing.T, st *Step, body []byte) string {
	t.Helper()
	msgs, rest := grpccall.Messages(body)
	if len(msgs) != 1 || len(rest) != 0 {
		t.Fatalf("%s: body %q: want one framed message", st.Name, body)
	}
	var b bytes.Buffer
	if err := grpccall.ToJSON(&b, st.grpc.method.Desc.Input(), msgs[0]); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v) // compact, keys sorted
	return string(out)
}

// requestBody is what follows the head of an HTTP/1.1-encoded request.
func requestBody(t *testing.T, req []byte) []byte {
	t.Helper()
	_, body, ok := bytes.Cut(req, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("request %q has no end of head", req)
	}
	return body
}

// Static data is expanded at load: variables, environment variables and
// quoted literals are sent as their values, not as their template text;
// strings stay strings (a proto string field takes no JSON number) and
// YAML numbers stay numbers.
func TestGRPCStaticDataExpands(t *testing.T) {
	s := mustParse(t, grpcHead+`variables: {who: alice, n: '5'}
steps:
  - {name: a, grpc: {call: hail.v1.Items/Create, data: {name: '{{var.who}}', tenant: '{{var.n}}', cpus: 2}}}
  - {name: b, grpc: {call: hail.v1.Items/Get, data: '{"id":"{{var.who}}-{{"x"}}"}'}}
  - {name: c, grpc: {call: hail.v1.Items/Get, data: {}}}
  - {name: d, grpc: {call: hail.v1.Items/Get}}
`)
	for i, want := range []string{`{"cpus":2,"name":"alice","tenant":"5"}`, `{"id":"alice-x"}`, `{}`, `{}`} {
		st := s.Steps[i]
		if st.body != nil {
			t.Fatalf("%s: data compiled as a template, want it encoded at load", st.Name)
		}
		if got := grpcMessage(t, st, st.bodyLit); got != want {
			t.Errorf("%s: sent %s, want %s", st.Name, got, want)
		}
	}
}

// A feed's column in a gRPC step's data loads (its sample expansion reads
// row 0) and is sent.
func TestGRPCDataFeed(t *testing.T) {
	s := mustParse(t, grpcHead+`feeds: {users: {file: testdata/users.csv}}
steps:
  - {name: a, grpc: {call: hail.v1.Items/Get, data: {id: '{{feed.users.name}}'}}}
  - {name: b, grpc: {call: hail.v1.Items/Get, data: '{"id":"{{feed.users.id}}"}'}}
`)
	v := newVU(s, 0)
	req, ok := v.build(0)
	if !ok {
		t.Fatal("a: not built")
	}
	if got := grpcMessage(t, s.Steps[0], requestBody(t, req)); !strings.HasPrefix(got, `{"id":"`) || got == `{"id":""}` {
		t.Errorf("a: sent %s, want a user's name", got)
	}
}

// Data written as YAML: each string is a template of its own (quotes
// inside {{ }} work), generated values are JSON-escaped, and strings stay
// strings.
func TestGRPCDataMappingTemplates(t *testing.T) {
	s := mustParse(t, grpcHead+`steps:
  - name: make
    grpc: {call: hail.v1.Items/Create, data: {name: '{{regex "[a-z]{4}"}}', tenant: '{{choice "a b" c}}', cpus: 3}}
    capture: {vm: {json: id}}
  - {name: get, grpc: {call: hail.v1.Items/Get, data: {id: '{{last vm}}'}}}
  - {name: many, grpc: {call: hail.v1.Target/Collect, data: [{payload: '{{last vm}}'}, {payload: x}]}}
`)
	v := newVU(s, 0)
	req, ok := v.build(0)
	if !ok {
		t.Fatal("make: not built")
	}
	got := grpcMessage(t, s.Steps[0], requestBody(t, req))
	if !strings.HasPrefix(got, `{"cpus":3,"name":"`) ||
		!strings.Contains(got, `"tenant":"a b"`) && !strings.Contains(got, `"tenant":"c"`) {
		t.Errorf("make: sent %s", got)
	}
	vm := slices.Index(s.captures, "vm")
	v.lastSet[vm] = true
	v.ctx.Last[vm] = []byte(`a"b\c`)
	req, ok = v.build(1)
	if !ok {
		t.Fatal(`get: not built with a captured a"b\c`)
	}
	if got, want := grpcMessage(t, s.Steps[1], requestBody(t, req)), `{"id":"a\"b\\c"}`; got != want {
		t.Errorf("get: sent %s, want %s", got, want)
	}
	req, ok = v.build(2)
	if !ok {
		t.Fatal("many: not built")
	}
	if msgs, _ := grpccall.Messages(requestBody(t, req)); len(msgs) != 2 {
		t.Errorf("many: %d messages, want 2", len(msgs))
	}
}

// A gRPC setup step makes the whole run speak HTTP/2, as a gRPC load
// step does: the setup runs on the load's plan.
func TestGRPCSetupSpeaksHTTP2(t *testing.T) {
	s := mustParse(t, grpcHead+`setup:
  - {name: seed, grpc: {call: hail.v1.Items/Create, data: {name: x}}}
steps:
  - {name: a, path: /}
`)
	if !s.HasGRPC() {
		t.Error("HasGRPC: false with a gRPC setup step")
	}
	p, err := s.Plan(s.Settings.Schedule())
	if err != nil {
		t.Fatal(err)
	}
	if p.HTTPVersion != "2" {
		t.Errorf("plan HTTPVersion %q, want 2", p.HTTPVersion)
	}
}
