package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestDefaultEndpoint(t *testing.T) {
	_, addr := startServer(t, Config{})
	cl := newClient(t)
	base := "http://" + addr
	for _, tc := range []struct {
		method, path, body string
		wantBody           string
	}{
		{"GET", "/", "", "hello world\n"},
		{"GET", "/anything/else?x=1", "", "hello world\n"},
		{"POST", "/", "some payload", "hello world\n"},
		{"PUT", "/x", strings.Repeat("p", 100_000), "hello world\n"},
		{"HEAD", "/", "", ""},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			r := do(t, cl, tc.method, base+tc.path, "", tc.body)
			if r.status != 200 || r.body != tc.wantBody {
				t.Fatalf("got %d %q", r.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "text/plain" {
				t.Errorf("Content-Type %q", ct)
			}
			if cl := r.header.Get("Content-Length"); cl != "12" {
				t.Errorf("Content-Length %q", cl)
			}
		})
	}
}

// The pre-encoded response must equal what the generic path produces.
func TestHelloResponseMatchesGeneric(t *testing.T) {
	s := New(Config{})
	c := newConn(s, newMemConn("", 0))
	c.req.Minor = 1
	c.respond(200, ctText, "", helloBody, false, true)
	if string(c.out) != string(helloResponse) {
		t.Fatalf("generic %q != pre-encoded %q", c.out, helloResponse)
	}
}

func TestHealthzAndStats(t *testing.T) {
	s, addr := startServer(t, Config{})
	cl := newClient(t)
	base := "http://" + addr
	if r := get(t, cl, base+"/healthz"); r.status != 200 || r.body != "ok\n" {
		t.Fatalf("healthz: %d %q", r.status, r.body)
	}
	get(t, cl, base+"/")
	get(t, cl, base+"/?status=503")
	get(t, cl, base+"/?status=503")
	r := get(t, cl, base+"/stats")
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("stats: %d %v", r.status, r.header)
	}
	var st Stats
	if err := json.Unmarshal([]byte(r.body), &st); err != nil {
		t.Fatalf("stats JSON %q: %v", r.body, err)
	}
	if st.Requests != 3 || st.ByStatus[200] != 1 || st.ByStatus[503] != 2 || len(st.ByStatus) != 2 {
		t.Errorf("stats %+v", st)
	}
	if st.ConnectionsAccepted != 1 || st.ConnectionsOpen != 1 || st.BytesIn == 0 || st.BytesOut == 0 {
		t.Errorf("connection stats %+v", st)
	}
	for _, key := range []string{`"requests":`, `"connections_accepted":`, `"connections_open":`, `"bytes_in":`,
		`"bytes_out":`, `"by_status":{"200":1,"503":2}`, `"items":{"created":0,"deleted":0,"live":0,"get_hits":0,` +
			`"get_misses":0,"delete_misses":0,"unknown_id_requests":0}`, `"holds":{"count":0,"asked_ns":0,"taken_ns":0}`} {
		if !strings.Contains(r.body, key) {
			t.Errorf("stats JSON %s lacks %s", r.body, key)
		}
	}
	if r := get(t, cl, base+"/stats/reset"); r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET /stats/reset: %d %v", r.status, r.header)
	}
	if r := do(t, cl, "POST", base+"/stats", "", ""); r.status != 405 {
		t.Errorf("POST /stats: %d", r.status)
	}
	do(t, cl, "POST", base+"/items", "", "")
	if r := do(t, cl, "POST", base+"/stats/reset", "", ""); r.status != 204 {
		t.Fatalf("reset: %d", r.status)
	}
	st = s.Stats()
	if st.Requests != 0 || len(st.ByStatus) != 0 || st.Items.Created != 0 || st.Items.Live != 1 || st.ConnectionsOpen != 1 {
		t.Errorf("after reset %+v", st)
	}
}

func TestEcho(t *testing.T) {
	_, addr := startServer(t, Config{})
	cl := newClient(t)
	base := "http://" + addr
	big := strings.Repeat("0123456789", 100_000)
	for _, tc := range []struct {
		name, method, ctype, body string
	}{
		{"empty", "GET", "", ""},
		{"small", "POST", "application/x-test", "hello echo"},
		{"1MB", "PUT", "application/octet-stream", big},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, cl, tc.method, base+"/echo", tc.ctype, tc.body)
			if r.status != 200 || r.body != tc.body {
				t.Fatalf("got %d, %d bytes", r.status, len(r.body))
			}
			if got := r.header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
		})
	}
	t.Run("chunked request", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			for i := 0; i < 10; i++ {
				fmt.Fprintf(pw, "part %d;", i)
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", base+"/echo", pr)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if want := "part 0;part 1;part 2;part 3;part 4;part 5;part 6;part 7;part 8;part 9;"; string(b) != want {
			t.Fatalf("echo %q", b)
		}
	})
	t.Run("headers", func(t *testing.T) {
		req, _ := http.NewRequest("GET", base+"/echo?headers=1", nil)
		req.Header.Set("X-Hail-Test", "yes")
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if !strings.HasPrefix(string(b), "GET /echo?headers=1 HTTP/1.1\r\n") || !strings.Contains(string(b), "X-Hail-Test: yes\r\n") ||
			strings.HasSuffix(string(b), "\r\n\r\n") {
			t.Fatalf("head %q", b)
		}
	})
}

func TestItems(t *testing.T) {
	s, addr := startServer(t, Config{})
	cl := newClient(t)
	base := "http://" + addr
	idRe := regexp.MustCompile(`^\{"id":"([0-9a-f]{16})"\}$`)

	r := do(t, cl, "POST", base+"/items", "application/json", `{"name":"a","n":[1,2]}`)
	m := idRe.FindStringSubmatch(r.body)
	if r.status != 201 || m == nil {
		t.Fatalf("POST: %d %q", r.status, r.body)
	}
	id1 := m[1]
	if loc := r.header.Get("Location"); loc != "/items/"+id1 {
		t.Errorf("Location %q", loc)
	}
	r = do(t, cl, "POST", base+"/items", "", "")
	m = idRe.FindStringSubmatch(r.body)
	if r.status != 201 || m == nil {
		t.Fatalf("POST: %d %q", r.status, r.body)
	}
	id2 := m[1]

	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/items/" + id1, "", 200, `{"id":"` + id1 + `","data":{"name":"a","n":[1,2]}}`},
		{"GET", "/items/" + id2, "", 200, `{"id":"` + id2 + `","data":null}`},
		{"GET", "/items", "", 200, `{"count":2}`},
		{"DELETE", "/items/" + id1, "", 204, ""},
		{"GET", "/items/" + id1, "", 404, `{"error":"not found"}`},
		{"DELETE", "/items/" + id1, "", 404, `{"error":"not found"}`},
		{"GET", "/items", "", 200, `{"count":1}`},
		{"GET", "/items/0123456789abcdef", "", 404, `{"error":"not found"}`},       // never issued
		{"DELETE", "/items/not-an-id", "", 404, `{"error":"not found"}`},           // never issued
		{"POST", "/items", "{not json", 400, `{"error":"body is not valid JSON"}`}, // not counted as created
		{"POST", "/items", strings.Repeat(" ", 70_000), 413, `{"error":"item body exceeds 65536 bytes"}`},
		{"PUT", "/items", "", 405, `{"error":"method not allowed"}`},
		{"POST", "/items/" + id2, "", 405, `{"error":"method not allowed"}`},
	} {
		r := do(t, cl, tc.method, base+tc.path, "", tc.body)
		if r.status != tc.status || r.body != tc.want {
			t.Errorf("%s %s: got %d %q, want %d %q", tc.method, tc.path, r.status, r.body, tc.status, tc.want)
		}
		if tc.status == 405 && r.header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tc.method, tc.path)
		}
		if tc.status != 204 && r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, r.header.Get("Content-Type"))
		}
	}
	want := ItemStats{Created: 2, Deleted: 1, Live: 1, GetHits: 2, GetMisses: 2, DeleteMisses: 2, UnknownIDRequests: 2}
	if got := s.Stats().Items; got != want {
		t.Errorf("item stats %+v, want %+v", got, want)
	}

	// Ids stay unique and decode back.
	seen := map[string]bool{id1: true, id2: true}
	for i := 0; i < 200; i++ {
		r := do(t, cl, "POST", base+"/items", "", "")
		m := idRe.FindStringSubmatch(r.body)
		if m == nil || seen[m[1]] {
			t.Fatalf("bad or duplicate id %q", r.body)
		}
		seen[m[1]] = true
	}
}

func TestItemIDBijection(t *testing.T) {
	var st itemStore
	st.init(7)
	st.next.Store(1000)
	for n := uint64(1); n <= 1000; n++ {
		id := st.appendID(nil, n)
		got, ok := st.lookupID(id)
		if !ok || got != n {
			t.Fatalf("id %s -> %d %v, want %d", id, got, ok, n)
		}
	}
	if _, ok := st.lookupID(st.appendID(nil, 1001)); ok {
		t.Fatal("id 1001 reported as issued")
	}
}

func TestPipelining(t *testing.T) {
	_, addr := startServer(t, Config{})
	c, br := rawConn(t, addr)
	_, err := io.WriteString(c, "GET /first HTTP/1.1\r\nHost: x\r\n\r\n"+
		"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nsecond"+
		"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nthi\r\n2;ext=1\r\nrd\r\n0\r\nTrailer: x\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"hello world\n", "second", "third"} {
		r := readResp(t, br, "GET")
		if r.status != 200 || r.body != want {
			t.Fatalf("response %d: %d %q, want %q", i, r.status, r.body, want)
		}
	}
}

func TestExpectContinue(t *testing.T) {
	_, addr := startServer(t, Config{})
	for _, te := range []string{"Content-Length: 5", "Transfer-Encoding: chunked"} {
		c, br := rawConn(t, addr)
		io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"+te+"\r\n\r\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
			t.Fatalf("%s: got %q %v", te, line, err)
		}
		if line, _ = br.ReadString('\n'); line != "\r\n" {
			t.Fatalf("%s: got %q after 100", te, line)
		}
		body := "hello"
		if strings.HasPrefix(te, "Transfer") {
			body = "5\r\nhello\r\n0\r\n\r\n"
		}
		io.WriteString(c, body)
		if r := readResp(t, br, "POST"); r.status != 200 || r.body != "hello" {
			t.Fatalf("%s: %d %q", te, r.status, r.body)
		}
	}
	// Body already sent with the head: no 100 Continue.
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi")
	if r := readResp(t, br, "POST"); r.status != 200 || r.body != "hi" {
		t.Fatalf("%d %q", r.status, r.body)
	}
}

func TestMalformedRequests(t *testing.T) {
	_, addr := startServer(t, Config{MaxBodyBytes: 1000})
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"garbage", "this is not http\r\n\r\n", 400},
		{"no version", "GET /\r\n\r\n", 400},
		{"bad method", "G(T / HTTP/1.1\r\n\r\n", 400},
		{"relative target", "GET foo HTTP/1.1\r\n\r\n", 400},
		{"bad version", "GET / HTTP/x.y\r\n\r\n", 400},
		{"http2", "GET / HTTP/2.0\r\n\r\n", 505},
		{"header without colon", "GET / HTTP/1.1\r\nHost x\r\n\r\n", 400},
		{"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
		{"obs-fold", "GET / HTTP/1.1\r\nX-A: 1\r\n  continued\r\n\r\n", 400},
		{"control char", "GET / HTTP/1.1\r\nX-A: a\x01b\r\n\r\n", 400},
		{"bad content-length", "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400},
		{"negative content-length", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
		{"conflicting content-length", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"cl and te", "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"bad chunk size", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
		{"chunk without crlf", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n", 400},
		{"gzip te", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"expect other", "POST / HTTP/1.1\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx", 417},
		{"body too large", "POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n", 413},
		{"chunked too large", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n", 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := rawConn(t, addr)
			io.WriteString(c, tc.req)
			r := readResp(t, br, "GET")
			if r.status != tc.status || !r.close {
				t.Fatalf("got %d close=%v %q, want %d and close", r.status, r.close, r.body, tc.status)
			}
			if strings.Count(r.body, "\n") != 1 {
				t.Errorf("body %q is not one line", r.body)
			}
			expectEOF(t, br)
		})
	}
}

func TestHeaderTooLarge(t *testing.T) {
	_, addr := startServer(t, Config{})
	c, br := rawConn(t, addr)
	go func() {
		io.WriteString(c, "GET / HTTP/1.1\r\nX-Big: "+strings.Repeat("a", 70<<10)+"\r\n\r\n")
	}()
	r := readResp(t, br, "GET")
	if r.status != 431 || !r.close {
		t.Fatalf("got %d close=%v", r.status, r.close)
	}
	expectEOF(t, br)

	// Just under the limit works, and the buffer shrinks back afterwards.
	c, br = rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nX-Big: "+strings.Repeat("a", 60<<10)+"\r\n\r\nGET / HTTP/1.1\r\n\r\n")
	for i := 0; i < 2; i++ {
		if r := readResp(t, br, "GET"); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
}

func TestHTTP10AndConnectionClose(t *testing.T) {
	_, addr := startServer(t, Config{})
	t.Run("1.0 closes", func(t *testing.T) {
		c, br := rawConn(t, addr)
		io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
		r := readResp(t, br, "GET")
		if r.status != 200 || r.body != "hello world\n" || !r.close {
			t.Fatalf("%d %q %v", r.status, r.body, r.header)
		}
		expectEOF(t, br)
	})
	t.Run("1.0 keep-alive", func(t *testing.T) {
		c, br := rawConn(t, addr)
		for i := 0; i < 3; i++ {
			io.WriteString(c, "GET /?chunked=1 HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
			r := readResp(t, br, "GET")
			if r.status != 200 || r.body != "hello world\n" || r.header.Get("Connection") != "keep-alive" || r.te != nil {
				t.Fatalf("%d %q %v %v", r.status, r.body, r.header, r.te)
			}
		}
	})
	t.Run("1.1 close", func(t *testing.T) {
		c, br := rawConn(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n\r\n")
		if r := readResp(t, br, "GET"); r.status != 200 || !r.close {
			t.Fatalf("%d close=%v", r.status, r.close)
		}
		expectEOF(t, br)
	})
	t.Run("absolute form", func(t *testing.T) {
		c, br := rawConn(t, addr)
		io.WriteString(c, "GET http://example.com/echo?headers=1 HTTP/1.1\r\n\r\n")
		if r := readResp(t, br, "GET"); r.status != 200 || !strings.HasPrefix(r.body, "GET http://") {
			t.Fatalf("%d %q", r.status, r.body)
		}
	})
}

func TestUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hail.sock")
	// Leave a stale socket file behind, as a killed server would.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	s := New(Config{Addr: "unix:" + path})
	if _, err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: testTimeout}
	if r := get(t, cl, "http://unix/"); r.status != 200 || r.body != "hello world\n" {
		t.Fatalf("%d %q", r.status, r.body)
	}
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	s := New(Config{Addr: "127.0.0.1:0"})
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	serveDone := make(chan error, 1)
	go func() { serveDone <- s.Serve() }()
	var conns []net.Conn
	for _, req := range []string{
		"",                                 // idle
		"GET / HTTP/1.1\r\n",               // partial head
		"GET /?delay=10s HTTP/1.1\r\n\r\n", // sleeping in a delay
		"POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc", // partial body
		"GET / HTTP/1.1\r\n\r\n",                            // served, then idle
	} {
		c, err := net.DialTimeout("tcp", addr.String(), testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, req)
		conns = append(conns, c)
	}
	deadline := time.Now().Add(testTimeout)
	for s.Stats().ConnectionsOpen != int64(len(conns)) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the requests reach their blocking points
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := <-serveDone; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if n := s.Stats().ConnectionsOpen; n != 0 {
		t.Errorf("%d connections open after Close", n)
	}
	for _, c := range conns {
		c.Close()
	}
	var now int
	for time.Now().Before(deadline) {
		if now = runtime.NumGoroutine(); now <= before {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if now > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after Close:\n%s", before, now, buf[:runtime.Stack(buf, true)])
	}
	if _, err := s.Listen(); err != ErrServerClosed {
		t.Errorf("Listen after Close: %v", err)
	}
	if err := s.Serve(); err != nil {
		t.Errorf("Serve after Close: %v", err)
	}
}

func TestIdleTimeout(t *testing.T) {
	_, addr := startServer(t, Config{IdleTimeout: 100 * time.Millisecond})
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\n\r\n")
	readResp(t, br, "GET")
	start := time.Now()
	expectEOF(t, br)
	if d := time.Since(start); d < 80*time.Millisecond || d > 2*time.Second {
		t.Errorf("closed after %v, want about 100ms", d)
	}
}

func TestIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.2:80", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"LOCALHOST:1", true},
		{"unix:/tmp/hail.sock", true},
		{"127.0.0.1", true},
		{"[::ffff:127.0.0.1]:80", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"10.0.0.1:8080", false},
		{"example.com:80", false},
		{"", false},
	} {
		if got := IsLoopback(tc.addr); got != tc.want {
			t.Errorf("IsLoopback(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}
