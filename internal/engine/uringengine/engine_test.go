//go:build linux

package uringengine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/serve"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/testnet"
	"github.com/hail-loadgen/hail/internal/testtier"
	"github.com/hail-loadgen/hail/internal/transport"
	"github.com/hail-loadgen/hail/internal/uring"
)

func needURing(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skip(err)
	}
}

// startServe runs the built-in target on addr ("127.0.0.1:0" or "unix:/path").
func startServe(t testing.TB, addr string) (*serve.Server, string) {
	t.Helper()
	s := serve.New(serve.Config{Addr: addr})
	a := testnet.Start(t, s)
	if a.Network() == "unix" {
		return s, "http://localhost/"
	}
	return s, "http://" + a.String() + "/"
}

type jobOpts struct {
	url       string
	unix      string
	n         uint64
	c         int
	dur       time.Duration // -z: stop and abort after this long
	rate      float64
	http10    bool
	close     bool // keep-alive off
	timeout   time.Duration
	redirects int
	method    string
	body      []byte
	reqs      func(spec http1.RequestSpec) func(int) engine.Requests
	steps     int
	eng       *Engine
	abortAt   time.Duration // abort (without a deadline) after this long
	dialer    *transport.Dialer
	source    func(*schedule.Source) // adjusts the job's source before the run (stages, an origin's part)
}

type jobResult struct {
	t       *stats.Totals
	steps   []*stats.Totals
	elapsed time.Duration
	// afterAbort is how long Run took to return after the abort, if any.
	afterAbort time.Duration
}

// runJob builds a job the way run.Run does and runs the engine on it.
func runJob(t testing.TB, o jobOpts) jobResult {
	t.Helper()
	u, err := url.Parse(o.url)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		port = 80
	}
	d := o.dialer
	if d == nil {
		d, err = transport.NewDialer(context.Background(), transport.Options{Host: u.Hostname(), Port: port,
			UnixSocket: o.unix, PreLookup: true, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
	}
	proto := "HTTP/1.1"
	if o.http10 {
		proto = "HTTP/1.0"
	}
	spec := http1.RequestSpec{Method: o.method, Target: u.RequestURI(), Host: u.Host, Proto: proto,
		Close: o.close && !o.http10, KeepAlive10: o.http10 && !o.close, Body: o.body}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	nsteps := max(o.steps, 1)
	recs := make([][]*stats.Recorder, nsteps)
	for s := range recs {
		recs[s] = make([]*stats.Recorder, min(o.c, 8))
		for i := range recs[s] {
			recs[s][i] = stats.NewRecorder()
		}
	}
	newReqs := func(int) engine.Requests {
		return &engine.Static{Variants: [][]byte{http1.AppendRequest(nil, &spec)}, Head: o.method == "HEAD"}
	}
	if o.reqs != nil {
		newReqs = o.reqs(spec)
	}
	var pacer schedule.Pacer
	if o.rate > 0 {
		pacer = schedule.Rate{PerSecond: o.rate}
	}
	stop, abort := make(chan struct{}), make(chan struct{})
	j := &engine.Job{
		Start: time.Now(), Source: schedule.NewSource(pacer, o.n, o.dur), Steps: make([]string, nsteps), Recorders: recs,
		Connections: o.c, NewRequests: newReqs, URL: u, Dialer: d, Timeout: o.timeout,
		KeepAlive: !o.close, MaxRedirects: o.redirects, MaxHeaderBytes: 64 << 10, Stop: stop, Abort: abort,
		RedirectDialer: func(u *url.URL) (*transport.Dialer, error) {
			port, _ := strconv.Atoi(u.Port())
			return transport.NewDialer(context.Background(), transport.Options{Host: u.Hostname(), Port: port, PreLookup: true, Timeout: 2 * time.Second})
		},
	}
	if o.source != nil {
		o.source(j.Source)
	}
	var aborted atomic.Int64 // time of the abort, ns since j.Start
	if at := max(o.dur, o.abortAt); at > 0 {
		tm := time.AfterFunc(at, func() {
			j.Source.Stop()
			close(stop)
			j.MarkAborting()
			aborted.Store(int64(j.Since()))
			close(abort)
		})
		defer tm.Stop()
	}
	eng := o.eng
	if eng == nil {
		eng = &Engine{}
	}
	if err := eng.Run(j); err != nil {
		t.Fatal(err)
	}
	res := jobResult{elapsed: j.Since()}
	if a := aborted.Load(); a > 0 {
		res.afterAbort = res.elapsed - time.Duration(a)
	}
	for s := range recs {
		res.steps = append(res.steps, stats.NewCollector(recs[s], j.Start).Finish(time.Now()))
	}
	res.t = stats.NewTotals()
	for _, st := range res.steps {
		res.t.Add(st)
	}
	return res
}

func errorsOf(t *stats.Totals) map[string]int64 {
	m := map[string]int64{}
	for k, n := range t.Errors {
		if n > 0 {
			m[stats.ErrorKind(k).String()] = n
		}
	}
	return m
}

// want200 checks that all n requests got a 200 with body bytes each.
func want200(t *testing.T, r jobResult, n int64, body int64) {
	t.Helper()
	if got := r.t.Status[200]; got != n || r.t.Requests() != n {
		t.Errorf("200s = %d of %d requests, want %d (errors %v)", got, r.t.Requests(), n, errorsOf(r.t))
	}
	if body >= 0 && r.t.BodyBytes != n*body {
		t.Errorf("body bytes = %d, want %d × %d", r.t.BodyBytes, n, body)
	}
}

func countFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func threadsNamed(prefix string) int {
	ents, _ := os.ReadDir("/proc/self/task")
	n := 0
	for _, e := range ents {
		b, _ := os.ReadFile("/proc/self/task/" + e.Name() + "/comm")
		if strings.HasPrefix(string(b), prefix) {
			n++
		}
	}
	return n
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

func TestUnixSocket(t *testing.T) {
	t.Parallel()
	needURing(t)
	path := filepath.Join(t.TempDir(), "hail.sock")
	s, base := startServe(t, "unix:"+path)
	r := runJob(t, jobOpts{url: base, unix: path, n: 3000, c: 16})
	want200(t, r, 3000, 12)
	if got := s.Stats().Requests; got != 3000 {
		t.Errorf("server saw %d requests, want 3000", got)
	}
	if r.t.Connects != 16 {
		t.Errorf("connects = %d, want 16 (keep-alive)", r.t.Connects)
	}
}

func TestKeepAliveOffAndHTTP10(t *testing.T) {
	t.Parallel()
	needURing(t)
	s, base := startServe(t, "127.0.0.1:0")
	for _, tc := range []struct {
		name          string
		http10, close bool
		connects      int64
	}{
		{"keepalive-off", false, true, 400},
		{"http10", true, true, 400},
		{"http10-keepalive", true, false, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Stats().Requests
			r := runJob(t, jobOpts{url: base, n: 400, c: 4, http10: tc.http10, close: tc.close})
			want200(t, r, 400, 12)
			if r.t.Connects != tc.connects {
				t.Errorf("connects = %d, want %d", r.t.Connects, tc.connects)
			}
			if got := s.Stats().Requests - before; got != 400 {
				t.Errorf("server saw %d requests, want 400", got)
			}
		})
	}
}

// rawServer answers every connection with the bytes resp returns for the
// request head it read, then closes it when closeAfter says so.
func rawServer(t testing.TB, resp func(head string) (string, bool)) string {
	t.Helper()
	return "http://" + testnet.Serve(t, "127.0.0.1:0", func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			var head strings.Builder
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				head.WriteString(line)
				if line == "\r\n" {
					break
				}
			}
			out, closeAfter := resp(head.String())
			if _, err := io.WriteString(c, out); err != nil || closeAfter {
				return
			}
		}
	}) + "/"
}

// An HTTP/1.0 response without Content-Length ends at EOF (Parser.EOF on a
// 0-byte receive).
func TestEOFDelimitedBody(t *testing.T) {
	t.Parallel()
	needURing(t)
	base := rawServer(t, func(string) (string, bool) { return "HTTP/1.0 200 OK\r\n\r\nhello, eof", true })
	r := runJob(t, jobOpts{url: base, n: 200, c: 4, http10: true, close: true})
	want200(t, r, 200, int64(len("hello, eof")))
}

// Receive buffers far smaller than a status line force every split the
// parser can see: lines across buffers (carry), chunk framing across
// buffers, and an empty buffer ring (ENOBUFS, re-armed).
func TestTinyBuffers(t *testing.T) {
	t.Parallel()
	needURing(t)
	_, base := startServe(t, "127.0.0.1:0")
	// 24 requests on 6 connections (every response meets every split); the
	// 300 KiB body (75 chunks, 44,000 receives of 7 bytes each) 6, one a
	// connection.
	for _, q := range []struct {
		query string
		body  int64
		n     uint64
	}{{"", 12, 24}, {"?size=10k&chunked=1", 10240, 24}, {"?size=10k", 10240, 24}, {"?size=0", 0, 24}, {"?size=300k&chunked=1", 300 << 10, 6}} {
		for _, size := range []int{7, 64} {
			t.Run(fmt.Sprintf("%s/buf%d", q.query, size), func(t *testing.T) {
				r := runJob(t, jobOpts{url: base + q.query, n: q.n, c: 6, eng: &Engine{bufSize: size, bufCount: 4}})
				want200(t, r, int64(q.n), q.body)
			})
		}
	}
}

// reusingBuilder encodes every request into one buffer that it overwrites
// at the next call (as a scenario builder may): the engine must copy.
type reusingBuilder struct {
	specs []http1.RequestSpec
	buf   []byte
	done  []atomic.Int64
}

func (b *reusingBuilder) Next(hit uint64) ([]byte, int, bool, bool) {
	for i := range b.buf {
		b.buf[i] = 'X' // scribble over the previous request
	}
	step := int(hit % uint64(len(b.specs)))
	b.buf = http1.AppendRequest(b.buf[:0], &b.specs[step])
	return b.buf, step, false, true
}

func (b *reusingBuilder) Done(step int, p *http1.Parser) engine.Verdict {
	if p != nil && p.Status == 200 {
		b.done[step].Add(1)
	}
	return engine.Verdict{}
}

func TestReusingBuilderAndSteps(t *testing.T) {
	t.Parallel()
	needURing(t)
	_, base := startServe(t, "127.0.0.1:0")
	var builders []*reusingBuilder
	var mu sync.Mutex
	r := runJob(t, jobOpts{url: base, n: 3000, c: 12, steps: 2, reqs: func(spec http1.RequestSpec) func(int) engine.Requests {
		return func(int) engine.Requests {
			a, b := spec, spec
			a.Target, b.Target = "/?size=10", "/?size=2000&pad="+strings.Repeat("p", 500)
			rb := &reusingBuilder{specs: []http1.RequestSpec{a, b}, done: make([]atomic.Int64, 2)}
			mu.Lock()
			builders = append(builders, rb)
			mu.Unlock()
			return rb
		}
	}})
	want200(t, r, 3000, -1)
	if r.steps[0].BodyBytes != 1500*10 || r.steps[1].BodyBytes != 1500*2000 {
		t.Errorf("step body bytes %d and %d, want %d and %d", r.steps[0].BodyBytes, r.steps[1].BodyBytes, 1500*10, 1500*2000)
	}
	var done [2]int64
	for _, b := range builders {
		done[0] += b.done[0].Load()
		done[1] += b.done[1].Load()
	}
	if done != [2]int64{1500, 1500} {
		t.Errorf("Done saw %v responses per step, want 1500 each", done)
	}
}

// Thousands of connections: every one connects through the ring and the
// count is exact. The server answers none of the first 2000 requests until
// all have arrived, so the run needs every connection at once (with a
// server that answered at once, a loaded machine let the first connections
// serve all 6000 requests before the rest had started: 1405 connects).
func TestManyConnections(t *testing.T) {
	t.Parallel()
	needURing(t)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < 4500 {
		t.Skipf("RLIMIT_NOFILE %d is too low for 2000 connections and their server side", lim.Cur)
	}
	const conns = 2000
	base, served := testnet.Gate(t, conns, "hello world\n")
	start := time.Now()
	r := runJob(t, jobOpts{url: base + "/", n: 6000, c: conns})
	want200(t, r, 6000, 12)
	if r.t.Connects != conns {
		t.Errorf("connects = %d, want %d", r.t.Connects, conns)
	}
	if got := served.Load(); got != 6000 {
		t.Errorf("server saw %d requests", got)
	}
	t.Logf("2000 connections, 6000 requests in %v", time.Since(start))
}

// Every exit path closes every socket and the ring, and stops every
// SQPOLL thread.
func TestNoLeaks(t *testing.T) {
	needURing(t)
	refused := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String() + "/"
	}()
	fds0 := countFDs(t)
	func() {
		s := serve.New(serve.Config{Addr: "127.0.0.1:0"})
		a, err := s.Listen()
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		defer s.Close()
		base := "http://" + a.String() + "/"
		for _, o := range []jobOpts{
			{url: base, n: 500, c: 8},
			{url: base, n: 200, c: 8, close: true},
			{url: base + "?delay=5s", n: 100, c: 8, abortAt: 200 * time.Millisecond}, // aborted mid-flight
			{url: base + "?delay=5s", n: 8, c: 4, timeout: 100 * time.Millisecond},   // timeouts
			{url: base + "?delay=5s", c: 4, rate: 100, dur: 300 * time.Millisecond},  // open model, deadline
			{url: base, n: 300, c: 8, eng: &Engine{SQPoll: true}},
			{url: refused, n: 50, c: 4},
		} {
			runJob(t, o)
		}
	}()
	if !waitFor(3*time.Second, func() bool { return countFDs(t) <= fds0 }) {
		t.Errorf("fds: %d before, %d after", fds0, countFDs(t))
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			l, _ := os.Readlink("/proc/self/fd/" + e.Name())
			t.Logf("fd %s -> %s", e.Name(), l)
		}
	}
	if !waitFor(3*time.Second, func() bool { return threadsNamed("iou-sqp") == 0 }) {
		t.Errorf("%d SQPOLL threads left", threadsNamed("iou-sqp"))
	}
}

func TestAbortIsPrompt(t *testing.T) {
	needURing(t)
	_, base := startServe(t, "127.0.0.1:0")
	r := runJob(t, jobOpts{url: base + "?delay=10s", c: 8, dur: 300 * time.Millisecond})
	// The loop's waits are bounded by 50 ms; the rest is teardown. 200 ms
	// on a quiet machine (the timing tier), a second on a loaded one.
	limit := time.Second
	if testtier.On(testtier.Timing) {
		limit = 200 * time.Millisecond
	}
	if r.afterAbort > limit {
		t.Errorf("the engine took %v to return after the abort", r.afterAbort)
	}
	t.Logf("returned %v after the abort", r.afterAbort)
	if got := r.t.Errors[stats.ErrAborted]; got != 8 {
		t.Errorf("aborted = %d, want 8 (errors %v)", got, errorsOf(r.t))
	}
}

func TestSQPoll(t *testing.T) {
	t.Parallel()
	needURing(t)
	_, base := startServe(t, "127.0.0.1:0")
	r := runJob(t, jobOpts{url: base, n: 3000, c: 8, eng: &Engine{SQPoll: true}})
	want200(t, r, 3000, 12)
}

func TestRedirectOtherOrigin(t *testing.T) {
	t.Parallel()
	needURing(t)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "elsewhere") }))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, other.URL+"/", http.StatusFound) })
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/landed", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/landed", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "landed") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// Another origin: followed over a connection to it, as the net engine does.
	r := runJob(t, jobOpts{url: srv.URL + "/away", n: 20, c: 2, redirects: 5})
	want200(t, r, 20, int64(len("elsewhere")))
	// Same origin with keep-alive off: the redirect is followed on a new connection.
	r = runJob(t, jobOpts{url: srv.URL + "/here", n: 20, c: 2, redirects: 5, close: true})
	want200(t, r, 20, int64(len("landed")))
}

// Open model at a modest rate: every request's own lateness is recorded,
// and it stays small.
func TestOpenModelLag(t *testing.T) {
	needURing(t)
	_, base := startServe(t, "127.0.0.1:0")
	r := runJob(t, jobOpts{url: base, n: 400, c: 8, rate: 1000})
	want200(t, r, 400, 12)
	if n := r.t.Lag.TotalCount(); n != 400 {
		t.Errorf("lag samples %d, want 400 (queued %d)", n, r.t.Queued)
	}
	// Not faster than the schedule; not much slower on a quiet machine
	// (the timing tier's: a loaded one falls behind).
	if r.elapsed < 390*time.Millisecond || testtier.On(testtier.Timing) && r.elapsed > 600*time.Millisecond {
		t.Errorf("400 requests at 1000/s took %v", r.elapsed)
	}
	t.Logf("lag p50 %v p99 %v max %v", time.Duration(r.t.Lag.ValueAtQuantile(50)), time.Duration(r.t.Lag.ValueAtQuantile(99)),
		time.Duration(r.t.Lag.Max()))
}

func TestExplainSetup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		errno    unix.Errno
		disabled int
		cause    string
		fix      string
	}{
		{unix.EPERM, 2, "kernel.io_uring_disabled=2", "sysctl -w kernel.io_uring_disabled=0"},
		{unix.EPERM, 1, "kernel.io_uring_disabled=1", "io_uring_group"},
		{unix.EPERM, 0, "seccomp", "--security-opt seccomp=unconfined"},
		{unix.ENOSYS, 0, "no io_uring", "Linux 6.0"},
		{unix.ENOMEM, 0, "RLIMIT_MEMLOCK", "ulimit -l"},
	} {
		err := explainSetup(&uring.SetupError{Op: "io_uring_setup", Errno: tc.errno, Unavailable: true}, tc.disabled)
		if !strings.Contains(err.Cause, tc.cause) || !strings.Contains(err.Fix, tc.fix) {
			t.Errorf("%v, disabled=%d: cause %q, fix %q", tc.errno, tc.disabled, err.Cause, err.Fix)
		}
		if !errors.Is(err, uring.ErrUnavailable) || !errors.Is(err, tc.errno) {
			t.Errorf("%v: error %v does not wrap ErrUnavailable and the errno", tc.errno, err)
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "io_uring unavailable: ") {
			t.Errorf("message %q is not one line starting with the verdict", msg)
		}
	}
	if err := Available(); err != nil {
		var ue *UnavailableError
		if !errors.As(err, &ue) || !errors.Is(err, uring.ErrUnavailable) {
			t.Errorf("Available() = %v: not an *UnavailableError wrapping uring.ErrUnavailable", err)
		}
		t.Logf("io_uring is unavailable here: %v", err)
	}
}

// fakeVMM plays a Firecracker hybrid-vsock socket in front of target (a TCP
// address): it reads "CONNECT <port>\n", then answers per port: 8080 "OK"
// (split over two writes) and relays the stream, 9 closes without a word,
// 7 answers garbage, 5 never answers.
func fakeVMM(t *testing.T, target string) (path string, handshakes *atomic.Int64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "v.sock")
	handshakes = new(atomic.Int64)
	testnet.Serve(t, "unix:"+path, func(c net.Conn) {
		line, err := bufio.NewReader(io.LimitReader(c, 64)).ReadString('\n')
		if err != nil {
			return
		}
		switch line {
		case "CONNECT 9\n":
			return
		case "CONNECT 5\n":
			io.Copy(io.Discard, c) // never answers
			return
		case "CONNECT 7\n":
			io.WriteString(c, "ERR 42\n")
			return
		case "CONNECT 8080\n":
		default:
			t.Errorf("VMM read %q", line)
			return
		}
		handshakes.Add(1)
		io.WriteString(c, "OK 10")
		time.Sleep(time.Millisecond)
		io.WriteString(c, "73741824\n")
		up, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer up.Close()
		go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite() }()
		io.Copy(c, up)
	})
	return path, handshakes
}

func TestHybridVsock(t *testing.T) {
	t.Parallel()
	needURing(t)
	s, base := startServe(t, "127.0.0.1:0")
	path, handshakes := fakeVMM(t, strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/"))
	run := func(port uint32, n uint64, c int) jobResult {
		u, _ := url.Parse("http://guest.internal:8080/")
		d, err := transport.NewDialer(context.Background(), transport.Options{Host: "guest.internal", Port: 8080,
			VsockUDS: path, VsockUDSPort: port, Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return runJob(t, jobOpts{url: u.String(), n: n, c: c, dialer: d})
	}
	r := run(8080, 600, 6)
	want200(t, r, 600, 12)
	if got := handshakes.Load(); got != 6 || r.t.Connects != 6 {
		t.Errorf("%d handshakes and %d connects for 6 kept-alive connections", got, r.t.Connects)
	}
	if got := s.Stats().Requests; got != 600 {
		t.Errorf("server saw %d requests", got)
	}
	for port, kind := range map[uint32]stats.ErrorKind{9: stats.ErrVsockRefused, 7: stats.ErrVsockGarbled, 5: stats.ErrConnectTimeout} {
		n := uint64(20)
		if port == 5 {
			n = 4
		}
		r := run(port, n, 2)
		if got := r.t.Errors[kind]; got != int64(n) {
			t.Errorf("port %d: errors %v, want %d %q", port, errorsOf(r.t), n, kind)
		}
	}
}

// A 4 MiB request body cannot go out in one send: the engine resumes short
// sends until all of it is out (the echo proves every byte arrived).
func TestLargeBodyAndHEAD(t *testing.T) {
	t.Parallel()
	needURing(t)
	_, base := startServe(t, "127.0.0.1:0")
	body := []byte(strings.Repeat("0123456789abcdef", 4<<20/16))
	r := runJob(t, jobOpts{url: base + "echo", method: "POST", body: body, n: 12, c: 3})
	want200(t, r, 12, int64(len(body)))
	if r.t.SentBytes < 12*int64(len(body)) {
		t.Errorf("sent %d bytes, want more than %d", r.t.SentBytes, 12*len(body))
	}
	r = runJob(t, jobOpts{url: base + "?size=10k", method: "HEAD", n: 200, c: 4})
	want200(t, r, 200, 0)
}

// The engine allocates nothing per request: a run of 4200 requests
// allocates at most 100 more times than a run of 200 (setup is the same;
// the runtime's and the in-process server's own allocations vary by ~15
// on a quiet machine, 28 once beside every other package's tests: a longer
// run spans more of the collector's ticks), in both models and with
// connection-per-request. An allocation per request would show as 4000
// more, one per 40 requests as 100.
func TestNoAllocationsPerRequest(t *testing.T) {
	needURing(t)
	_, base := startServe(t, "127.0.0.1:0")
	for _, o := range []jobOpts{
		{url: base, c: 8},
		{url: base + "?size=10k&chunked=1", c: 8},
		{url: base, c: 8, rate: 100_000},
	} {
		mallocs := func(n uint64) uint64 {
			o.n = n
			runJob(t, o) // warm up: buffers, carry slices, arenas
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			runJob(t, o)
			runtime.ReadMemStats(&m1)
			return m1.Mallocs - m0.Mallocs
		}
		small, large := mallocs(200), mallocs(4200)
		t.Logf("%s rate %v: %d allocations for 200 requests, %d for 4200", o.url, o.rate, small, large)
		if int64(large)-int64(small) > 100 {
			t.Errorf("%s rate %v: %d allocations for 200 requests, %d for 4200: %.4f per request", o.url, o.rate, small, large, (float64(large)-float64(small))/4000)
		}
	}
}

// Connections spread unevenly over explicit workers (7 over 3 rings), and
// more workers than connections collapse to one per connection. The
// server answers none of the first requests until one has arrived on every
// connection, so the run needs them all at once (with a server that
// answered at once, a worker that a loaded machine started late could
// find the 700 requests all claimed, and its connections never opened).
func TestWorkers(t *testing.T) {
	t.Parallel()
	needURing(t)
	for _, tc := range []struct{ workers, conns int }{{3, 7}, {8, 2}} {
		var arrived, served atomic.Int64
		all := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if arrived.Add(1) == int64(tc.conns) {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(20 * time.Second):
			}
			served.Add(1)
			w.Write([]byte("hello world\n"))
		}))
		t.Cleanup(srv.Close)
		r := runJob(t, jobOpts{url: srv.URL + "/", n: 700, c: tc.conns, eng: &Engine{Workers: tc.workers}})
		want200(t, r, 700, 12)
		if r.t.Connects != int64(tc.conns) {
			t.Errorf("%d workers, %d connections: %d connects", tc.workers, tc.conns, r.t.Connects)
		}
		if got := served.Load(); got != 700 {
			t.Errorf("server saw %d requests", got)
		}
	}
}

// A closed-model origin's part of the run's connections (connShare) can
// leave every connection of one worker inactive: that worker parks them
// and claims nothing. When the other worker has claimed the last request,
// the parked one ends too: it does not wait for a part that can no longer
// give it a request (it did, and a scenario run with two targets hung).
func TestParkedWorkerEndsWithTheRun(t *testing.T) {
	t.Parallel()
	needURing(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) }))
	t.Cleanup(srv.Close)
	done := make(chan jobResult, 1)
	go func() {
		done <- runJob(t, jobOpts{url: srv.URL + "/", n: 50, c: 2, eng: &Engine{Workers: 2}, source: func(s *schedule.Source) {
			s.SetConnections(schedule.Ramp{Start: 2})
			s.SplitConnections(func(int) int { return 1 }) // connection 0 (worker 0's) only: worker 1's stays parked
		}})
	}()
	select {
	case r := <-done:
		want200(t, r, 50, 3)
		if r.t.Connects != 1 {
			t.Errorf("%d connects; want 1 (the parked connection never opens)", r.t.Connects)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end: the worker whose every connection is parked waits for ever")
	}
}

// When no memory can be mapped for a request's send buffer (requests that
// must be copied: a builder that reuses its buffer), the request ends as
// "out of memory" and the run goes on: no panic, every request counted,
// nothing reaches the server. Not parallel: it replaces newArena.
func TestSendBufferOutOfMemory(t *testing.T) {
	needURing(t)
	s, base := startServe(t, "127.0.0.1:0")
	saved := newArena
	t.Cleanup(func() { newArena = saved })
	newArena = func(size int) (*uring.Arena, error) {
		return nil, fmt.Errorf("uring: mmap arena of %d bytes: %w", size, unix.ENOMEM)
	}
	r := runJob(t, jobOpts{url: base, n: 50, c: 2, reqs: func(spec http1.RequestSpec) func(int) engine.Requests {
		return func(int) engine.Requests {
			return &reusingBuilder{specs: []http1.RequestSpec{spec}, done: make([]atomic.Int64, 1)}
		}
	}})
	if got := r.t.Errors[stats.ErrOutOfMemory]; got != 50 || r.t.Requests() != 50 {
		t.Errorf("%d requests, errors %v: want 50 × out of memory", r.t.Requests(), errorsOf(r.t))
	}
	if got := s.Stats().Requests; got != 0 {
		t.Errorf("the server saw %d requests", got)
	}
}
