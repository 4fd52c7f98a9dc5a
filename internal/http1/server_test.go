package http1

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testServer serves the response shapes the engines meet on 127.0.0.1.
func testServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/fixed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "11")
		io.WriteString(w, "hello world")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("fixed") != "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.Write([]byte(strings.Repeat("x", n)))
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		f := w.(http.Flusher)
		for _, part := range []string{"first part,", " second part,", " third part"} {
			io.WriteString(w, part)
			f.Flush()
		}
	})
	mux.HandleFunc("/204", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/304", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusNotModified)
	})
	mux.HandleFunc("/hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "created")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	raw := func(resp string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			bw.WriteString(resp)
			bw.Flush()
		}
	}
	body10 := strings.Repeat("0123456789", 1000)
	mux.HandleFunc("/close10", raw("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n"+body10))
	mux.HandleFunc("/close11", raw("HTTP/1.1 200 OK\r\nServer: raw\r\n\r\nuntil close"))
	mux.HandleFunc("/truncated", raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this"))
	mux.HandleFunc("/nothing", raw(""))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// client is an engine in miniature: one connection, a fixed 4 KiB buffer
// and the keep-the-tail loop.
type client struct {
	t    *testing.T
	conn net.Conn
	buf  [4096]byte
	fill int
	p    Parser
	host string
}

func dial(t *testing.T, srv *httptest.Server) *client {
	t.Helper()
	addr := strings.TrimPrefix(srv.URL, "http://")
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, host: addr, p: Parser{BodyLimit: 64, WantLocation: true}}
}

func (c *client) send(specs ...*RequestSpec) {
	c.t.Helper()
	var wire []byte
	for _, s := range specs {
		if s.Host == "" {
			s.Host = c.host
		}
		if err := s.Validate(); err != nil {
			c.t.Fatal(err)
		}
		wire = AppendRequest(wire, s)
	}
	c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Write(wire); err != nil {
		c.t.Fatal(err)
	}
}

// receive parses one response; it returns the parse error, if any.
func (c *client) receive(head bool) error {
	c.t.Helper()
	c.p.Reset(head)
	for {
		n, done, err := c.p.Feed(c.buf[:c.fill])
		if err != nil {
			return err
		}
		c.fill = copy(c.buf[:], c.buf[n:c.fill])
		if done {
			return nil
		}
		if c.fill == len(c.buf) {
			c.t.Fatal("a line does not fit in the buffer")
		}
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		m, err := c.conn.Read(c.buf[c.fill:])
		c.fill += m
		if errors.Is(err, io.EOF) {
			if _, _, err := c.p.Feed(c.buf[:c.fill]); err != nil {
				return err
			}
			c.fill = 0 // a close-delimited body takes it all; else EOF fails
			_, err = c.p.EOF()
			return err
		}
		if err != nil {
			c.t.Fatal(err)
		}
	}
}

func (c *client) expect(status int, bodyBytes int64, keep bool, body string) {
	c.t.Helper()
	if c.p.Status != status || c.p.BodyBytes != bodyBytes || c.p.KeepAlive != keep || string(c.p.Body) != body {
		c.t.Fatalf("got status %d, %d body bytes %q, keep-alive %v; want %d, %d %q, %v",
			c.p.Status, c.p.BodyBytes, c.p.Body, c.p.KeepAlive, status, bodyBytes, body, keep)
	}
	if c.p.HeaderBytes <= 0 || c.p.WireBytes < int64(c.p.HeaderBytes)+c.p.BodyBytes {
		c.t.Fatalf("HeaderBytes %d, WireBytes %d, BodyBytes %d", c.p.HeaderBytes, c.p.WireBytes, c.p.BodyBytes)
	}
}

func TestRealServer(t *testing.T) {
	srv := testServer(t)

	t.Run("keep-alive sequence", func(t *testing.T) {
		c := dial(t, srv)
		steps := []struct {
			spec      RequestSpec
			status    int
			bodyBytes int64
			keep      bool
			body      string
		}{
			{RequestSpec{Target: "/fixed"}, 200, 11, true, "hello world"},
			{RequestSpec{Target: "/chunked"}, 200, 35, true, "first part, second part, third part"},
			{RequestSpec{Method: "HEAD", Target: "/fixed"}, 200, 0, true, ""},
			{RequestSpec{Target: "/204"}, 204, 0, true, ""},
			{RequestSpec{Target: "/304"}, 304, 0, true, ""},
			{RequestSpec{Target: "/big?n=100000"}, 200, 100000, true, strings.Repeat("x", 64)},
			{RequestSpec{Target: "/big?n=100000&fixed=1"}, 200, 100000, true, strings.Repeat("x", 64)},
			{RequestSpec{Method: "HEAD", Target: "/big?n=100000"}, 200, 0, true, ""},
			{RequestSpec{Target: "/hints"}, 201, 7, true, "created"},
			{RequestSpec{Method: "POST", Target: "/echo", Body: []byte("echo me")}, 200, 7, true, "echo me"},
			{RequestSpec{Target: "/fixed", Proto: "HTTP/1.0", KeepAlive10: true}, 200, 11, true, "hello world"},
			{RequestSpec{Target: "/close11"}, 200, 11, false, "until close"},
		}
		for i, s := range steps {
			c.send(&s.spec)
			if err := c.receive(s.spec.Method == "HEAD"); err != nil {
				t.Fatalf("step %d (%s %s): %v", i, s.spec.Method, s.spec.Target, err)
			}
			c.expect(s.status, s.bodyBytes, s.keep, s.body)
			if s.spec.Target == "/hints" && string(c.p.Location) != "/elsewhere" {
				t.Fatalf("Location = %q", c.p.Location)
			}
			if chunked := s.spec.Target == "/chunked" || s.spec.Target == "/big?n=100000" && s.spec.Method != "HEAD"; c.p.Chunked != chunked {
				t.Fatalf("step %d: Chunked = %v", i, c.p.Chunked)
			}
		}
	})

	t.Run("pipelined", func(t *testing.T) {
		c := dial(t, srv)
		specs := []*RequestSpec{{Target: "/fixed"}, {Method: "HEAD", Target: "/fixed"}, {Target: "/chunked"},
			{Target: "/204"}, {Target: "/close", Close: true}}
		c.send(specs...)
		want := []struct {
			status    int
			bodyBytes int64
			keep      bool
		}{{200, 11, true}, {200, 0, true}, {200, 35, true}, {204, 0, true}, {200, 3, false}}
		for i, w := range want {
			if err := c.receive(specs[i].Method == "HEAD"); err != nil {
				t.Fatalf("response %d: %v", i, err)
			}
			if c.p.Status != w.status || c.p.BodyBytes != w.bodyBytes || c.p.KeepAlive != w.keep {
				t.Fatalf("response %d: status %d body %d keep %v", i, c.p.Status, c.p.BodyBytes, c.p.KeepAlive)
			}
		}
	})

	t.Run("HTTP/1.0 close-delimited", func(t *testing.T) {
		c := dial(t, srv)
		c.send(&RequestSpec{Target: "/close10", Proto: "HTTP/1.0"})
		if err := c.receive(false); err != nil {
			t.Fatal(err)
		}
		c.expect(200, 10000, false, strings.Repeat("0123456789", 7)[:64])
		if !c.p.Proto10 || c.p.ContentLength != -1 {
			t.Fatalf("Proto10 %v ContentLength %d", c.p.Proto10, c.p.ContentLength)
		}
	})

	t.Run("closed mid-response", func(t *testing.T) {
		c := dial(t, srv)
		c.send(&RequestSpec{Target: "/truncated"})
		if err := c.receive(false); !errors.Is(err, ErrUnexpectedEOF) {
			t.Fatalf("err = %v, want ErrUnexpectedEOF", err)
		}
	})

	t.Run("closed before response", func(t *testing.T) {
		c := dial(t, srv)
		c.send(&RequestSpec{Target: "/nothing"})
		if err := c.receive(false); !errors.Is(err, ErrClosedBeforeResponse) {
			t.Fatalf("err = %v, want ErrClosedBeforeResponse", err)
		}
	})
}
