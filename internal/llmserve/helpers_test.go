package llmserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/testnet"
)

const testTimeout = 10 * time.Second

// syncBuffer is a log destination safe to read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testServer is a running mock and what a test reads back from it.
type testServer struct {
	*Server
	addr string
	log  *syncBuffer
}

func mustDist(t testing.TB, s string) Dist {
	t.Helper()
	d, err := ParseDist(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startServer starts a mock on 127.0.0.1:0 with a request log, closing it
// (and checking Close and Serve) when the test ends.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	ts := &testServer{log: &syncBuffer{}}
	if cfg.Log == nil {
		cfg.Log = ts.log
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts.Server, ts.addr = s, testnet.Start(t, s).String()
	return ts
}

// logLine is one request of the log, by column name.
type logLine map[string]string

func (l logLine) int(col string) int64 {
	n, err := strconv.ParseInt(l[col], 10, 64)
	if err != nil {
		panic(fmt.Sprintf("column %s: %q", col, l[col]))
	}
	return n
}

// lines waits until the log holds n requests and returns them, by request
// number.
func (ts *testServer) lines(t testing.TB, n int) map[int64]logLine {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		recs, err := csv.NewReader(strings.NewReader(ts.log.String())).ReadAll()
		if err != nil {
			t.Fatalf("the log is not CSV: %v\n%s", err, ts.log.String())
		}
		if len(recs) >= 1 && strings.Join(recs[0], ",")+"\n" != logHeader {
			t.Fatalf("log header %q", recs[0])
		}
		if len(recs) >= n+1 {
			out := map[int64]logLine{}
			for _, r := range recs[1:] {
				l := logLine{}
				for i, col := range recs[0] {
					l[col] = r[i]
				}
				out[l.int("request")] = l
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log has %d requests, want %d:\n%s", len(recs)-1, n, ts.log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// event is one server-sent event as a client read it.
type event struct {
	data string
	at   time.Time // when the read that completed it returned
}

// rawResponse is a response read off a raw socket.
type rawResponse struct {
	status  int
	head    string
	events  []event
	body    string // a non-streaming body
	closed  bool   // the connection ended without the response's proper end
	started time.Time
}

// rawRequest POSTs body to path over a new raw TCP connection and reads the
// response, decoding HTTP/1.1 chunked framing itself and timestamping each
// event; the connection's end before the last chunk sets closed.
func rawRequest(t testing.TB, addr, path, body string) *rawResponse {
	t.Helper()
	r, err := sendRaw(addr, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sendRaw is rawRequest returning its error: no response head, say.
func sendRaw(addr, path, body string) (*rawResponse, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	r := &rawResponse{started: time.Now()}
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body); err != nil {
		return nil, err
	}
	return r, r.read(bufio.NewReader(c))
}

func (r *rawResponse) read(br *bufio.Reader) error {
	head, err := readHead(br)
	if err != nil {
		return err
	}
	r.head = head
	if _, err := fmt.Sscanf(head, "HTTP/1.1 %d", &r.status); err != nil {
		return fmt.Errorf("status line %q", head)
	}
	if r.status < 200 {
		return nil // an interim response: the final one follows
	}
	if cl := headerValue(head, "Content-Length"); cl != "" {
		n, _ := strconv.Atoi(cl)
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			r.closed = true
		}
		r.body = string(b)
		return nil
	}
	if headerValue(head, "Transfer-Encoding") != "chunked" {
		b, _ := io.ReadAll(br) // HTTP/1.0: to the close
		r.parseEvents(string(b), time.Now())
		return nil
	}
	var pending string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			r.closed = true
			return nil
		}
		size, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			return fmt.Errorf("chunk size line %q", line)
		}
		if size == 0 {
			if l, err := br.ReadString('\n'); err != nil || l != "\r\n" {
				r.closed = true
			}
			return nil
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(br, b); err != nil {
			r.closed = true
			return nil
		}
		pending += string(b[:size])
		at := time.Now()
		for {
			i := strings.Index(pending, "\n\n")
			if i < 0 {
				break
			}
			r.parseEvents(pending[:i+2], at)
			pending = pending[i+2:]
		}
	}
}

func (r *rawResponse) parseEvents(s string, at time.Time) {
	for _, e := range strings.Split(s, "\n\n") {
		if e = strings.TrimSpace(e); e != "" {
			r.events = append(r.events, event{strings.TrimPrefix(e, "data: "), at})
		}
	}
}

func readHead(br *bufio.Reader) (string, error) {
	var head strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return head.String(), fmt.Errorf("reading the head: %v (so far %q)", err, head.String())
		}
		if line == "\r\n" {
			return head.String(), nil
		}
		head.WriteString(line)
	}
}

func headerValue(head, name string) string {
	for _, l := range strings.Split(head, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// chunk is a streamed chunk's JSON, decoded.
type chunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []map[string]any `json:"choices"`
	Usage   *struct {
		Prompt     int `json:"prompt_tokens"`
		Total      int `json:"total_tokens"`
		Completion int `json:"completion_tokens"`
	} `json:"usage"`
	SentNS int64           `json:"hail_sent_ns"`
	Error  json.RawMessage `json:"error"`
	raw    map[string]json.RawMessage
}

func decodeChunk(t testing.TB, s string) chunk {
	t.Helper()
	var c chunk
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		t.Fatalf("event %q: %v", s, err)
	}
	json.Unmarshal([]byte(s), &c.raw)
	return c
}

// text is a content chunk's text (completions) or delta content (chat), and
// whether it is one.
func (c chunk) text() (string, bool) {
	if len(c.Choices) == 0 {
		return "", false
	}
	if s, ok := c.Choices[0]["text"].(string); ok {
		return s, s != ""
	}
	if d, ok := c.Choices[0]["delta"].(map[string]any); ok {
		s, _ := d["content"].(string)
		return s, s != ""
	}
	return "", false
}

// streamClient is a net/http client for HTTP/1.1 or h2c (prior knowledge).
func streamClient(t testing.TB, h2 bool) *http.Client {
	tr := &http.Transport{DisableCompression: true, Protocols: new(http.Protocols)}
	if h2 {
		tr.Protocols.SetUnencryptedHTTP2(true)
	} else {
		tr.Protocols.SetHTTP1(true)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testTimeout}
}

// httpResponse is a response read with net/http.
type httpResponse struct {
	status  int
	header  http.Header
	proto   int
	events  []event
	body    string
	err     error // reading the body failed (a reset stream, a cut connection)
	started time.Time
}

// httpRequest POSTs body with client and reads the response; an event
// stream is split into events as they arrive.
func httpRequest(t testing.TB, client *http.Client, url, body string) *httpResponse {
	t.Helper()
	r, err := doHTTP(client, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// doHTTP is httpRequest returning the request's error.
func doHTTP(client *http.Client, url, body string) (*httpResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &httpResponse{status: resp.StatusCode, header: resp.Header, proto: resp.ProtoMajor, started: start}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		r.body, r.err = string(b), err
		return r, nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			r.events = append(r.events, event{strings.TrimPrefix(l, "data: "), time.Now()})
		}
	}
	r.err = sc.Err()
	if r.err == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.err = ctx.Err()
	}
	return r, nil
}
