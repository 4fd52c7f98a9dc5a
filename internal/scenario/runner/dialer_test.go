package runner

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hail-loadgen/hail/internal/h3serve/certtest"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
)

// The setup, the load and the teardown share one dialer: the TLS
// configuration is built once (the CA file can go as soon as it is, where
// a run that builds its own fails), and each run counts its own handshakes
// (every request opens a connection: the server's count is theirs added).
func TestPhasesShareOneDialer(t *testing.T) {
	t.Parallel()
	k := certtest.New(t, "runner test CA")
	var hellos atomic.Int64
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{k.Server},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { hellos.Add(1); return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	src := `
base: https://` + ln.Addr().String() + `
connections: 2
requests: 20
keepalive: false
setup: [{name: seed, path: /, repeat: 3}]
steps: [{name: get, path: /}]
teardown: [{name: clean, path: /, repeat: 2}]
`
	s, err := scenario.Parse("it.yaml", []byte(src), scenario.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sched := s.Settings.Schedule()
	p, err := s.Plan(sched)
	if err != nil {
		t.Fatal(err)
	}
	p.CACert = k.CAFile
	ctx := context.Background()
	tg, err := NewTargets(ctx, s, p)
	if err != nil {
		t.Fatal(err)
	}
	w := Workload(s, sched)
	d := tg.Route(w)
	if err := os.Remove(k.CAFile); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Run(ctx, p, run.Options{Workload: Workload(s, sched)}); err == nil || !strings.Contains(err.Error(), "--cacert") {
		t.Fatalf("a run building its own dialer without the CA file: %v, want a --cacert error", err)
	}

	setup, err := Setup(ctx, s, tg, PhaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Run(ctx, p, run.Options{Workload: w, Dialer: d})
	if err != nil {
		t.Fatal(err)
	}
	teardown, err := Teardown(ctx, s, tg, PhaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if setup.Failed != "" || teardown.Failed != "" || res.Hail.Counts.Responses != 20 {
		t.Fatalf("setup %q, teardown %q, load %d responses, errors %v", setup.Failed, teardown.Failed, res.Hail.Counts.Responses, res.ErrorDistribution)
	}
	if res.Hail.TLS == nil || res.Hail.TLS.Handshakes != 20 || res.Hail.TLS.Resumptions >= 20 {
		t.Errorf("the load's TLS counts %+v, want its own 20 handshakes, the first a full one (a session cache of its own)", res.Hail.TLS)
	}
	if n := hellos.Load(); n != 3+20+2 {
		t.Errorf("the server saw %d handshakes, want 25 (3 setup, 20 load, 2 teardown)", n)
	}
}
