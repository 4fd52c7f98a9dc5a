package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/testtier"
	"github.com/hail-loadgen/hail/result"
)

// controlPlane is a VM store with two faces, REST (HTTP/1.1) and gRPC, as
// a real control plane has: a VM created on one is there on the other.
// It counts every request each face receives, by method, the connections
// each accepted, and the requests that named an id it never made.
type controlPlane struct {
	mu      sync.Mutex
	vms     map[string]string // live: id → how it was made ("rest", "grpc")
	made    map[string]string // every id ever made, and how
	next    int
	rest    counter
	rpc     counter
	never   atomic.Int64 // requests for an id never made
	crossed atomic.Int64 // requests for an id made on the other face
}

type counter struct {
	mu    sync.Mutex
	calls map[string]int64
	conns atomic.Int64
}

func (c *counter) add(method string) {
	c.mu.Lock()
	c.calls[method]++
	c.mu.Unlock()
}

// snapshot returns the calls by method so far, and their total.
func (c *counter) snapshot() (map[string]int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int64{}
	var n int64
	for k, v := range c.calls {
		out[k] = v
		n += v
	}
	return out, n
}

func (cp *controlPlane) create(via string) string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.next++
	id := fmt.Sprintf("%s-%06d", via, cp.next)
	cp.vms[id], cp.made[id] = via, via
	return id
}

// find looks id up (removing it when del), on face via.
func (cp *controlPlane) find(id, via string, del bool) bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	made, ever := cp.made[id]
	switch {
	case !ever:
		cp.never.Add(1)
	case made != via:
		cp.crossed.Add(1)
	}
	_, ok := cp.vms[id]
	if del {
		delete(cp.vms, id)
	}
	return ok
}

// startControlPlane starts both faces on loopback and returns their URLs.
func startControlPlane(t *testing.T, proto string) (cp *controlPlane, restURL, rpcURL string) {
	t.Helper()
	cp = &controlPlane{vms: map[string]string{}, made: map[string]string{}}
	cp.rest.calls, cp.rpc.calls = map[string]int64{}, map[string]int64{}
	rest := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cp.rest.add(r.Method)
		id, _ := strings.CutPrefix(r.URL.Path, "/vms/")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/vms":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"id":%q}`, cp.create("rest"))
		case r.Method == http.MethodGet && cp.find(id, "rest", false):
			fmt.Fprintf(w, `{"id":%q}`, id)
		case r.Method == http.MethodDelete && cp.find(id, "rest", true):
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	rest.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			cp.rest.conns.Add(1)
		}
	}
	rest.Start()
	t.Cleanup(rest.Close)

	src, err := grpccall.FromProto([]string{proto}, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := src.Service("vm.v1.VMs")
	if err != nil {
		t.Fatal(err)
	}
	md := svc.Methods()
	vm := md.ByName("Get").Output()
	reply := func(id string) *dynamicpb.Message {
		m := dynamicpb.NewMessage(vm)
		m.Set(vm.Fields().ByName("id"), protoreflect.ValueOfString(id))
		return m
	}
	unary := func(name string, fn func(*dynamicpb.Message) (any, error)) grpc.MethodDesc {
		in := md.ByName(protoreflect.Name(name)).Input()
		return grpc.MethodDesc{MethodName: name, Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			req := dynamicpb.NewMessage(in)
			if err := dec(req); err != nil {
				return nil, err
			}
			cp.rpc.add(name)
			return fn(req)
		}}
	}
	idOf := func(m *dynamicpb.Message) string { return m.Get(m.Descriptor().Fields().ByName("id")).String() }
	gs := grpc.NewServer()
	gs.RegisterService(&grpc.ServiceDesc{ServiceName: "vm.v1.VMs", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{
		unary("Create", func(*dynamicpb.Message) (any, error) { return reply(cp.create("grpc")), nil }),
		unary("Get", func(m *dynamicpb.Message) (any, error) {
			if !cp.find(idOf(m), "grpc", false) {
				return nil, status.Error(codes.NotFound, "no such VM")
			}
			return reply(idOf(m)), nil
		}),
		unary("Delete", func(m *dynamicpb.Message) (any, error) {
			if !cp.find(idOf(m), "grpc", true) {
				return nil, status.Error(codes.NotFound, "no such VM")
			}
			return dynamicpb.NewMessage(md.ByName("Delete").Output()), nil
		}),
	}}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(countingListener{ln, &cp.rpc.conns})
	t.Cleanup(gs.Stop)
	return cp, rest.URL, "grpc://" + ln.Addr().String()
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// seed is the seed workload across the two faces: VMs created over gRPC
// (70%), queried over REST (20%), destroyed over gRPC (10%); the setup
// creates over REST, the teardown deletes over REST.
const seed = `
targets:
  rest: REST
  rpc: RPC
grpc: {proto: PROTO}
setup:
  - {name: seed, target: rest, method: POST, path: /vms, body_json: {name: 'seed-{{counter seed}}'}, capture: {vms: {json: id}}, expect: {status: 201}, repeat: 50, concurrency: 5}
steps:
  - name: create
    target: rpc
    weight: 70
    grpc: {call: vm.v1.VMs/Create, data: {name: 'vm-{{counter}}', cpus: '{{int 1 8}}'}}
    capture: {vms: {json: id}}
    expect: {status: OK}
  - {name: query, target: rest, weight: 20, path: '/vms/{{pick vms}}', expect: {status: [200, 404]}}
  - {name: destroy, target: rpc, weight: 10, grpc: {call: vm.v1.VMs/Delete, data: {id: '{{take vms}}'}}, expect: {status: OK}}
teardown:
  - {name: cleanup, target: rest, method: DELETE, path: '/vms/{{take vms}}', expect: {status: 204}, repeat: all}
`

// The seed scenario across a REST server and a gRPC server of one store,
// in one run, in both models and on each HTTP/1.1 engine: each origin's
// counts are exactly what its server counted; ids created over one
// protocol are read (and deleted) over the other; no request names an id
// that was never made; the per-stage results add up to the run's; the
// setup and teardown run with their concurrency.
func TestSeedAcrossTwoOrigins(t *testing.T) {
	t.Parallel()
	proto, err := filepath.Abs("testdata/vm.proto")
	if err != nil {
		t.Fatal(err)
	}
	for _, eng := range engines(t) {
		for _, model := range []string{"open", "closed"} {
			t.Run(eng+"/"+model, func(t *testing.T) {
				t.Parallel()
				cp, restURL, rpcURL := startControlPlane(t, proto)
				src := strings.NewReplacer("REST", restURL, "RPC", rpcURL, "PROTO", proto).Replace(seed)
				if model == "open" {
					// -n ends it (the second stage is long enough for a slow machine).
					src += "requests: 2000\nconnections: 16\nstages:\n  - {duration: 300ms, rate: 4000, ramp: step}\n  - {duration: 20s, rate: 4000, ramp: step}\n"
				} else {
					// Each virtual user pauses 10 ms after a request: ~1,000
					// requests, not the thousands (and as many VMs to tear
					// down) of a run flat out.
					src += "think: 10ms\nstages:\n  - {duration: 500ms, connections: 12}\n  - {duration: 700ms, connections: 12}\n"
				}
				s, err := scenario.Parse("seed.yaml", []byte(src), scenario.LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				s.Settings.Engine = eng
				sched := s.Settings.Schedule()
				p, err := s.Plan(sched)
				if err != nil {
					t.Fatal(err)
				}
				p.WaitOngoing = true // a create aborted at the end would leave a VM no pool knows
				ctx := context.Background()
				tg := mustTargets(t, s, p)
				setup, err := Setup(ctx, s, tg, PhaseOptions{})
				if err != nil {
					t.Fatal(err)
				}
				_, restSetup := cp.rest.snapshot()
				if restSetup != 50 || setup.Steps[0].Counts.Requests != 50 {
					t.Fatalf("setup: the REST server saw %d requests, the report %d; want 50", restSetup, setup.Steps[0].Counts.Requests)
				}
				restConns0, rpcConns0 := cp.rest.conns.Load(), cp.rpc.conns.Load()
				w := Workload(s, sched)
				d := tg.Route(w)
				if d != nil || len(w.Origins) != 2 {
					t.Fatalf("the load's workload has %d origins (dialer %v), want 2", len(w.Origins), d)
				}
				done := turn(p)
				res, err := run.Run(ctx, p, run.Options{Workload: w})
				done()
				if err != nil {
					t.Fatal(err)
				}
				s.Annotate(res)
				rest, restN := cp.rest.snapshot()
				rpc, rpcN := cp.rpc.snapshot()
				restN -= restSetup
				rest["POST"] -= restSetup

				origins := map[string]result.OriginResult{}
				for _, o := range res.Hail.Origins {
					origins[o.Name] = o
				}
				ro, go_ := origins["rest"], origins["rpc"]
				if len(res.Hail.Origins) != 2 || ro.Counts.Requests != restN || go_.Counts.Requests != rpcN {
					t.Fatalf("origins %d: rest %d requests (server %d), rpc %d (server %d)", len(res.Hail.Origins), ro.Counts.Requests, restN, go_.Counts.Requests, rpcN)
				}
				if ro.Counts.Requests+go_.Counts.Requests != res.Hail.Counts.Requests || res.Hail.Counts.Errors != res.Hail.Counts.Aborted {
					t.Errorf("origins %d + %d requests, the run %d (errors %v)", ro.Counts.Requests, go_.Counts.Requests, res.Hail.Counts.Requests, res.ErrorDistribution)
				}
				// A request belongs to its origin and to its stage: the stages
				// add up to the run as the origins do, status by status.
				var staged int64
				codes := map[string]int64{}
				for _, sg := range res.Hail.Stages {
					staged += sg.Counts.Requests
					for k, n := range sg.StatusCodeDistribution {
						codes[k] += n
					}
				}
				if len(res.Hail.Stages) != 2 || res.Hail.Stages[0].Counts.Requests == 0 || res.Hail.Stages[1].Counts.Requests == 0 ||
					staged != res.Hail.Counts.Requests || fmt.Sprint(codes) != fmt.Sprint(res.StatusCodeDistribution) {
					t.Errorf("%d stages hold %d requests (%v), the run %d (%v)", len(res.Hail.Stages), staged, codes, res.Hail.Counts.Requests, res.StatusCodeDistribution)
				}
				steps := map[string]int64{}
				for _, st := range res.Hail.Steps {
					steps[st.Name] = st.Counts.Requests
				}
				if steps["create"] != rpc["Create"] || steps["destroy"] != rpc["Delete"] || steps["query"] != rest["GET"] || rest["POST"] != 0 || rest["DELETE"] != 0 || rpc["Get"] != 0 {
					t.Errorf("steps %v; the REST server saw %v, the gRPC server %v", steps, rest, rpc)
				}
				if model == "open" {
					// The schedule deals its 2,000 requests 80/20 exactly (Split).
					if restN+rpcN != 2000 || rpcN < 1598 || rpcN > 1602 {
						t.Errorf("open model: %d gRPC and %d REST requests, want 2000 dealt 80/20", rpcN, restN)
					}
				}
				if ro.Protocol != "HTTP/1.1" || go_.Protocol != "h2c" || go_.Engine != "h2" {
					t.Errorf("rest %s on %s, rpc %s on %s: want HTTP/1.1 and h2c", ro.Protocol, ro.Engine, go_.Protocol, go_.Engine)
				}
				// The open model deals the pool once, by share; the closed one
				// re-deals the run's connections as latencies move (each origin's
				// is the most it held at once).
				if c := ro.Connections + go_.Connections; model == "open" && c != p.Connections ||
					model == "closed" && (ro.Connections < 1 || go_.Connections < 1 || ro.Connections >= p.Connections || go_.Connections >= p.Connections) {
					t.Errorf("%s model: rest held %d connections, rpc %d, of %d", model, ro.Connections, go_.Connections, p.Connections)
				}
				if n := cp.rest.conns.Load() - restConns0; n != ro.Connects || n == 0 {
					t.Errorf("the REST server accepted %d connections, hail counted %d", n, ro.Connects)
				}
				if n := cp.rpc.conns.Load() - rpcConns0; n != go_.Connects || n == 0 {
					t.Errorf("the gRPC server accepted %d connections, hail counted %d", n, go_.Connects)
				}
				if ro.Verdict.Bottleneck == "" || go_.Verdict.Bottleneck == "" || go_.GRPC == nil || go_.GRPC.Calls != rpcN {
					t.Errorf("verdicts %q %q, rpc gRPC %+v", ro.Verdict.Bottleneck, go_.Verdict.Bottleneck, go_.GRPC)
				}
				td, err := Teardown(ctx, s, tg, PhaseOptions{})
				if err != nil || td.Failed != "" {
					t.Fatalf("teardown: %v %+v", err, td)
				}
				if cp.never.Load() != 0 {
					t.Errorf("%d requests named an id that was never made", cp.never.Load())
				}
				if cp.crossed.Load() == 0 || rest["GET"] == 0 {
					t.Errorf("no id was used across the faces (%d crossed)", cp.crossed.Load())
				}
				cp.mu.Lock()
				left := len(cp.vms)
				cp.mu.Unlock()
				if left != 0 {
					t.Errorf("%d VMs left after the teardown", left)
				}
				b, _ := json.Marshal(res.Hail.Origins)
				if !strings.Contains(string(b), `"name":"rest"`) {
					t.Errorf("hail.origins JSON: %s", b)
				}
			})
		}
	}
}

// In the closed model the run's connections are shared by the origins as
// virtual users share their time, so the mix of requests follows the
// weights however fast each server is: the slow server holds nearly all
// the connections, the fast one a fraction of one (a connection that
// pauses), and both get as many requests a second once the latencies are
// measured (in a run whose connections were dealt by share alone, the fast
// one would get a hundred times the requests).
func TestClosedModelHoldsTheMix(t *testing.T) {
	testtier.Require(t, testtier.Timing)
	t.Parallel()
	fast := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(fast.Close)
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(4 * time.Millisecond) }))
	t.Cleanup(slow.Close)
	src := "targets: {fast: " + fast.URL + ", slow: " + slow.URL + "}\nconnections: 16\nduration: 4s\nengine: net\n" +
		"steps:\n  - {name: a, target: fast, path: /}\n  - {name: b, target: slow, path: /}\n"
	res, _ := runFile(t, src, "", nil, nil)
	a, b := step(t, res, "a"), step(t, res, "b")
	// The last two whole seconds: the deal has followed the latencies.
	var na, nb int64
	for _, sec := range a.Series[len(a.Series)-3 : len(a.Series)-1] {
		na += sec.Requests
	}
	for _, sec := range b.Series[len(b.Series)-3 : len(b.Series)-1] {
		nb += sec.Requests
	}
	t.Logf("the last two seconds: %d requests to the fast server, %d to the slow one", na, nb)
	if nb == 0 || float64(na)/float64(nb) < 0.5 || float64(na)/float64(nb) > 2 {
		t.Errorf("the last two seconds: %d requests to the fast server, %d to the slow one; want about as many", na, nb)
	}
	o := res.Hail.Origins
	if len(o) != 2 || o[0].Connections >= o[1].Connections {
		t.Errorf("connections held: %+v, want the slow server to hold more", o)
	}
}

// With -w, what ends after -z ends in the drain on every origin's
// connections: one controller marks every leg's recorders, so each
// origin's requests in flight at -z are counted as drained, and the run's
// drain is their sum. Ground truth: each server's count of the responses
// it sent.
func TestDrainCoversEveryOrigin(t *testing.T) {
	t.Parallel()
	var served [2]atomic.Int64
	slow := func(i int) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(300 * time.Millisecond)
			served[i].Add(1)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	a, b := slow(0), slow(1)
	src := "targets: {a: " + a.URL + ", b: " + b.URL + "}\nconnections: 4\nduration: 500ms\nengine: net\nsteps:\n" +
		"  - {name: to_a, target: a, path: /}\n  - {name: to_b, target: b, path: /}\n"
	s, err := scenario.Parse("drain.yaml", []byte(src), scenario.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sched := s.Settings.Schedule()
	p, err := s.Plan(sched)
	if err != nil {
		t.Fatal(err)
	}
	p.WaitOngoing = true
	w := Workload(s, sched)
	mustTargets(t, s, p).Route(w)
	res, err := run.Run(context.Background(), p, run.Options{Workload: w})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hail
	if h.Drain == nil || h.Counts.Aborted != 0 {
		t.Fatalf("drain %+v, %d aborted: want the requests in flight at -z to finish", h.Drain, h.Counts.Aborted)
	}
	var drained int64
	for i, st := range h.Steps {
		var n int64
		for _, sec := range st.Series {
			n += sec.Drained
		}
		if n == 0 {
			t.Errorf("step %s (origin %s): nothing drained", st.Name, h.Origins[i].Name)
		}
		if st.Counts.Responses != served[i].Load() {
			t.Errorf("step %s: %d responses, its server sent %d", st.Name, st.Counts.Responses, served[i].Load())
		}
		drained += n
	}
	if drained != h.Drain.Requests || drained != 4 {
		t.Errorf("the origins drained %d requests, the run's drain says %d; want the 4 in flight at -z", drained, h.Drain.Requests)
	}
}

// A body_file of engine.SplitAt bytes or more is sent whole on a
// closed-model run's second origin too (its builders are paced there,
// and must still hand the engine their shared bodies). Ground truth: the
// server reads each body to its end and notes its length.
func TestSharedBodyOnASecondOrigin(t *testing.T) {
	t.Parallel()
	size := engine.SplitAt + 1
	path := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(path, bytes.Repeat([]byte("a"), size), 0o644); err != nil {
		t.Fatal(err)
	}
	fast := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(fast.Close)
	var mu sync.Mutex
	var lengths []int64
	upload := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		mu.Lock()
		lengths = append(lengths, n)
		mu.Unlock()
	}))
	t.Cleanup(upload.Close)
	src := "targets: {fast: " + fast.URL + ", upload: " + upload.URL + "}\nconnections: 4\nrequests: 40\ntimeout: 2s\nengine: net\n" +
		"steps:\n  - {name: a, target: fast, path: /}\n  - {name: b, target: upload, method: POST, path: /, body_file: '" + path + "'}\n"
	res, _ := runFile(t, src, "", nil, nil)
	b := step(t, res, "b")
	mu.Lock()
	defer mu.Unlock()
	if b.Counts.Responses == 0 || b.Counts.Failed != 0 || int64(len(lengths)) != b.Counts.Responses {
		t.Fatalf("step b: %+v, errors %v; the server read %d bodies", b.Counts, b.ErrorDistribution, len(lengths))
	}
	for _, n := range lengths {
		if n != int64(size) {
			t.Fatalf("the server read a body of %d bytes, want %d", n, size)
		}
	}
}
