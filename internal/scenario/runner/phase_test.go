package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
)

const lifecycle = `
base: http://unused:1
connections: 4
requests: 200
setup:
  - name: seed
    method: POST
    path: /items
    body_json: {name: "vm-{{counter}}"}
    capture: {vms: {json: id}}
    expect: {status: 201}
    repeat: 20
steps:
  - {name: query, path: '/items/{{pick vms}}', expect: {status: 200}}
teardown:
  - {name: cleanup, method: DELETE, path: '/items/{{take vms}}', expect: {status: 204}, repeat: all}
`

// Setup runs exactly once before the load and seeds the pool the load
// reads; teardown runs once after it and takes every id left; neither is
// in the load's numbers — on every engine of the load.
func TestSetupTeardown(t *testing.T) {
	t.Parallel()
	for _, eng := range engines(t) {
		t.Run(eng, func(t *testing.T) {
			t.Parallel()
			base, srv := servetest.Start(t)
			s, err := scenario.Parse("it.yaml", []byte(lifecycle), scenario.LoadOptions{Base: base})
			if err != nil {
				t.Fatal(err)
			}
			s.Settings.Engine = eng
			sched := s.Settings.Schedule()
			p, err := s.Plan(sched)
			if err != nil {
				t.Fatal(err)
			}
			setup, err := Setup(context.Background(), s, mustTargets(t, s, p), PhaseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if it := srv.Stats().Items; it.Created != 20 || it.Live != 20 {
				t.Fatalf("after setup the server has %+v, want 20 items created", it)
			}
			res, _ := runFile(t, lifecycle, base, func(x *scenario.Scenario) {
				*x = *s // the same pools
			}, nil)
			td, err := Teardown(context.Background(), s, mustTargets(t, s, p), PhaseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			it := srv.Stats().Items
			if it.Created != 20 || it.Deleted != 20 || it.Live != 0 || it.GetHits != 200 || it.UnknownIDRequests != 0 || it.DeleteMisses != 0 {
				t.Errorf("server items %+v: want 20 created once, 200 hits, 20 deleted at the end", it)
			}
			if res.Hail.Counts.Requests != 200 || len(res.Hail.Steps) != 1 || res.Hail.Steps[0].Name != "query" {
				t.Errorf("the load: %d requests, steps %d", res.Hail.Counts.Requests, len(res.Hail.Steps))
			}
			if len(setup.Steps) != 1 || setup.Steps[0].Counts.Requests != 20 || setup.Steps[0].StatusCodeDistribution["201"] != 20 || setup.Failed != "" || setup.Steps[0].Captures != 20 {
				t.Errorf("setup report %+v", setup)
			}
			if len(td.Steps) != 1 || td.Steps[0].Counts.Requests != 20 || td.Steps[0].StatusCodeDistribution["204"] != 20 || td.Failed != "" {
				t.Errorf("teardown report %+v", td)
			}
			if p := s.Pools[mustPool(t, s, "vms")]; p.Len() != 0 {
				t.Errorf("pool vms holds %d after teardown", p.Len())
			}
		})
	}
}

func mustPool(t *testing.T, s *scenario.Scenario, name string) int {
	for i, p := range s.Pools {
		if p.Name == name {
			return i
		}
	}
	t.Fatalf("no pool %s", name)
	return -1
}

// A failing setup step stops the run before the load, naming the step and
// why: a status it does not expect, a failed check, a transport error, a
// value it cannot get.
func TestSetupFails(t *testing.T) {
	t.Parallel()
	base, srv := servetest.Start(t)
	for _, c := range []struct{ name, setup, want string }{
		{"status", "[{name: boom, path: '/?status=503'}]", "setup step boom failed: status 503"},
		{"check", "[{name: mism, path: /, expect: {body_contains: nope}}]", `setup step mism failed: status 200, check body contains "nope" failed`},
		{"empty pool", "[{name: one, path: /, capture: {x: {header: X-None}}}, {name: two, path: '/{{pick x}}'}]", "setup step two failed: it could not be built: pool `x` empty"},
		{"refused", "[{name: dead, url: 'http://127.0.0.1:1/'}]", "connection refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := srv.Stats().Requests
			src := "base: " + base + "\nrequests: 10\nsetup: " + c.setup + "\nsteps: [{name: a, path: /}]\n"
			if c.name == "refused" {
				src = "requests: 10\nsetup: " + c.setup + "\nsteps: [{name: a, url: 'http://127.0.0.1:1/'}]\n"
			}
			s, err := scenario.Parse("it.yaml", []byte(src), scenario.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Plan(s.Settings.Schedule())
			if err != nil {
				t.Fatal(err)
			}
			ph, err := Setup(context.Background(), s, mustTargets(t, s, p), PhaseOptions{})
			var pe *PhaseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) || ph == nil || ph.Failed == "" {
				t.Fatalf("got %v (phase %+v), want a setup error with %q", err, ph, c.want)
			}
			if n := srv.Stats().Requests - before; n > 2 {
				t.Errorf("the server saw %d requests: the setup must stop at its failure", n)
			}
		})
	}
}

// A setup or teardown step runs with its concurrency: the server sees that
// many of its requests at once (never more), exactly as many in all as it
// repeats; repeat: all takes the pool to empty at the same concurrency;
// progress is reported with the step's total, and ends with its count.
func TestPhaseConcurrency(t *testing.T) {
	t.Parallel()
	var inFlight, most, n atomic.Int64
	var ids atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		n.Add(1)
		time.Sleep(20 * time.Millisecond)
		if r.Method == http.MethodPost {
			fmt.Fprintf(w, `{"id":"v%d"}`, ids.Add(1))
		}
	}))
	t.Cleanup(srv.Close)
	src := `
base: ` + srv.URL + `
connections: 8
requests: 10
setup:
  - {name: seed, method: POST, path: /vms, capture: {vms: {json: id}}, repeat: 40, concurrency: 4}
steps:
  - {name: get, path: '/vms/{{pick vms}}'}
teardown:
  - {name: cleanup, method: DELETE, path: '/vms/{{take vms}}', repeat: all}
`
	s, err := scenario.Parse("it.yaml", []byte(src), scenario.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(s.Settings.Schedule())
	if err != nil {
		t.Fatal(err)
	}
	tg := mustTargets(t, s, p)
	var mu sync.Mutex
	var reports []Progress
	o := PhaseOptions{Progress: func(pr Progress) { mu.Lock(); reports = append(reports, pr); mu.Unlock() }}
	if _, err := Setup(context.Background(), s, tg, o); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 40 || most.Load() != 4 {
		t.Errorf("setup: the server saw %d requests, at most %d at once; want 40, 4 at once", n.Load(), most.Load())
	}
	n.Store(0)
	most.Store(0)
	td, err := Teardown(context.Background(), s, tg, o)
	if err != nil || td.Failed != "" {
		t.Fatal(err, td)
	}
	// repeat: all, concurrency unset: the load's 8 connections.
	if n.Load() != 40 || most.Load() != 8 || s.Pools[mustPool(t, s, "vms")].Len() != 0 {
		t.Errorf("teardown: the server saw %d requests, at most %d at once; want 40, 8 at once", n.Load(), most.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	first, last := reports[0], reports[len(reports)-1]
	if first.Phase != "setup" || first.Step != "seed" || first.Total != 40 || first.Concurrency != 4 || first.Ended {
		t.Errorf("first progress %+v", first)
	}
	if last.Phase != "teardown" || last.Step != "cleanup" || last.Total != 40 || last.Done != 40 || !last.Ended || last.Rate() <= 0 {
		t.Errorf("last progress %+v", last)
	}
}
