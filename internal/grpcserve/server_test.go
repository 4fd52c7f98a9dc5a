package grpcserve

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

func start(t *testing.T) (*Server, *grpc.ClientConn, *schema) {
	t.Helper()
	s, err := New(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(s.Close)
	conn, err := grpc.NewClient(a.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return s, conn, s.sch
}

func call(t *testing.T, conn *grpc.ClientConn, sch *schema, method, in, out, js string) (*dynamicpb.Message, error) {
	t.Helper()
	req := dynamicpb.NewMessage(sch.msg(in))
	if err := protojson.Unmarshal([]byte(js), req); err != nil {
		t.Fatal(err)
	}
	resp := dynamicpb.NewMessage(sch.msg(out))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return resp, conn.Invoke(ctx, method, req, resp)
}

func field(m *dynamicpb.Message, name string) protoreflect.Value {
	return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
}

func TestEchoDelayStatus(t *testing.T) {
	s, conn, sch := start(t)
	r, err := call(t, conn, sch, "/hail.v1.Target/Echo", "EchoRequest", "EchoReply", `{"payload":"hi"}`)
	if err != nil || field(r, "payload").String() != "hi" {
		t.Fatalf("echo: %v %v", r, err)
	}
	r, _ = call(t, conn, sch, "/hail.v1.Target/Echo", "EchoRequest", "EchoReply", `{"size":5}`)
	if field(r, "payload").String() != "xxxxx" {
		t.Errorf("size: %v", r)
	}
	t0 := time.Now()
	if _, err := call(t, conn, sch, "/hail.v1.Target/Echo", "EchoRequest", "EchoReply", `{"delay":"30ms"}`); err != nil || time.Since(t0) < 30*time.Millisecond {
		t.Errorf("delay: %v after %v", err, time.Since(t0))
	}
	for spec, want := range map[string]codes.Code{"NotFound": codes.NotFound, "UNAVAILABLE": codes.Unavailable, "13": codes.Internal, "OK": codes.OK} {
		_, err := call(t, conn, sch, "/hail.v1.Target/Echo", "EchoRequest", "EchoReply", `{"status":"`+spec+`"}`)
		if status.Code(err) != want {
			t.Errorf("status %q: %v, want %v", spec, err, want)
		}
	}
	for _, bad := range []string{`{"status":"Nope"}`, `{"status":"NotFound:80,Internal:30"}`, `{"delay":"soon"}`} {
		if _, err := call(t, conn, sch, "/hail.v1.Target/Echo", "EchoRequest", "EchoReply", bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", bad, err)
		}
	}
	n := 0
	for range 400 {
		if _, err := call(t, conn, sch, "/hail.v1.Target/Echo", "EchoRequest", "EchoReply", `{"status":"Aborted:25"}`); status.Code(err) == codes.Aborted {
			n++
		}
	}
	if n < 60 || n > 140 {
		t.Errorf("Aborted:25 gave %d of 400", n)
	}
	if got := s.Calls("/hail.v1.Target/Echo"); got != 3+4+3+400 {
		t.Errorf("server counted %d Echo calls", got)
	}
	r, _ = call(t, conn, sch, "/hail.v1.Target/Stats", "StatsRequest", "StatsReply", `{"reset":true}`)
	if field(r, "calls").Map().Get(protoreflect.ValueOfString("/hail.v1.Target/Echo").MapKey()).Int() != 410 || s.TotalCalls() != 0 {
		t.Errorf("stats: %v, total after reset %d", r, s.TotalCalls())
	}
}

func TestItemsAndHealth(t *testing.T) {
	s, conn, sch := start(t)
	item, err := call(t, conn, sch, "/hail.v1.Items/Create", "CreateItemRequest", "Item", `{"name":"vm","cpus":4}`)
	id := field(item, "id").String()
	if err != nil || len(id) != 16 || field(item, "cpus").Int() != 4 {
		t.Fatalf("create: %v %v", item, err)
	}
	if got, err := call(t, conn, sch, "/hail.v1.Items/Get", "ItemRef", "Item", `{"id":"`+id+`"}`); err != nil || field(got, "name").String() != "vm" {
		t.Errorf("get: %v %v", got, err)
	}
	if _, err := call(t, conn, sch, "/hail.v1.Items/Delete", "ItemRef", "DeleteItemReply", `{"id":"`+id+`"}`); err != nil || s.Items() != 0 {
		t.Errorf("delete: %v, %d left", err, s.Items())
	}
	for _, m := range []string{"Get", "Delete"} {
		if _, err := call(t, conn, sch, "/hail.v1.Items/"+m, "ItemRef", "Item", `{"id":"`+id+`"}`); status.Code(err) != codes.NotFound {
			t.Errorf("%s of a deleted id: %v", m, err)
		}
	}
	h, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v %v", h, err)
	}
}
