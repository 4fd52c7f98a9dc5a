package serve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/testnet"
)

const testTimeout = 10 * time.Second

// startServer starts a server on 127.0.0.1:0 and closes it when the test
// ends, checking that Serve returned nil.
func startServer(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	s := New(cfg)
	return s, testnet.Start(t, s).String()
}

// newClient returns an HTTP client with its own transport, cleaned up with
// the test.
func newClient(t testing.TB) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testTimeout}
}

type result struct {
	status int
	header http.Header
	body   string
	close  bool
	te     []string
}

func do(t testing.TB, cl *http.Client, method, url, ctype, body string) result {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return result{resp.StatusCode, resp.Header, string(b), resp.Close, resp.TransferEncoding}
}

func get(t testing.TB, cl *http.Client, url string) result {
	t.Helper()
	return do(t, cl, "GET", url, "", "")
}

// rawConn dials addr with a deadline covering the whole test step.
func rawConn(t testing.TB, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// readResp reads one response from a raw connection.
func readResp(t testing.TB, br *bufio.Reader, method string) result {
	t.Helper()
	req, _ := http.NewRequest(method, "/", nil)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return result{resp.StatusCode, resp.Header, string(b), resp.Close, resp.TransferEncoding}
}

// expectEOF checks that the server closes the connection.
func expectEOF(t testing.TB, br *bufio.Reader) {
	t.Helper()
	b, err := br.ReadByte()
	if err == nil {
		t.Fatalf("expected close, got byte %q", b)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("expected close, got timeout")
	}
}

// memConn is an in-memory net.Conn: every Read returns src (up to chunk
// bytes at a time, if chunk > 0) until left reads have been served, then
// io.EOF; writes are counted and discarded.
type memConn struct {
	src     []byte
	pos     int
	left    int
	chunk   int
	written int
	out     []byte // kept when keep is set
	keep    bool
}

func (m *memConn) Read(p []byte) (int, error) {
	if m.pos == len(m.src) {
		if m.left <= 0 {
			return 0, io.EOF
		}
		m.left--
		m.pos = 0
	}
	b := m.src[m.pos:]
	if m.chunk > 0 && len(b) > m.chunk {
		b = b[:m.chunk]
	}
	n := copy(p, b)
	m.pos += n
	return n, nil
}

func (m *memConn) Write(p []byte) (int, error) {
	m.written += len(p)
	if m.keep {
		m.out = append(m.out, p...)
	}
	return len(p), nil
}

func (m *memConn) Close() error                       { return nil }
func (m *memConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (m *memConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (m *memConn) SetDeadline(t time.Time) error      { return nil }
func (m *memConn) SetReadDeadline(t time.Time) error  { return nil }
func (m *memConn) SetWriteDeadline(t time.Time) error { return nil }

// newMemConn returns a memConn whose first Read starts at src and which
// serves src reads times.
func newMemConn(src string, reads int) *memConn {
	return &memConn{src: []byte(src), pos: len(src), left: reads}
}
