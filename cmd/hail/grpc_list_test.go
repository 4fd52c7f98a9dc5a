package main

import (
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/grpcserve"
)

// Without --call, hail grpc lists every method with its request and
// response types and its streaming kind, from reflection or from .proto
// files (which need no server), and exits 0 without calling anything.
func TestGRPCListMethods(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	want := []string{
		"hail.v1.Items/Create  (hail.v1.CreateItemRequest) returns (hail.v1.Item)  unary",
		"hail.v1.Items/Get     (hail.v1.ItemRef) returns (hail.v1.Item)  unary",
		"hail.v1.Target/Chat   (stream hail.v1.EchoRequest) returns (stream hail.v1.EchoReply)  bidi streaming",
		"hail.v1.Target/Collect  (stream hail.v1.EchoRequest) returns (hail.v1.EchoReply)  client streaming",
		"hail.v1.Target/Expand  (hail.v1.EchoRequest) returns (stream hail.v1.EchoReply)  server streaming",
		"grpc.health.v1.Health/Check",
	}
	for _, args := range [][]string{
		{"--insecure", addr},
		{"--proto", "../../internal/grpcserve/hail.proto", "--insecure", "127.0.0.1:1"}, // nothing listens there
	} {
		out, errOut, code := hail(t, append([]string{"grpc"}, args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("hail grpc %v: exit %d, stderr %q", args, code, errOut)
		}
		norm := strings.Join(strings.Fields(out), " ")
		for _, w := range want {
			if args[0] == "--proto" && strings.HasPrefix(w, "grpc.health") {
				continue // hail.proto does not hold the health service
			}
			if !strings.Contains(norm, strings.Join(strings.Fields(w), " ")) {
				t.Errorf("hail grpc %v: output lacks %q:\n%s", args, w, out)
			}
		}
		if !strings.Contains(out, "(call one with --call)") {
			t.Errorf("hail grpc %v: no heading:\n%s", args, out)
		}
	}
	if n := srv.Calls("/hail.v1.Target/Echo") + srv.Calls("/hail.v1.Items/Create"); n != 0 {
		t.Errorf("listing made %d calls", n)
	}
}
