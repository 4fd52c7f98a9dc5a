package scenario

import (
	"fmt"
	"strings"
	"testing"
)

// The seed's control plane across two servers: creates over gRPC, queries
// and destroys over REST, one pool between them.
const twoTargets = `targets:
  api: http://127.0.0.1:8080
  rpc: grpc://127.0.0.1:9090
duration: 1s
grpc: {proto: ../grpcserve/hail.proto}
steps:
  - name: create
    target: rpc
    weight: 70
    grpc: {call: hail.v1.Items/Create, data: {name: 'vm-{{counter}}'}}
    capture: {vms: {json: id}}
  - {name: query, target: api, weight: 20, path: '/items/{{pick vms}}'}
  - {name: destroy, target: api, weight: 10, method: DELETE, path: '/items/{{take vms}}'}
  - {name: health, weight: 0.5, url: 'http://127.0.0.1:8081/healthz'}
teardown:
  - {name: cleanup, target: api, method: DELETE, path: '/items/{{take vms}}', repeat: all}
`

func TestTargets(t *testing.T) {
	s := mustParse(t, twoTargets)
	if len(s.Origins) != 3 {
		t.Fatalf("%d origins, want 3", len(s.Origins))
	}
	for i, want := range []struct {
		name, url string
		h2, grpc  bool
		steps     []int
		share     float64
	}{
		{"rpc", "http://127.0.0.1:9090", true, true, []int{0}, 70 / 100.5},
		{"api", "http://127.0.0.1:8080", false, false, []int{1, 2}, 30 / 100.5},
		{"127.0.0.1:8081", "http://127.0.0.1:8081", false, false, []int{3}, 0.5 / 100.5},
	} {
		o := s.Origins[i]
		if o.Name != want.name || o.URL.String() != want.url || o.HTTP2 != want.h2 || o.GRPC != want.grpc ||
			!equalInts(o.Steps(), want.steps) || o.Share < want.share-1e-9 || o.Share > want.share+1e-9 {
			t.Errorf("origin %d: %s %s h2 %v grpc %v steps %v share %v; want %+v", i, o.Name, o.URL, o.HTTP2, o.GRPC, o.Steps(), o.Share, want)
		}
	}
	if got := s.LoadOrigins(); !equalInts(got, []int{0, 1, 2}) {
		t.Errorf("load origins %v", got)
	}
	if s.Teardown[0].OriginOf() != 1 {
		t.Errorf("teardown's origin %d, want 1 (api)", s.Teardown[0].OriginOf())
	}
	// Each origin's virtual users build only its steps, with its Host.
	for i := range 100 {
		s.Pools[0].Put(fmt.Sprint("id-", i), 0)
	}
	for k, wantStep := range map[int]string{0: "create", 1: "query", 2: "health"} {
		v := s.NewOriginRequests(k)(0).(*vu)
		for range 50 {
			req, step, _, ok := v.Next(0)
			if !ok {
				continue // query and destroy yield: the pool is empty
			}
			if s.Steps[step].OriginOf() != k {
				t.Fatalf("origin %d built step %s of origin %d", k, s.Steps[step].Name, s.Steps[step].OriginOf())
			}
			if host := "Host: " + s.Origins[k].URL.Host + "\r\n"; !strings.Contains(string(req), host) {
				t.Fatalf("origin %d: request %q lacks %q", k, req, host)
			}
			if s.Steps[step].Name == wantStep {
				wantStep = ""
			}
		}
		if wantStep != "" {
			t.Errorf("origin %d never built %s", k, wantStep)
		}
	}
	// Each origin's plan: its URL and protocol; the run's is the first's.
	p, err := s.Plan(s.Settings.Schedule())
	if err != nil {
		t.Fatal(err)
	}
	if p.URL.String() != "http://127.0.0.1:9090" || p.HTTPVersion != "2" {
		t.Errorf("run plan %s HTTP %q", p.URL, p.HTTPVersion)
	}
	q, err := s.OriginPlan(p, 1)
	if err != nil || q.URL.String() != "http://127.0.0.1:8080" || q.HTTPVersion != "" || p.URL.String() != "http://127.0.0.1:9090" {
		t.Errorf("api plan %v %q (run plan %v), %v", q.URL, q.HTTPVersion, p.URL, err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// base may name a target; --target replaces a target's URL; a path goes
// under its target's prefix; protocol: h2 makes REST speak HTTP/2.
func TestTargetsBaseAndOverride(t *testing.T) {
	src := `targets:
  api: {url: http://127.0.0.1:8080/v2, protocol: h2}
  other: http://127.0.0.1:8081
base: api
requests: 1
steps:
  - {name: a, path: /items}
  - {name: b, target: other, path: /x}
`
	s, err := Parse("t.yaml", []byte(src), LoadOptions{Targets: map[string]string{"other": "https://10.1.2.3:443"}})
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Origins[0]; o.Name != "api" || !o.HTTP2 {
		t.Errorf("origin 0: %s h2 %v", o.Name, o.HTTP2)
	}
	if o := s.Origins[1]; o.Name != "other" || o.URL.String() != "https://10.1.2.3:443" {
		t.Errorf("origin 1: %s %s", o.Name, o.URL)
	}
	v := s.NewOriginRequests(0)(0).(*vu)
	if req, _ := v.build(0); !strings.HasPrefix(string(req), "GET /v2/items HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n") {
		t.Errorf("a: %q", req)
	}
}

func TestTargetErrors(t *testing.T) {
	const head = "targets:\n  api: http://127.0.0.1:8080\n  rpc: grpc://127.0.0.1:9090\nrequests: 1\n"
	for _, tc := range []struct {
		name, src, want string
		o               LoadOptions
	}{
		{"unknown target", head + "steps:\n  - {name: a, target: apj, path: /}\n", `t.yaml:6:23: a.target: expected a target's name: its targets are api, rpc, or a URL, found "apj"`, LoadOptions{}},
		{"target and url", head + "steps:\n  - {name: a, target: api, url: 'http://x:1/'}\n", `t.yaml:6:23: a: give target (with a path) or a full url, not both`, LoadOptions{}},
		{"unused target", head + "steps:\n  - {name: a, target: api, path: /}\n", `t.yaml:3:3: targets.rpc: no step is sent to it`, LoadOptions{}},
		{"bad protocol", "targets:\n  api: {url: 'http://x:1', protocol: h3}\nsteps:\n  - {name: a, target: api, path: /}\n", `t.yaml:2:38: targets.api.protocol: expected http1 or h2, found "h3"`, LoadOptions{}},
		{"grpc over http1", "targets:\n  api: {url: 'grpc://x:1', protocol: http1}\nsteps:\n  - {name: a, target: api, path: /}\n", `t.yaml:2:38: targets.api.protocol: a grpc:// target speaks HTTP/2: expected h2`, LoadOptions{}},
		{"bad scheme", "targets:\n  api: ftp://x:1\nsteps:\n  - {name: a, target: api, path: /}\n", `t.yaml:2:8: targets.api: expected an http:// or https:// URL, found scheme "ftp": expected http://, https://, grpc:// (h2c) or grpcs://`, LoadOptions{}},
		{"flow across targets", head + "steps:\n  - {name: a, target: api, path: /, weight: 0}\n  - {name: b, target: rpc, path: /, weight: 0}\nflows:\n  - {name: f, steps: [a, b]}\n",
			`t.yaml:9:5: flows.f: its steps go to api and rpc: a flow is one virtual user on one connection, so its steps share one target`, LoadOptions{}},
		{"last across targets", head + "steps:\n  - {name: a, target: api, path: /, capture: {tok: {json: t}}}\n  - {name: b, target: rpc, path: '/{{last tok}}'}\n",
			`t.yaml:7:5: b: {{last tok}} reads what this virtual user captured, but no step sent to rpc captures tok`, LoadOptions{}},
		{"header check on h2", head + "steps:\n  - {name: a, target: api, path: /}\n  - {name: b, target: rpc, path: /, expect: {header: {X-A: b}}}\n",
			`t.yaml:7:55: b.expect.header: header checks need HTTP/1.1, but its target, rpc, speaks HTTP/2`, LoadOptions{}},
		{"streams on http1", "targets:\n  api: {url: 'http://x:1', streams: 8}\nsteps:\n  - {name: a, target: api, path: /}\n",
			`t.yaml:2:37: targets.api.streams: several streams per connection need HTTP/2, and api speaks HTTP/1.1: expected protocol: h2`, LoadOptions{}},
		{"streams without h2", "base: http://x:1\nstreams: 4\nsteps:\n  - {name: a, path: /}\n",
			`t.yaml:2:10: streams: several streams per connection need HTTP/2, and every target of this file speaks HTTP/1.1`, LoadOptions{}},
		{"streams zero", head + "streams: 0\nsteps:\n  - {name: a, target: api, path: /}\n  - {name: b, target: rpc, path: /}\n", `t.yaml:5:10: streams: expected`, LoadOptions{}},
		{"--target unknown", head + "steps:\n  - {name: a, target: api, path: /}\n  - {name: b, target: rpc, path: /}\n", `--target web=…: the file has no target web: its targets are api, rpc`,
			LoadOptions{Targets: map[string]string{"web": "http://x:1"}}},
		{"--target bad", head + "steps:\n  - {name: a, target: api, path: /}\n  - {name: b, target: rpc, path: /}\n", `--target api=x:1: expected a URL such as http://127.0.0.1:8080, found "x:1" (no scheme)`,
			LoadOptions{Targets: map[string]string{"api": "x:1"}}},
	} {
		_, err := Parse("t.yaml", []byte(tc.src), tc.o)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.want)
		}
	}
	// Each target needs a connection of its own.
	s := mustParse(t, head+"connections: 1\nsteps:\n  - {name: a, target: api, path: /}\n  - {name: b, target: rpc, path: /}\n")
	if _, err := s.Plan(s.Settings.Schedule()); err == nil || !strings.Contains(err.Error(), "1 connections for 2 targets") {
		t.Errorf("1 connection for 2 targets: %v", err)
	}
}

// streams: (the file's, a target's, -p's SetStreams) reaches each HTTP/2
// origin's plan; HTTP/1.1 origins keep one request per connection.
func TestStreams(t *testing.T) {
	src := "targets:\n  api: http://127.0.0.1:8080\n  rpc: {url: 'grpc://127.0.0.1:9090', streams: 16}\n  edge: {url: 'http://127.0.0.1:8081', protocol: h2}\n" +
		"requests: 10\nstreams: 4\nsteps:\n  - {name: a, target: api, path: /}\n  - {name: b, target: rpc, path: /}\n  - {name: c, target: edge, path: /}\n"
	s := mustParse(t, src)
	p, err := s.Plan(s.Settings.Schedule())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"api": 0, "rpc": 16, "edge": 4}
	check := func(when string) {
		t.Helper()
		for k, o := range s.Origins {
			q, err := s.OriginPlan(p, k)
			if err != nil {
				t.Fatal(err)
			}
			if q.Streams != want[o.Name] || s.OriginStreams(k) != want[o.Name] {
				t.Errorf("%s: origin %s: plan streams %d, OriginStreams %d, want %d", when, o.Name, q.Streams, s.OriginStreams(k), want[o.Name])
			}
		}
	}
	check("file")
	if err := s.SetStreams(32); err != nil {
		t.Fatal(err)
	}
	want = map[string]int{"api": 0, "rpc": 32, "edge": 32}
	check("-p 32")
	h1 := mustParse(t, "base: http://127.0.0.1:8080\nrequests: 1\nsteps:\n  - {name: a, path: /}\n")
	if err := h1.SetStreams(2); err == nil || !strings.Contains(err.Error(), "-p 2: several streams per connection need HTTP/2") {
		t.Errorf("-p on an HTTP/1.1 file: %v", err)
	}
	if err := h1.SetStreams(1); err != nil {
		t.Errorf("-p 1 on an HTTP/1.1 file: %v", err)
	}
}
