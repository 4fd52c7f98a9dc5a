package llmserve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// conversation sends raw bytes on one connection and reads the responses
// that follow, in order.
type conversation struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, ts *testServer) *conversation {
	t.Helper()
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	return &conversation{t, c, bufio.NewReader(c)}
}

func (cv *conversation) send(s string) {
	cv.t.Helper()
	if _, err := io.WriteString(cv.c, s); err != nil {
		cv.t.Fatal(err)
	}
}

func (cv *conversation) response() *rawResponse {
	cv.t.Helper()
	r := &rawResponse{}
	if err := r.read(cv.br); err != nil {
		cv.t.Fatal(err)
	}
	return r
}

// closed reports whether the server has closed the connection.
func (cv *conversation) closed() bool {
	cv.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := cv.br.ReadByte()
	return err == io.EOF
}

func post11(path, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
}

// Bad generation requests get 400 with an OpenAI error object naming the
// problem, and the connection stays open.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Config{})
	cv := dial(t, ts)
	for _, c := range []struct{ path, body, want string }{
		{"/v1/completions", `{"prompt":`, "not a JSON request object"},
		{"/v1/completions", `[1,2]`, "not a JSON request object"},
		{"/v1/completions", `{"max_tokens":3}`, "prompt is required"},
		{"/v1/completions", `{"prompt":["a","b"]}`, "a list of 2 prompts"},
		{"/v1/completions", `{"prompt":{"x":1}}`, "prompt must be"},
		{"/v1/completions", `{"prompt":"a","max_tokens":0}`, "max_tokens 0"},
		{"/v1/completions", `{"prompt":"a","max_tokens":2000000}`, "max_tokens 2000000"},
		{"/v1/completions", `{"prompt":"a","max_tokens":3,"min_tokens":4}`, "min_tokens 4"},
		{"/v1/completions", `{"prompt":"a","n":2}`, "n 2"},
		{"/v1/completions", `{"prompt":"a","stream_options":{"include_usage":true}}`, "stream_options"},
		{"/v1/chat/completions", `{"messages":[]}`, "messages is required"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":7}]}`, "messages[0].content"},
	} {
		cv.send(post11(c.path, c.body))
		r := cv.response()
		var e struct {
			Error struct {
				Message, Type string
				Code          int
			}
		}
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != 400 || e.Error.Code != 400 ||
			e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("%s: status %d, body %s; want 400 with %q", c.body, r.status, r.body, c.want)
		}
	}
	if st := ts.Stats(); st.BadRequests != 12 || st.Requests != 12 {
		t.Errorf("stats %+v", st)
	}
}

// The other endpoints, methods and paths.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Config{Model: "llama-x"})
	cv := dial(t, ts)
	cv.send("GET /v1/models HTTP/1.1\r\n\r\n")
	r := cv.response()
	var models struct {
		Object string
		Data   []struct{ ID, Object string }
	}
	if err := json.Unmarshal([]byte(r.body), &models); err != nil || r.status != 200 || models.Object != "list" ||
		len(models.Data) != 1 || models.Data[0].ID != "llama-x" || models.Data[0].Object != "model" {
		t.Errorf("/v1/models: %d %s", r.status, r.body)
	}
	cv.send("GET /health HTTP/1.1\r\n\r\n")
	if r := cv.response(); r.status != 200 || r.body != "" {
		t.Errorf("/health: %d %q", r.status, r.body)
	}
	cv.send("HEAD /health HTTP/1.1\r\n\r\n")
	if r := cv.response(); r.status != 200 {
		t.Errorf("HEAD /health: %d", r.status)
	}
	cv.send("GET /v1/completions HTTP/1.1\r\n\r\n")
	if r := cv.response(); r.status != 405 || headerValue(r.head, "Allow") != "POST" {
		t.Errorf("GET /v1/completions: %d, Allow %q", r.status, headerValue(r.head, "Allow"))
	}
	cv.send("GET /v2/other?x=1 HTTP/1.1\r\n\r\n")
	if r := cv.response(); r.status != 404 || !strings.Contains(r.body, "/v1/completions") {
		t.Errorf("unknown path: %d %s", r.status, r.body)
	}
	cv.send(post11("/v1/completions?api-version=1", `{"prompt":"a","max_tokens":2}`))
	if r := cv.response(); r.status != 200 {
		t.Errorf("a query on /v1/completions: %d %s", r.status, r.body)
	}
	cv.send("GET /stats HTTP/1.1\r\n\r\n")
	var st Stats
	if r := cv.response(); json.Unmarshal([]byte(r.body), &st) != nil || st.Requests != 1 || st.Completed != 1 || st.Tokens != 2 || st.Connections != 1 {
		t.Errorf("/stats: %s", r.body)
	}
}

// HTTP/1.1 details: chunked request bodies, Expect: 100-continue,
// pipelining, Connection: close, HTTP/1.0 streams (no chunking, closed at
// the end), and protocol errors answered and closed.
func TestHTTP1(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Config{MaxBodyBytes: 4096})
	body := `{"prompt":"a b","max_tokens":3,"stream":true}`
	t.Run("chunked body", func(t *testing.T) {
		cv := dial(t, ts)
		cv.send("POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n" + body[:5] + "\r\n")
		cv.send(fmt.Sprintf("%x\r\n%s\r\n0\r\nTrailer: x\r\n\r\n", len(body)-5, body[5:]))
		if r := cv.response(); r.status != 200 || len(r.events) != 4 || r.closed {
			t.Fatalf("%d, %d events", r.status, len(r.events))
		}
	})
	t.Run("expect 100-continue", func(t *testing.T) {
		cv := dial(t, ts)
		cv.send(fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body)))
		if r := cv.response(); r.status != 100 {
			t.Fatalf("status %d before the body, want 100", r.status)
		}
		cv.send(body)
		if r := cv.response(); r.status != 200 || len(r.events) != 4 {
			t.Fatalf("%d, %d events", r.status, len(r.events))
		}
	})
	t.Run("pipelined", func(t *testing.T) {
		cv := dial(t, ts)
		cv.send(post11("/v1/completions", body) + "GET /health HTTP/1.1\r\n\r\n" + post11("/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":2}`))
		if r := cv.response(); r.status != 200 || len(r.events) != 4 {
			t.Fatalf("first: %d, %d events", r.status, len(r.events))
		}
		if r := cv.response(); r.status != 200 {
			t.Fatalf("second: %d", r.status)
		}
		if r := cv.response(); r.status != 200 || !strings.Contains(r.body, "chat.completion") {
			t.Fatalf("third: %d %s", r.status, r.body)
		}
	})
	t.Run("connection close", func(t *testing.T) {
		cv := dial(t, ts)
		cv.send(fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
		r := cv.response()
		if r.status != 200 || len(r.events) != 4 || headerValue(r.head, "Connection") != "close" || !cv.closed() {
			t.Fatalf("%d, %d events, Connection %q", r.status, len(r.events), headerValue(r.head, "Connection"))
		}
		for _, req := range []string{
			"GET /stats HTTP/1.1\r\nConnection: close\r\n\r\n",
			"POST /v1/completions HTTP/1.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
			"GET /v1/completions HTTP/1.1\r\nConnection: close\r\n\r\n",
			"POST /v1/completions HTTP/1.1\r\nConnection: close\r\nContent-Length: 29\r\n\r\n{\"prompt\":\"a\",\"max_tokens\":2}",
		} {
			cv := dial(t, ts)
			cv.send(req)
			r := cv.response()
			if r.status == 0 || headerValue(r.head, "Connection") != "close" || r.body == "" || !cv.closed() {
				t.Fatalf("%q: status %d, head %q, body %q", req, r.status, r.head, r.body)
			}
		}
	})
	t.Run("HTTP/1.0", func(t *testing.T) {
		cv := dial(t, ts)
		cv.send(fmt.Sprintf("POST /v1/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
		head, err := readHead(cv.br)
		if err != nil || headerValue(head, "Transfer-Encoding") != "" || headerValue(head, "Connection") != "close" {
			t.Fatalf("head %q: %v", head, err)
		}
		rest, err := io.ReadAll(cv.br)
		if err != nil || strings.Count(string(rest), "data: {") != 3 || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
			t.Fatalf("%v: %q", err, rest)
		}
	})
	for _, c := range []struct {
		name, req string
		status    int
	}{
		{"bad request line", "POST /v1/completions\r\n\r\n", 400},
		{"HTTP/2 request line", "GET / HTTP/2.0\r\n\r\n", 505},
		{"bad header", "GET /health HTTP/1.1\r\nno colon\r\n\r\n", 400},
		{"folded header", "GET /health HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400},
		{"bad length", "POST /v1/completions HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400},
		{"two lengths", "POST /v1/completions HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
		{"length and chunked", "POST /v1/completions HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"gzip", "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"expect", "POST /v1/completions HTTP/1.1\r\nExpect: nothing\r\n\r\n", 417},
		{"body too large", "POST /v1/completions HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 413},
		{"chunked too large", "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2000\r\n", 413},
		{"bad chunk", "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
		{"head too large", "GET /health HTTP/1.1\r\nX: " + strings.Repeat("a", maxHeadBytes) + "\r\n\r\n", 431},
	} {
		t.Run(c.name, func(t *testing.T) {
			cv := dial(t, ts)
			cv.send(c.req)
			r := cv.response()
			if r.status != c.status || !strings.Contains(r.body, `"error"`) || !cv.closed() {
				t.Fatalf("status %d (want %d), body %s", r.status, c.status, r.body)
			}
		})
	}
}

// Without ignore_eos the "model" may stop early (finish_reason "stop"),
// never before min_tokens; with it, outputs run to max_tokens.
func TestEOS(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Config{EOSPercent: 100})
	for _, c := range []struct {
		body, reason string
		tokens       int
	}{
		{`{"prompt":"a","max_tokens":10}`, "stop", 1},
		{`{"prompt":"a","max_tokens":10,"min_tokens":3}`, "stop", 4},
		{`{"prompt":"a","max_tokens":10,"ignore_eos":true}`, "length", 10},
		{`{"prompt":"a","max_tokens":4,"min_tokens":4}`, "length", 4},
	} {
		r := rawRequest(t, ts.addr, "/v1/completions", c.body)
		var resp struct {
			Choices []struct {
				Text         string
				FinishReason string `json:"finish_reason"`
			}
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		json.Unmarshal([]byte(r.body), &resp)
		if len(resp.Choices) != 1 || resp.Choices[0].FinishReason != c.reason || strings.Count(resp.Choices[0].Text, tokenText) != c.tokens || resp.Usage.CompletionTokens != c.tokens {
			t.Errorf("%s: %s; want %d tokens, %s", c.body, r.body, c.tokens, c.reason)
		}
	}
	// At 10% per token the lengths are geometric with mean 10.
	ts = startServer(t, Config{EOSPercent: 10})
	total := 0
	for range 300 {
		r := rawRequest(t, ts.addr, "/v1/completions", `{"prompt":"a","max_tokens":1000,"stream":true}`)
		total += len(r.events) - 1
	}
	if mean := float64(total) / 300; mean < 8 || mean > 12 {
		t.Errorf("mean output %.1f tokens at 10%% EOS, want about 10", mean)
	}
}

func TestCountTokens(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		"": 0, " ": 0, "a": 1, "hello world": 2, "  a\tb\nc\r\nd\v\fe  ": 5, "naïve café": 2, "a,b.c": 1,
	} {
		if got := countTokens(s); got != want {
			t.Errorf("countTokens(%q) = %d, want %d", s, got, want)
		}
	}
	cfg := (&Config{}).withDefaults()
	for body, want := range map[string]int{
		`{"prompt":"one two three"}`:   3,
		`{"prompt":["one two"]}`:       2,
		`{"prompt":[101,7592,2088,0]}`: 4,
		`{"prompt":""}`:                0,
	} {
		g, err := decodeRequest(apiCompletions, []byte(body), &cfg)
		if err != nil || g.promptTokens != want {
			t.Errorf("%s: %d tokens (%v), want %d", body, g.promptTokens, err, want)
		}
	}
	g, err := decodeRequest(apiChat, []byte(`{"messages":[{"role":"system","content":"a b"},{"role":"user","content":[{"type":"text","text":"c d e"},{"type":"image_url"}]},{"role":"assistant","content":null}]}`), &cfg)
	if err != nil || g.promptTokens != 5 {
		t.Errorf("chat: %d tokens (%v), want 5", g.promptTokens, err)
	}
}

// Sending a token allocates nothing: the shard writes the stream's template.
func TestFireAllocatesNothing(t *testing.T) {
	s, err := New(Config{SendTime: true, TokensPerChunk: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	go io.Copy(io.Discard, client)
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	c := newConn(s, server, 1)
	st := newStream(s, c, s.shards[0])
	st.start(1, genRequest{api: apiChat, model: []byte(`"m"`), stream: true, maxTokens: maxOutputTokens}, 0, 0, false, true)
	st.admitted = true
	st.fire(st.next)
	if allocs := testing.AllocsPerRun(1000, func() {
		if !st.fire(st.next) {
			t.Fatal("the stream ended")
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per chunk", allocs)
	}
}
