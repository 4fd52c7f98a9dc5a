package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/result"
)

// hail run with steps on two targets, REST and gRPC: --target points the
// file's targets at the test's servers; the text report has an Origins
// table and each origin's verdict; the JSON has hail.origins with each
// server's exact count; hail merge of two such results adds the origins.
func TestRunTwoTargets(t *testing.T) {
	t.Parallel()
	base, srv := servetest.Start(t)
	addr, gsrv := startGRPCServer(t, grpcserve.Config{})
	path := writeScenario(t, `
targets:
  web: http://127.0.0.1:1
  rpc: grpc://127.0.0.1:1
connections: 4
rate: 2000
requests: 400
steps:
  - {name: page, target: web, weight: 3, path: /}
  - {name: echo, target: rpc, weight: 1, grpc: {call: hail.v1.Target/Echo, data: {payload: hi}}}
`)
	dir := t.TempDir()
	var results []string
	for i, f := range []string{"text", "json"} {
		out := filepath.Join(dir, f)
		_, stderr, code := hail(t, "run", path, "--target", "web="+base, "--target", "rpc=grpc://"+addr, "--no-tui", "--output-format", f, "-o", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if f == "text" {
			for _, want := range []string{"Origins (one connection pool each", "web ", "rpc ", "HTTP/1.1", "h2c", "bottleneck: "} {
				if !strings.Contains(string(b), want) {
					t.Errorf("text report lacks %q:\n%s", want, b)
				}
			}
			continue
		}
		results = append(results, out)
		var res result.Result
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		o := res.Hail.Origins
		// Each run sent 300 requests to web and 100 to rpc (the schedule
		// deals 400 as 3 to 1); the servers' counts are cumulative.
		if len(o) != 2 || o[0].Name != "web" || o[1].Name != "rpc" || o[0].Counts.Requests != 300 || o[1].Counts.Requests != 100 {
			t.Fatalf("origins %+v", o)
		}
		if got, want := srv.Stats().Requests, uint64(300*(i+1)); got != want {
			t.Errorf("the web server counted %d requests, want %d", got, want)
		}
		if got, want := gsrv.Calls("/hail.v1.Target/Echo"), int64(100*(i+1)); got != want {
			t.Errorf("the gRPC server counted %d calls, want %d", got, want)
		}
		if res.Hail.Engine == "" || !strings.Contains(res.Hail.Engine, "h2") || !strings.Contains(res.Hail.Protocol, "h2c") {
			t.Errorf("engine %q protocol %q", res.Hail.Engine, res.Hail.Protocol)
		}
	}
	// A second JSON run to merge with the first.
	second := filepath.Join(dir, "json2")
	if _, stderr, code := hail(t, "run", path, "--target", "web="+base, "--target", "rpc=grpc://"+addr, "--no-tui", "-j", "-o", second); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	merged := filepath.Join(dir, "merged")
	if _, stderr, code := hailIn(t, "merge", results[0], second, "-o", merged); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(merged)
	var res result.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if o := res.Hail.Origins; len(o) != 2 || o[0].Counts.Requests != 600 || o[1].Counts.Requests != 200 || o[0].Connections != 6 {
		t.Errorf("merged origins %+v", o)
	}
}

// hail run -p (and a target's streams:): each connection of an HTTP/2
// target carries that many requests at once. The server counts the
// requests in flight on each connection and holds each connection's
// first ones until that many have arrived together: it sees exactly 2
// connections and at most 4 streams on each, 4 reached on both.
func TestRunStreamsPerConnection(t *testing.T) {
	t.Parallel()
	const conns, streams = 2, 4
	type connState struct {
		inflight, most int
		open           chan struct{} // closed when most reaches streams
	}
	var mu sync.Mutex
	seen := map[string]*connState{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c := seen[r.RemoteAddr]
		if c == nil {
			c = &connState{open: make(chan struct{})}
			seen[r.RemoteAddr] = c
		}
		c.inflight++
		if c.inflight > c.most {
			c.most = c.inflight
			if c.most == streams {
				close(c.open)
			}
		}
		mu.Unlock()
		select {
		case <-c.open:
		case <-time.After(5 * time.Second):
		}
		mu.Lock()
		c.inflight--
		mu.Unlock()
	})}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetUnencryptedHTTP2(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	path := writeScenario(t, fmt.Sprintf(`
targets:
  edge: {url: 'http://%s', protocol: h2, streams: 2}
connections: %d
requests: 200
steps:
  - {name: page, target: edge, path: /}
`, ln.Addr(), conns))
	_, stderr, code := hail(t, "run", path, "-p", fmt.Sprint(streams), "--no-tui", "-j", "-o", filepath.Join(t.TempDir(), "r.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != conns {
		t.Errorf("the server saw %d connections, want %d", len(seen), conns)
	}
	for addr, c := range seen {
		if c.most != streams {
			t.Errorf("connection %s carried at most %d requests at once, want %d", addr, c.most, streams)
		}
	}
	// -p on a file whose targets all speak HTTP/1.1 is refused.
	h1 := writeScenario(t, "base: http://127.0.0.1:1\nrequests: 1\nsteps:\n  - {name: a, path: /}\n")
	if _, stderr, code := hail(t, "run", h1, "-p", "8", "--no-tui"); code != 1 || !strings.Contains(stderr, "-p 8: several streams per connection need HTTP/2") {
		t.Errorf("-p on HTTP/1.1: exit %d: %s", code, stderr)
	}
}
