package serve

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFaultDelay(t *testing.T) {
	s, addr := startServer(t, Config{})
	cl := newClient(t)
	get(t, cl, "http://"+addr+"/") // warm the connection
	for _, tc := range []struct {
		query string
		want  time.Duration
	}{
		{"delay=60ms", 60 * time.Millisecond},
		{"delay=40", 40 * time.Millisecond}, // plain number = ms
		{"delay=0", 0},
		{"delay=30ms:100", 30 * time.Millisecond},
	} {
		start := time.Now()
		r := get(t, cl, "http://"+addr+"/?"+tc.query)
		d := time.Since(start)
		if r.status != 200 || r.body != "hello world\n" {
			t.Fatalf("%s: %d %q", tc.query, r.status, r.body)
		}
		if d < tc.want || d > tc.want+300*time.Millisecond {
			t.Errorf("%s: took %v, want about %v", tc.query, d, tc.want)
		}
	}
	// The three holds, as asked and as held: never shorter, and within
	// what the client saw.
	h := s.Stats().Holds
	if h.Count != 3 || h.Asked != 130*time.Millisecond || h.Taken < h.Asked || h.Taken > h.Asked+900*time.Millisecond {
		t.Errorf("holds %+v, want 3 asked 130ms, taken at least that", h)
	}
}

// The delay distribution is checked without the network.
func TestDelayDistribution(t *testing.T) {
	s := New(Config{Seed: 1})
	f := s.parseFaults("delay=2ms:90,50ms:7")
	if f.err != "" {
		t.Fatal(f.err)
	}
	var rng rand.PCG
	rng.Seed(1, 2)
	counts := map[time.Duration]int{}
	const n = 20000
	for i := 0; i < n; i++ {
		d, _ := pick(f.delays, pct(&rng))
		counts[d]++
	}
	for d, want := range map[time.Duration]float64{2 * time.Millisecond: 90, 50 * time.Millisecond: 7, 0: 3} {
		if got := 100 * float64(counts[d]) / n; math.Abs(got-want) > 1 {
			t.Errorf("delay %v: %.2f%%, want %v%%", d, got, want)
		}
	}
}

func TestFaultStatus(t *testing.T) {
	_, addr := startServer(t, Config{})
	cl := newClient(t)
	const n = 2000
	counts := map[int]int{}
	for i := 0; i < n; i++ {
		r := get(t, cl, "http://"+addr+"/x?status=503:10,500:5")
		counts[r.status]++
		if r.body != "hello world\n" {
			t.Fatalf("body %q", r.body)
		}
	}
	for code, want := range map[int]float64{503: 10, 500: 5, 200: 85} {
		if got := 100 * float64(counts[code]) / n; math.Abs(got-want) > 3 {
			t.Errorf("status %d: %.1f%%, want %v%% ±3", code, got, want)
		}
	}
	for _, tc := range []struct {
		url    string
		status int
		body   string
	}{
		{"/?status=404", 404, "hello world\n"},
		{"/?status=418:100", 418, "hello world\n"},
		{"/?status=204", 204, ""},
		{"/echo?status=503", 503, "hello world\n"},   // handler does not run
		{"/items?status=500&size=3", 500, "abc"},     // default size= body
		{"/?status=201%3A100", 201, "hello world\n"}, // percent-encoded
		{"/?status=200:0", 200, "hello world\n"},
	} {
		r := do(t, cl, "POST", "http://"+addr+tc.url, "", "")
		if r.status != tc.status || r.body != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.url, r.status, r.body, tc.status, tc.body)
		}
	}
}

func TestFaultSize(t *testing.T) {
	_, addr := startServer(t, Config{})
	cl := newClient(t)
	for _, tc := range []struct {
		size string
		n    int
	}{
		{"0", 0}, {"1", 1}, {"1k", 1024}, {"4097", 4097}, {"100000", 100000}, {"1m", 1 << 20}, {"3M", 3 << 20},
	} {
		for _, chunked := range []string{"", "&chunked=1"} {
			r := get(t, cl, "http://"+addr+"/?size="+tc.size+chunked)
			if r.status != 200 || len(r.body) != tc.n {
				t.Errorf("size=%s%s: %d, %d bytes, want %d", tc.size, chunked, r.status, len(r.body), tc.n)
			}
			if r.body != string(patternPrefix(tc.n)) {
				t.Errorf("size=%s%s: body differs from the pattern", tc.size, chunked)
			}
			if chunked == "" && r.header.Get("Content-Length") != strconv.Itoa(tc.n) {
				t.Errorf("size=%s: Content-Length %q", tc.size, r.header.Get("Content-Length"))
			}
		}
	}
}

func patternPrefix(n int) []byte {
	b := make([]byte, 0, n)
	for len(b) < n {
		b = append(b, pattern[:min(n-len(b), len(pattern))]...)
	}
	return b
}

func TestFaultChunked(t *testing.T) {
	_, addr := startServer(t, Config{})
	cl := newClient(t)
	for _, tc := range []struct{ url, body string }{
		{"/?chunked=1", "hello world\n"},
		{"/?chunked=true&size=10000", string(patternPrefix(10000))},
		{"/echo?chunked=1&headers=0", ""},
		{"/?chunked=1&size=0", ""},
	} {
		r := get(t, cl, "http://"+addr+tc.url)
		if r.status != 200 || r.body != tc.body || len(r.te) != 1 || r.te[0] != "chunked" {
			t.Errorf("%s: %d te=%v %d bytes", tc.url, r.status, r.te, len(r.body))
		}
	}
	// Raw check of the framing: chunks of at most 4 KiB.
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET /?chunked=1&size=9000 HTTP/1.1\r\n\r\n")
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	var sizes []int64
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk line %q", line)
		}
		sizes = append(sizes, n)
		io.CopyN(io.Discard, br, n+2)
		if n == 0 {
			break
		}
	}
	if fmt.Sprint(sizes) != "[4096 4096 808 0]" {
		t.Errorf("chunk sizes %v", sizes)
	}
}

func TestFaultClose(t *testing.T) {
	s, addr := startServer(t, Config{})
	cl := newClient(t)
	const n = 400
	closed := 0
	for i := 0; i < n; i++ {
		if r := get(t, cl, "http://"+addr+"/?close=25"); r.close {
			closed++
		}
	}
	if got := 100 * float64(closed) / n; math.Abs(got-25) > 7 {
		t.Errorf("%.1f%% closed, want 25%%", got)
	}
	// Every close must really have closed a connection: the client reconnected.
	if acc := s.Stats().ConnectionsAccepted; acc != uint64(closed)+1 && acc != uint64(closed) {
		t.Errorf("%d connections for %d closes", acc, closed)
	}
	if r := get(t, cl, "http://"+addr+"/?close=100"); !r.close {
		t.Error("close=100 did not close")
	}
}

func TestFaultStall(t *testing.T) {
	_, addr := startServer(t, Config{})
	const q = "/?stall=300ms@200ms"
	cl := newClient(t)
	get(t, cl, "http://"+addr+"/") // warm up one connection

	type res struct {
		name  string
		start time.Duration
		took  time.Duration
	}
	t0 := time.Now()
	first := get(t, cl, "http://"+addr+q) // sets T0 on the server
	if first.status != 200 || time.Since(t0) > 150*time.Millisecond {
		t.Fatalf("first request: %d after %v", first.status, time.Since(t0))
	}
	var (
		mu      sync.Mutex
		results []res
		wg      sync.WaitGroup
	)
	// Requests at T0+250ms and T0+350ms fall into [T0+200ms, T0+500ms) and
	// are held until T0+500ms; the one at T0+650ms is not. A different stall
	// value has its own T0 and is not held at all.
	for _, p := range []struct {
		name string
		at   time.Duration
		url  string
	}{
		{"in1", 250 * time.Millisecond, q},
		{"in2", 350 * time.Millisecond, q},
		{"after", 650 * time.Millisecond, q},
		{"other", 300 * time.Millisecond, "/?stall=300ms@200ms&x=1"},
		{"other-value", 300 * time.Millisecond, "/?stall=1s@1s"},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(p.at - time.Since(t0))
			cl := newClient(t)
			start := time.Since(t0)
			r := get(t, cl, "http://"+addr+p.url)
			if r.status != 200 {
				t.Errorf("%s: status %d", p.name, r.status)
			}
			mu.Lock()
			results = append(results, res{p.name, start, time.Since(t0) - start})
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, r := range results {
		end := r.start + r.took
		switch r.name {
		case "in1", "in2", "other": // "other" has the same stall value, so shares T0
			if end < 480*time.Millisecond || end > 800*time.Millisecond {
				t.Errorf("%s: sent at %v, done at %v; want held until about 500ms", r.name, r.start, end)
			}
		default:
			if r.took > 150*time.Millisecond {
				t.Errorf("%s: sent at %v took %v; want not held", r.name, r.start, r.took)
			}
		}
	}
}

func TestStallHold(t *testing.T) {
	st := &stallState{dur: 2 * time.Second, off: 4 * time.Second}
	ms := time.Millisecond
	for _, tc := range []struct{ arrival, now, want time.Duration }{
		{1000 * ms, 1000 * ms, 0}, // first request sets T0 = 1s
		{4999 * ms, 4999 * ms, 0}, // before the window
		{5000 * ms, 5000 * ms, 2000 * ms},
		{5500 * ms, 6900 * ms, 100 * ms},
		{6999 * ms, 6999 * ms, 1 * ms},
		{7000 * ms, 7000 * ms, 0}, // window over
		{9000 * ms, 9000 * ms, 0},
	} {
		if got := st.hold(tc.arrival, tc.now); got != tc.want {
			t.Errorf("hold(%v, %v) = %v, want %v", tc.arrival, tc.now, got, tc.want)
		}
	}
}

func TestBadFaultParams(t *testing.T) {
	_, addr := startServer(t, Config{})
	c, br := rawConn(t, addr)
	for _, tc := range []struct{ query, param string }{
		{"delay=abc", "delay"},
		{"delay=-5ms", "delay"},
		{"delay=11m", "delay"},
		{"delay=1ms:50,2ms", "delay"},
		{"delay=", "delay"},
		{"status=99", "status"},
		{"status=600", "status"},
		{"status=abc", "status"},
		{"status=503:60,500:50", "status"},
		{"status=503:x", "status"},
		{"size=65m", "size"},
		{"size=-1", "size"},
		{"size=1g", "size"},
		{"close=101", "close"},
		{"close=abc", "close"},
		{"stall=x", "stall"},
		{"stall=1s@y", "stall"},
		{"chunked=maybe", "chunked"},
		{"headers=2", "headers"},
		{"delay=1ms&delay=2ms", "delay"},
		{"size=%zz", "size"},
	} {
		io.WriteString(c, "GET /?"+tc.query+" HTTP/1.1\r\nHost: x\r\n\r\n")
		r := readResp(t, br, "GET")
		if r.status != 400 || r.close || !strings.HasPrefix(r.body, "bad parameter "+tc.param+"=") ||
			strings.Count(r.body, "\n") != 1 || !strings.HasSuffix(r.body, "\n") {
			t.Errorf("%s: %d close=%v %q", tc.query, r.status, r.close, r.body)
		}
	}
	// Unknown parameters are ignored; the connection is still usable.
	io.WriteString(c, "GET /?foo=bar&cachebust=123 HTTP/1.1\r\n\r\n")
	if r := readResp(t, br, "GET"); r.status != 200 {
		t.Errorf("unknown params: %d", r.status)
	}
}

func TestParseFaults(t *testing.T) {
	s := New(Config{Seed: 1})
	f := s.parseFaults("delay=2ms:90,50ms:10&status=503:10,500:5&size=1k&close=5&chunked=1&stall=2s@4s")
	if f.err != "" {
		t.Fatal(f.err)
	}
	if len(f.delays) != 2 || f.delays[0] != (weighted[time.Duration]{90, 2 * time.Millisecond}) ||
		f.delays[1] != (weighted[time.Duration]{100, 50 * time.Millisecond}) {
		t.Errorf("delays %v", f.delays)
	}
	if len(f.statuses) != 2 || f.statuses[0] != (weighted[int]{10, 503}) || f.statuses[1] != (weighted[int]{15, 500}) {
		t.Errorf("statuses %v", f.statuses)
	}
	if f.size != 1024 || f.closePct != 5 || !f.chunked || f.stall == nil || f.stall.dur != 2*time.Second || f.stall.off != 4*time.Second {
		t.Errorf("faults %+v", f)
	}
	if g := s.parseFaults("stall=2s@4s"); g.stall != f.stall {
		t.Error("same stall value got a different state")
	}
	if g := s.parseFaults("stall=1500"); g.err != "" || g.stall.dur != 1500*time.Millisecond || g.stall.off != 0 {
		t.Errorf("stall=1500: %+v", g)
	}
}

// Repeated identical queries are served from the per-connection cache
// without allocating.
func TestFaultCache(t *testing.T) {
	s := New(Config{Seed: 1})
	c := newConn(s, newMemConn("", 0))
	a := c.faultsFor([]byte("size=10"))
	if b := c.faultsFor([]byte("size=10")); a != b {
		t.Fatal("cache miss on identical query")
	}
	for i := 0; i < faultCacheSize; i++ {
		c.faultsFor([]byte("size=" + strconv.Itoa(i)))
	}
	if b := c.faultsFor([]byte("size=10")); a == b {
		t.Fatal("cache did not evict")
	}
	q := []byte("size=10")
	if n := testing.AllocsPerRun(100, func() { c.faultsFor(q) }); n != 0 {
		t.Errorf("cache hit allocates %v times", n)
	}
}

// Queries with faults that do not sleep are zero-alloc once cached too.
func TestQueryGETZeroAllocs(t *testing.T) {
	s := New(Config{Seed: 1})
	mc := newMemConn("GET /?size=100&status=503:50&chunked=1 HTTP/1.1\r\nHost: x\r\n\r\n", 1<<30)
	c := newConn(s, mc)
	c.handle()
	if n := testing.AllocsPerRun(1000, func() { c.handle() }); n != 0 {
		t.Errorf("%v allocs per request", n)
	}
}
