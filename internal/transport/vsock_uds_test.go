package transport_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run/runtest"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Guest ports of the fake VMM.
const (
	portListening = 8080 // handshake OK, then HTTP
	portNobody    = 9    // closed without a word
	portGarbled   = 7    // a reply that is not "OK <port>\n"
)

// fakeVMM plays a Firecracker / Cloud Hypervisor hybrid vsock socket: it
// reads "CONNECT <port>\n" and either answers "OK <host_port>\n" and hands
// the stream to an HTTP server (HTTP/1.1 and h2c), closes it without a
// word (nothing listens on that guest port), or answers garbage.
type fakeVMM struct {
	path     string
	ln       net.Listener
	connects atomic.Int64 // CONNECT lines read
	ok       atomic.Int64 // handshakes answered OK
	oneWrite atomic.Int64 // CONNECT lines that arrived in one read
	hosts    sync.Map     // Host headers seen
	conns    chan net.Conn
	done     chan struct{}
	srv      *http.Server
}

func startVMM(t *testing.T) *fakeVMM {
	t.Helper()
	v := &fakeVMM{path: filepath.Join(t.TempDir(), "v.sock"), conns: make(chan net.Conn), done: make(chan struct{})}
	ln, err := net.Listen("unix", v.path)
	if err != nil {
		t.Fatal(err)
	}
	v.ln = ln
	h := h3serve.Handler()
	v.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.hosts.Store(r.Host, true)
		h.ServeHTTP(w, r)
	})}
	v.srv.Protocols = new(http.Protocols)
	v.srv.Protocols.SetHTTP1(true)
	v.srv.Protocols.SetUnencryptedHTTP2(true)
	go v.srv.Serve(chanListener{v})
	go v.accept()
	t.Cleanup(func() { ln.Close(); close(v.done); v.srv.Close() })
	return v
}

func (v *fakeVMM) accept() {
	for {
		c, err := v.ln.Accept()
		if err != nil {
			return
		}
		go v.handshake(c)
	}
}

func (v *fakeVMM) handshake(c net.Conn) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		c.Close()
		return
	}
	line := string(buf[:n])
	if strings.HasSuffix(line, "\n") {
		v.oneWrite.Add(1)
	}
	for !strings.HasSuffix(line, "\n") && len(line) < 64 {
		k, err := c.Read(buf)
		if err != nil {
			c.Close()
			return
		}
		line += string(buf[:k])
	}
	v.connects.Add(1)
	port, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "CONNECT "), "\n"))
	switch {
	case err != nil || port == portNobody:
		c.Close()
	case port == portGarbled:
		c.Write([]byte("ERR 42\n"))
		c.Close()
	default:
		c.Write([]byte("OK 1073741824\n"))
		v.ok.Add(1)
		c.SetDeadline(time.Time{})
		select {
		case v.conns <- c:
		case <-v.done:
			c.Close()
		}
	}
}

// chanListener hands the VMM's post-handshake streams to the HTTP server.
type chanListener struct{ v *fakeVMM }

func (l chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.v.conns:
		return c, nil
	case <-l.v.done:
		return nil, net.ErrClosed
	}
}
func (l chanListener) Close() error   { return nil }
func (l chanListener) Addr() net.Addr { return l.v.ln.Addr() }

func vsockPlan(t *testing.T, v *fakeVMM, port uint32) *plan.Plan {
	t.Helper()
	u, _ := url.Parse("http://guest.internal:8080/")
	return &plan.Plan{URL: u, Method: "GET", Connections: 3, KeepAlive: true, MaxRedirects: 10, Requests: 300,
		ConnectTimeout: 2 * time.Second, Engine: "auto", VsockUDS: v.path, VsockUDSPort: port}
}

// Hybrid vsock end to end: every connection does the CONNECT handshake
// once (in one write) and then carries many requests; the URL gives the
// Host header.
func TestHybridVsock(t *testing.T) {
	for _, engine := range []string{"net", "auto"} {
		t.Run(engine, func(t *testing.T) { testHybridVsock(t, engine) })
	}
}

func testHybridVsock(t *testing.T, engine string) {
	v := startVMM(t)
	p := vsockPlan(t, v, portListening)
	p.Engine = plan.EngineName(engine)
	res := runtest.Run(t, p)
	if c := res.Hail.Counts; c.Responses != 300 || res.StatusCodeDistribution["200"] != 300 {
		t.Fatalf("responses %d, errors %v", c.Responses, res.ErrorDistribution)
	}
	// One handshake per connection, not per request. (The net engine dials
	// when a worker first claims a request: on a loaded machine two workers
	// may send all 300 before the third starts.)
	if got := v.ok.Load(); got != res.Hail.Counts.Connects || got < 1 || got > 3 {
		t.Errorf("%d handshakes for %d kept-alive connections (-c 3)", got, res.Hail.Counts.Connects)
	}
	if v.oneWrite.Load() != v.connects.Load() {
		t.Errorf("%d of %d CONNECT lines arrived in one read", v.oneWrite.Load(), v.connects.Load())
	}
	if _, ok := v.hosts.Load("guest.internal:8080"); !ok {
		t.Error("the Host header is not the URL's")
	}
	if h := res.Hail; h.Transport != "vsock-uds" || h.Protocol != "HTTP/1.1" {
		t.Errorf("transport %q engine %q protocol %q", h.Transport, h.Engine, h.Protocol)
	}

	if engine != "net" {
		return
	}
	// h2c with prior knowledge rides the same stream.
	p = vsockPlan(t, v, portListening)
	p.HTTPVersion, p.Streams = "2", 4
	res = runtest.Run(t, p)
	if c := res.Hail.Counts; c.Responses != 300 || res.Hail.Protocol != "h2c" || res.Hail.Transport != "vsock-uds" {
		t.Errorf("h2c: responses %d, protocol %q, transport %q, errors %v", c.Responses, res.Hail.Protocol, res.Hail.Transport, res.ErrorDistribution)
	}
}

// A guest port nobody listens on, and a VMM that answers garbage: every
// request fails with the named kind, none hangs.
func TestHybridVsockRefusedAndGarbled(t *testing.T) {
	v := startVMM(t)
	for port, kind := range map[uint32]string{portNobody: "vsock handshake refused", portGarbled: "vsock handshake garbled"} {
		p := vsockPlan(t, v, port)
		p.Requests, p.Connections = 20, 2
		res := runtest.Run(t, p)
		if got := res.ErrorDistribution[kind]; got != 20 || res.Hail.Counts.Responses != 0 {
			t.Errorf("port %d: errors %v, want 20 %q", port, res.ErrorDistribution, kind)
		}
	}
}

// The handshake errors themselves say what happened.
func TestHybridVsockErrorText(t *testing.T) {
	v := startVMM(t)
	for port, want := range map[uint32]string{portNobody: "nothing listening on guest port 9", portGarbled: `"ERR 42\n"`} {
		c, err := net.Dial("unix", v.path)
		if err != nil {
			t.Fatal(err)
		}
		err = handshake(c, port)
		c.Close()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("port %d: %v, want it to mention %s", port, err, want)
		}
	}
	// Nothing past the OK line is consumed: the HTTP response that follows
	// is read intact.
	c, err := net.Dial("unix", v.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := handshake(c, portListening); err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("GET / HTTP/1.1\r\nHost: g\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the handshake: %v %v", resp, err)
	}
}

func handshake(c net.Conn, port uint32) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return transport.VsockHandshake(ctx, c, "v.sock", port)
}
