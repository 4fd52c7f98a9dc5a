package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hail-loadgen/hail/internal/grpcserve"
)

// runScenarioJSON runs the scenario file src with hail run -j, fails the
// test unless hail exits 0 with a JSON report, and returns the report.
func runScenarioJSON(t *testing.T, src string) map[string]any {
	t.Helper()
	file := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := hail(t, "run", file, "--no-tui", "-j")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A create → get → delete flow over gRPC: ids captured from Create's
// response messages are used by the same virtual user, so every Get and
// Delete finds its item and nothing is left.
func TestGRPCScenarioFlow(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	r := runScenarioJSON(t, `
name: grpc-flow
base: http://`+addr+`
steps:
  - name: create
    grpc:
      call: hail.v1.Items/Create
      data: {name: 'vm-{{counter}}', tenant: acme, cpus: 2}
      metadata: {x-tenant: acme}
    capture:
      vm: {json: id}
      code: {status: true}
  - name: get
    grpc: {call: hail.v1.Items/Get, data: '{"id":"{{last vm}}"}'}
  - name: delete
    grpc: {call: hail.v1.Items.Delete, data: '{"id":"{{last vm}}"}'}
flows:
  - {name: lifecycle, steps: [create, get, delete]}
connections: 4
requests: 300
`)
	if d := r["statusCodeDistribution"].(map[string]any); num(d["OK"]) != 300 || len(d) != 1 {
		t.Errorf("statusCodeDistribution %v, want OK×300", d)
	}
	// -n ends flows where they are: each virtual user's last flow may be
	// cut short, but no Get or Delete ever missed (all 300 were OK).
	creates, gets, deletes := srv.Calls("/hail.v1.Items/Create"), srv.Calls("/hail.v1.Items/Get"), srv.Calls("/hail.v1.Items/Delete")
	if creates+gets+deletes != 300 || creates < 100 || creates-deletes > 4 || int64(srv.Items()) != creates-deletes {
		t.Errorf("server: %d creates, %d gets, %d deletes, %d items left", creates, gets, deletes, srv.Items())
	}
	if md := srv.Metadata("x-tenant"); md["acme"] != creates {
		t.Errorf("metadata at the server: %v", md)
	}
	for _, s := range r["hail"].(map[string]any)["steps"].([]any) {
		st := s.(map[string]any)
		if st["name"] == "create" && (num(st["captures"]) != 2*creates || num(st["capture_misses"]) != 0) {
			t.Errorf("create captured %v (misses %v), want %d (an id and a status per call)", st["captures"], st["capture_misses"], 2*creates)
		}
	}
}

// One file mixes HTTP and gRPC steps against one HTTP/2 origin (a server
// that routes gRPC beside REST, as grpc-gateway setups do): REST creates,
// gRPC calls the same server.
func TestGRPCScenarioMixedWithHTTP(t *testing.T) {
	t.Parallel()
	g, err := grpcserve.New(grpcserve.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var rest atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		rest.Add(1)
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"r` + r.Header.Get("X-N") + `"}`))
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			g.Handler().ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	hs.Protocols.SetUnencryptedHTTP2(true)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	r := runScenarioJSON(t, `
base: http://`+ln.Addr().String()+`
steps:
  - {name: rest-create, weight: 1, method: POST, path: /items, headers: {X-N: '{{counter}}'}, body: '{}', capture: {ids: {json: id}}}
  - name: grpc-echo
    weight: 1
    grpc: {call: hail.v1.Target/Echo, data: '{"payload":"{{pick ids}}"}'}
requests: 200
connections: 2
`)
	d := r["statusCodeDistribution"].(map[string]any)
	if num(d["201"])+num(d["OK"]) != 200 || num(d["201"]) != rest.Load() || num(d["OK"]) != g.Calls("/hail.v1.Target/Echo") || num(d["OK"]) == 0 {
		t.Errorf("statusCodeDistribution %v; server: %d REST, %d gRPC", d, rest.Load(), g.Calls("/hail.v1.Target/Echo"))
	}
	if p := r["hail"].(map[string]any)["protocol"]; p != "h2c" {
		t.Errorf("protocol %v: a file with gRPC steps speaks HTTP/2", p)
	}
}

// A scenario's gRPC step problems are FILE:LINE:COL lines.
func TestGRPCScenarioErrors(t *testing.T) {
	t.Parallel()
	addr, _ := startGRPCServer(t, grpcserve.Config{})
	dir := t.TempDir()
	for _, tc := range []struct{ step, want string }{
		{`grpc: {call: hail.v1.Target/Nope}`, ":6:18: s.grpc.call: service hail.v1.Target has no method Nope; its methods are"},
		{`grpc: {call: hail.v1.Target/Echo, data: '{"count":"x"}'}`, `s.grpc.data: count: expected an integer (int32), found a string "x"`},
		{`grpc: {call: hail.v1.Target/Echo, data: '{"count":{{uuid}}}'}`, `s.grpc.data: not valid JSON`},
		{`grpc: {call: hail.v1.Target/Echo, bogus: 1}`, "bogus"},
		{"path: /x\n    grpc: {call: hail.v1.Target/Echo}", "a grpc step's request is its call: expected no path"},
		{`grpc: {call: hail.v1.Target/Echo, stream_count: 3}`, "stream_count: hail.v1.Target/Echo is unary"},
	} {
		file := filepath.Join(dir, "bad.yaml")
		os.WriteFile(file, []byte("base: http://"+addr+"\nrequests: 1\nsteps:\n  - name: s\n    weight: 1\n    "+tc.step+"\n"), 0o644)
		out, errOut, code := hailIn(t, "run", file, "--no-tui")
		if code != 1 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, %q; want %q", tc.step, code, errOut, tc.want)
		}
	}
}

// The example file runs against hail serve --grpc's services: destroy
// takes each id once, so it never misses. Its virtual users think 5 ms
// after each call (withThink).
func TestGRPCExampleScenario(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	file := withThink(t, "../../examples/vm-lifecycle-grpc.yaml", "5ms")
	out, errOut, code := hail(t, "run", file, "--base", "http://"+addr, "-z", "500ms", "-c", "4", "--no-tui", "-j")
	if code != 0 && code != 2 { // 2: a latency threshold failed on a busy machine
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, s := range r["hail"].(map[string]any)["steps"].([]any) {
		st := s.(map[string]any)
		d := st["statusCodeDistribution"].(map[string]any)
		if st["name"] == "destroy" && len(d) > 1 {
			t.Errorf("destroy: %v, want only OK", d)
		}
	}
	if srv.Calls("/hail.v1.Items/Create") == 0 || srv.Calls("/hail.v1.Items/Delete") == 0 {
		t.Errorf("server: %d creates, %d deletes", srv.Calls("/hail.v1.Items/Create"), srv.Calls("/hail.v1.Items/Delete"))
	}
}
