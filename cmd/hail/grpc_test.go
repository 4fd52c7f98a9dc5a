package main

import (
	"crypto/tls"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/internal/h3serve/certtest"
)

// startGRPCServer starts a grpc-go server (hail serve --grpc's services) on a
// free loopback port (or cfg.Addr) for the test.
func startGRPCServer(t *testing.T, cfg grpcserve.Config) (string, *grpcserve.Server) {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s, err := grpcserve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(s.Close)
	return a.String(), s
}

// grpcJSON runs hail grpc with -j and decodes the result.
func grpcJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errOut, code := hail(t, append([]string{"grpc", "--no-tui", "-j"}, args...)...)
	if code != 0 && code != exitNoSuccess { // a run with no successful call writes its report too
		t.Fatalf("hail grpc %v: exit %d: %s", args, code, errOut)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return r
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// Every kind of call: the server's own count of calls and messages equals
// -n and hail's counts, exactly.
func TestGRPCExactCounts(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	const n = 400
	for _, tc := range []struct {
		call, data       string
		sent, received   int64 // messages per call
		serverIn, srvOut int64 // the server's messages per call
	}{
		{"hail.v1.Target/Echo", `{"payload":"hi"}`, 1, 1, 1, 1},
		{"hail.v1.Target/Collect", `[{"payload":"a"},{"payload":"b"},{"payload":"c"}]`, 3, 1, 3, 1},
		{"hail.v1.Target/Expand", `{"count":4}`, 1, 4, 1, 4},
		{"hail.v1.Target/Chat", `[{"payload":"a"},{"payload":"b"}]`, 2, 2, 2, 2},
	} {
		t.Run(tc.call, func(t *testing.T) {
			srv.Reset()
			r := grpcJSON(t, "--insecure", "--call", tc.call, "-d", tc.data, "-n", "400", "-c", "2", "-p", "4", addr)
			if got := srv.Calls("/" + tc.call); got != n {
				t.Errorf("server counted %d calls, want %d", got, n)
			}
			in, out := srv.Messages()
			if in != n*tc.serverIn || out != n*tc.srvOut {
				t.Errorf("server messages in %d out %d, want %d %d", in, out, n*tc.serverIn, n*tc.srvOut)
			}
			if ok := num(r["statusCodeDistribution"].(map[string]any)["OK"]); ok != n {
				t.Errorf("statusCodeDistribution %v, want OK %d", r["statusCodeDistribution"], n)
			}
			g := r["hail"].(map[string]any)["grpc"].(map[string]any)
			if num(g["calls"]) != n || num(g["messages_sent"]) != n*tc.sent || num(g["messages_received"]) != n*tc.received {
				t.Errorf("hail.grpc %v, want %d calls, %d sent, %d received", g, n, n*tc.sent, n*tc.received)
			}
			if g["call"] != tc.call {
				t.Errorf("hail.grpc.call %v", g["call"])
			}
		})
	}
}

// gRPC status codes are reported by name; the status mix's shares show.
func TestGRPCStatusNames(t *testing.T) {
	t.Parallel()
	addr, _ := startGRPCServer(t, grpcserve.Config{})
	r := grpcJSON(t, "--insecure", "--call", "hail.v1.Target.Echo", "-d", `{"status":"Unavailable:30,NOT_FOUND:20"}`, "-n", "600", "-c", "2", addr)
	dist := r["statusCodeDistribution"].(map[string]any)
	var total int64
	for k, v := range dist {
		if k != "OK" && k != "Unavailable" && k != "NotFound" {
			t.Errorf("unexpected status %q", k)
		}
		total += num(v)
	}
	if total != 600 || num(dist["Unavailable"]) < 120 || num(dist["NotFound"]) < 60 || num(dist["OK"]) < 240 {
		t.Errorf("statusCodeDistribution %v: want 600 calls, about 30%% Unavailable, 20%% NotFound", dist)
	}
	if len(r["errorDistribution"].(map[string]any)) != 0 {
		t.Errorf("statuses are not errors: %v", r["errorDistribution"])
	}
	if rate := r["summary"].(map[string]any)["successRate"].(float64); rate != 1 {
		t.Errorf("successRate %v: every call got a response", rate)
	}
}

// Without reflection the schema comes from --proto or --protoset; without
// either, one line says which flag to add, and no call is made.
func TestGRPCProtoAndProtoset(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{NoReflection: true})
	dir := t.TempDir()
	protoDir := filepath.Join(dir, "protos", "hail", "v1")
	if err := os.MkdirAll(protoDir, 0o755); err != nil {
		t.Fatal(err)
	}
	protoFile := filepath.Join(protoDir, "hail.proto")
	if err := os.WriteFile(protoFile, grpcserve.Proto(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := hail(t, "grpc", "--insecure", "--call", "hail.v1.Target/Echo", "-n", "10", addr)
	if code != 1 || !strings.Contains(errOut, "does not offer server reflection") || !strings.Contains(errOut, "--proto") {
		t.Errorf("no reflection, no --proto: exit %d, %q", code, errOut)
	}
	if srv.Calls("/hail.v1.Target/Echo") != 0 {
		t.Errorf("calls were made")
	}
	r := grpcJSON(t, "--insecure", "--proto", protoFile, "--call", "hail.v1.Target/Echo", "-d", `{"payload":"x"}`, "-n", "50", addr)
	if num(r["statusCodeDistribution"].(map[string]any)["OK"]) != 50 || srv.Calls("/hail.v1.Target/Echo") != 50 {
		t.Errorf("--proto: %v, server %d", r["statusCodeDistribution"], srv.Calls("/hail.v1.Target/Echo"))
	}
	// -i names the import root: the file is hail/v1/hail.proto under it.
	grpcJSON(t, "--insecure", "--proto", protoFile, "-i", filepath.Join(dir, "protos"), "--call", "hail.v1.Items/Create", "-n", "5", addr)

	src, err := grpccall.FromProto([]string{protoFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := src.Service("hail.v1.Target")
	if err != nil {
		t.Fatal(err)
	}
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(svc.ParentFile())}}
	b, _ := proto.Marshal(set)
	protoset := filepath.Join(dir, "hail.protoset")
	os.WriteFile(protoset, b, 0o644)
	srv.Reset()
	r = grpcJSON(t, "--insecure", "--protoset", protoset, "--call", "hail.v1.Target/Expand", "-d", `{"count":2}`, "-n", "20", addr)
	if g := r["hail"].(map[string]any)["grpc"].(map[string]any); num(g["messages_received"]) != 40 || srv.Calls("/hail.v1.Target/Expand") != 20 {
		t.Errorf("--protoset: %v, server %d", g, srv.Calls("/hail.v1.Target/Expand"))
	}
}

// Metadata reaches the server on every call, templated values expanded
// per call.
func TestGRPCMetadata(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	grpcJSON(t, "--insecure", "--call", "hail.v1.Target/Echo", "-m", `{"x-tenant":"blue","Authorization":"Bearer t"}`, "-n", "30", addr)
	if got := srv.Metadata("x-tenant"); got["blue"] != 30 || len(got) != 1 {
		t.Errorf("x-tenant at the server: %v, want blue×30", got)
	}
	if got := srv.Metadata("authorization"); got["Bearer t"] != 30 {
		t.Errorf("authorization at the server: %v", got)
	}
	r := grpcJSON(t, "--insecure", "--call", "hail.v1.Target/Echo", "-m", `{"x-req":"r{{counter}}"}`, "-d", `{"payload":"p{{counter}}"}`, "-n", "40", addr)
	if got := srv.Metadata("x-req"); len(got) != 40 {
		t.Errorf("templated metadata: %d distinct values at the server, want 40", len(got))
	}
	cfg := r["hail"].(map[string]any)["config"].(map[string]any)
	if md := cfg["metadata"].(map[string]any); md["x-req"] != "r{{counter}}" || cfg["templated"] != true {
		t.Errorf("config: %v", cfg)
	}
	r = grpcJSON(t, "--insecure", "--call", "hail.v1.Target/Echo", "-m", `{"authorization":"Bearer secret"}`, "-n", "1", addr)
	if md := r["hail"].(map[string]any)["config"].(map[string]any)["metadata"].(map[string]any); md["authorization"] != "[redacted]" {
		t.Errorf("authorization not redacted in the report: %v", md)
	}
}

// A call past its deadline (-t, sent as grpc-timeout) is DeadlineExceeded,
// and its latency is the deadline, not the server's delay.
func TestGRPCDeadline(t *testing.T) {
	t.Parallel()
	addr, _ := startGRPCServer(t, grpcserve.Config{})
	r := grpcJSON(t, "--insecure", "--call", "hail.v1.Target/Echo", "-d", `{"delay":"2s"}`, "-t", "100ms", "-n", "8", "-c", "2", "-p", "4", addr)
	if d := r["statusCodeDistribution"].(map[string]any); num(d["DeadlineExceeded"]) != 8 {
		t.Errorf("statusCodeDistribution %v, want DeadlineExceeded×8", d)
	}
	if slow := r["summary"].(map[string]any)["slowest"].(float64); slow < 0.09 || slow > 1.5 {
		t.Errorf("slowest %v s: want about the 100ms deadline", slow)
	}
}

// Bad input: one line, exit 1, nothing on stdout, no call made.
func TestGRPCBadInput(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	pki := certtest.New(t, "localhost", "localhost", "127.0.0.1")
	tlsAddr, tlsSrv := startGRPCServer(t, grpcserve.Config{TLS: &tls.Config{Certificates: []tls.Certificate{pki.Server}, NextProtos: []string{"h2"}}})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--insecure", "--call", "hail.v1.Nope/Echo", addr}, "has no service hail.v1.Nope; it has grpc.health.v1.Health"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Nope", addr}, "its methods are Chat, Collect, Echo, Expand, Stats"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-d", `{"payload":7}`, addr}, `payload: expected a string (string), found the number 7`},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-d", `{"nme":"x"}`, addr}, `has no field "nme"; its fields are payload, delay`},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-d", `[{"count":1},{"count":"many"}]`, addr}, `-d [1]: count: expected an integer`},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-d", `{"payload":`, addr}, "not valid JSON"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-d", `{"payload":"{{nope}}"}`, addr}, "-d:"},
		{[]string{"--insecure", "--call", "Echo", addr}, "expected package.Service/Method"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-m", `{"a":1}`, addr}, "-m: expected a JSON object of strings"},
		{[]string{"--insecure", "--cacert", pki.CAFile, "--call", "hail.v1.Target/Echo", addr}, "--insecure is plaintext"},
		{[]string{"--call", "hail.v1.Target/Echo", addr}, "answered in plaintext, not TLS: add --insecure"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", tlsAddr}, "speaks TLS: drop --insecure"},
		{[]string{"--call", "hail.v1.Target/Echo", tlsAddr}, "--cacert"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "127.0.0.1"}, "expected HOST:PORT"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "--stream-call-count", "3", addr}, "--stream-call-count 3"},
		// Files are read within --body-file-limit, never without bound.
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-D", "/dev/zero", "--body-file-limit", "1KiB", addr}, "-D /dev/zero: more than the 1 KiB limit"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-M", "/dev/zero", "--body-file-limit", "1KiB", addr}, "-M /dev/zero: more than the 1 KiB limit"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-B", "/dev/zero", "--body-file-limit", "1KiB", addr}, "-B /dev/zero: more than the 1 KiB limit"},
		{[]string{"--protoset", "/dev/zero", "--body-file-limit", "1KiB", "--insecure", "--call", "hail.v1.Target/Echo", addr}, "--protoset /dev/zero: more than the 1 KiB limit"},
		{[]string{"--insecure", "--call", "hail.v1.Target/Echo", "-D", "/nonexistent.json", addr}, "-D /nonexistent.json: no such file or directory"},
	} {
		out, errOut, code := hailIn(t, append([]string{"grpc"}, tc.args...)...)
		if code != 1 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("hail grpc %v: exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if n := srv.Calls("/hail.v1.Target/Echo") + tlsSrv.Calls("/hail.v1.Target/Echo"); n != 0 {
		t.Errorf("bad input made %d calls", n)
	}
	// The TLS server works with its CA, verified, by reflection over TLS.
	r := grpcJSON(t, "--cacert", pki.CAFile, "--call", "hail.v1.Target/Echo", "-n", "10", tlsAddr)
	if num(r["statusCodeDistribution"].(map[string]any)["OK"]) != 10 || r["hail"].(map[string]any)["protocol"] != "h2" {
		t.Errorf("TLS: %v %v", r["statusCodeDistribution"], r["hail"].(map[string]any)["protocol"])
	}
}

// gRPC results go through report, compare and merge as HTTP ones do: the
// status names survive, counts add exactly, and the HTML shows them.
func TestGRPCResultsToolkit(t *testing.T) {
	t.Parallel()
	addr, _ := startGRPCServer(t, grpcserve.Config{})
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, f := range []string{a, b} {
		if _, errOut, code := hail(t, "grpc", "--no-tui", "-j", "-o", f, "--insecure", "--call", "hail.v1.Target/Echo",
			"-d", `{"status":"Unavailable:50"}`, "-n", "100", "-c", "2", addr); code != 0 {
			t.Fatal(errOut)
		}
	}
	m := filepath.Join(dir, "m.json")
	if _, errOut, code := hailIn(t, "merge", a, b, "-o", m); code != 0 {
		t.Fatal(errOut)
	}
	var r map[string]any
	raw, _ := os.ReadFile(m)
	json.Unmarshal(raw, &r)
	d := r["statusCodeDistribution"].(map[string]any)
	if num(d["OK"])+num(d["Unavailable"]) != 200 || num(d["Unavailable"]) == 0 {
		t.Errorf("merged statusCodeDistribution %v", d)
	}
	if g := r["hail"].(map[string]any)["grpc"].(map[string]any); num(g["calls"]) != 200 || num(g["messages_received"]) != num(d["OK"]) {
		t.Errorf("merged hail.grpc %v", g)
	}
	out, errOut, code := hailIn(t, "compare", a, b)
	if code != 0 || !strings.Contains(out, "p99") {
		t.Errorf("compare: exit %d %s %s", code, out, errOut)
	}
	html, errOut, code := hailIn(t, "report", m, "--output-format", "html")
	if code != 0 || !strings.Contains(html, "status OK") || !strings.Contains(html, "status Unavailable") {
		t.Errorf("html: exit %d, %s; status names missing", code, errOut)
	}
	csv, errOut, code := hail(t, "grpc", "--no-tui", "--output-format", "csv", "--insecure", "--call", "hail.v1.Target/Echo", "-n", "30", addr)
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); code != 0 || len(lines) != 31 || !strings.Contains(lines[1], ",1000,") {
		t.Errorf("per-call CSV: exit %d %s, %d lines, first row %q (status 1000 = OK)", code, errOut, len(lines), lines[min(1, len(lines)-1)])
	}
	text, _, _ := hailIn(t, "report", a)
	if !strings.Contains(text, "[Unavailable]") || !strings.Contains(text, "gRPC:\thail.v1.Target/Echo (unary): 100 calls") {
		t.Errorf("text report:\n%s", text)
	}
}

// The open model: calls at their intended times, the same verdict and
// schedule-lag accounting as HTTP.
func TestGRPCOpenModel(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	r := grpcJSON(t, "--insecure", "--call", "grpc.health.v1.Health/Check", "-q", "200", "-z", "1s", "-c", "2", addr)
	h := r["hail"].(map[string]any)
	calls := srv.Calls("/grpc.health.v1.Health/Check")
	// 200 intended; those a loaded machine could not send in time are
	// unsent, and one still in flight at the deadline is aborted.
	c := h["counts"].(map[string]any)
	if h["model"] != "open" || num(c["intended"]) < 199 || num(c["intended"]) > 201 || num(c["sent"]) != calls || calls < 100 ||
		num(r["statusCodeDistribution"].(map[string]any)["OK"])+num(c["aborted"]) != calls {
		t.Errorf("model %v, counts %v, %d calls at the server, report %v", h["model"], c, calls, r["statusCodeDistribution"])
	}
	if lag := h["schedule_lag"].(map[string]any); num(lag["samples"]) != calls {
		t.Errorf("schedule lag samples %v, want one per call (%d)", lag["samples"], calls)
	}
}

// targetMessages encodes each JSON message as the input of method of the
// built-in gRPC target, its schema read from the target's .proto file.
func targetMessages(t *testing.T, method string, messages ...string) [][]byte {
	t.Helper()
	pf := filepath.Join(t.TempDir(), "hail.proto")
	if err := os.WriteFile(pf, grpcserve.Proto(), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := grpccall.FromProto([]string{pf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := grpccall.Resolve(src, method)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, js := range messages {
		b, err := grpccall.Encode(m.Desc.Input(), []byte(js))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// -B holding one message is framed where it was read (or mapped: a large
// file is never copied) and sent whole: the server decodes it — its status
// field answers every call NotFound. An empty -B file is an empty message,
// not none: every call OK.
func TestGRPCBinaryOneMessage(t *testing.T) {
	t.Parallel()
	addr, _ := startGRPCServer(t, grpcserve.Config{})
	dir := t.TempDir()
	one := targetMessages(t, "hail.v1.Target/Echo", `{"payload":"one","status":"NotFound"}`)[0]
	for _, tc := range []struct {
		name   string
		file   []byte
		status string
	}{{"one", one, "NotFound"}, {"empty", nil, "OK"}} {
		bf := filepath.Join(dir, tc.name+".bin")
		os.WriteFile(bf, tc.file, 0o644)
		r := grpcJSON(t, "--insecure", "--call", "hail.v1.Target/Echo", "-B", bf, "-n", "20", "-c", "2", addr)
		if got := num(r["statusCodeDistribution"].(map[string]any)[tc.status]); got != 20 {
			t.Errorf("-B %s: statuses %v, want %s for all 20 calls", tc.name, r["statusCodeDistribution"], tc.status)
		}
		if g := r["hail"].(map[string]any)["grpc"].(map[string]any); num(g["messages_sent"]) != 20 {
			t.Errorf("-B %s: %v, want one message per call", tc.name, g)
		}
	}
}

// -B takes serialized messages (length-delimited, as ghz), -d @ reads
// stdin, -x bounds -n by time.
func TestGRPCBinaryStdinMaxDuration(t *testing.T) {
	t.Parallel()
	addr, srv := startGRPCServer(t, grpcserve.Config{})
	var bin []byte
	for _, b := range targetMessages(t, "hail.v1.Target/Chat", `{"payload":"a"}`, `{"payload":"b"}`, `{"payload":"c"}`) {
		bin = append(append(bin, byte(len(b))), b...)
	}
	bf := filepath.Join(t.TempDir(), "msgs.bin")
	os.WriteFile(bf, bin, 0o644)
	r := grpcJSON(t, "--insecure", "--call", "hail.v1.Target/Chat", "-B", bf, "-n", "20", addr)
	if g := r["hail"].(map[string]any)["grpc"].(map[string]any); num(g["messages_sent"]) != 60 || num(g["messages_received"]) != 60 {
		t.Errorf("-B: %v, want 3 messages each way per call", g)
	}
	cmd := exec.Command(hailBin, "grpc", "--no-tui", "-j", "--insecure", "--call", "hail.v1.Target/Expand", "-d", "@", "-n", "10", addr)
	cmd.Stdin = strings.NewReader(`{"count":5}`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("-d @: %v", err)
	}
	json.Unmarshal(out, &r)
	if g := r["hail"].(map[string]any)["grpc"].(map[string]any); num(g["messages_received"]) != 50 {
		t.Errorf("-d @: %v", g)
	}
	srv.Reset()
	r = grpcJSON(t, "--insecure", "--call", "hail.v1.Target/Echo", "-d", `{"delay":"50ms"}`, "-n", "1000", "-x", "300ms", "-c", "1", addr)
	if n := num(r["hail"].(map[string]any)["counts"].(map[string]any)["requests"]); n < 2 || n > 10 {
		t.Errorf("-x 300ms with 50ms calls on one connection: %d calls", n)
	}
}

// Calls go where hail's transports take them: here a unix socket, with
// HOST:PORT naming only the :authority.
func TestGRPCUnixSocket(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "g.sock")
	_, srv := startGRPCServer(t, grpcserve.Config{Addr: "unix:" + sock})
	r := grpcJSON(t, "--insecure", "--unix-socket", sock, "--call", "hail.v1.Target/Echo", "-n", "25", "vm.local:9090")
	if num(r["statusCodeDistribution"].(map[string]any)["OK"]) != 25 || srv.Calls("/hail.v1.Target/Echo") != 25 {
		t.Errorf("unix socket: %v, server %d", r["statusCodeDistribution"], srv.Calls("/hail.v1.Target/Echo"))
	}
	if tr := r["hail"].(map[string]any)["transport"]; tr != "unix" {
		t.Errorf("transport %v", tr)
	}
}
