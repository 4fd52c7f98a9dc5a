package scenario

import (
	"testing"
)

// grpcHead starts a file whose gRPC steps resolve their calls in hail
// serve --grpc's schema.
const grpcHead = "base: http://127.0.0.1:1\nrequests: 1\ngrpc: {proto: ../grpcserve/hail.proto}\n"

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

// mustParse compiles src as t.yaml, failing the test on an error.
func mustParse(t *testing.T, src string) *Scenario {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src), LoadOptions{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
