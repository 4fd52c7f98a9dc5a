package http1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestAppendRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec RequestSpec
		want string
	}{
		{"defaults", RequestSpec{Host: "example.com"},
			"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"},
		{"headers in order", RequestSpec{Method: "GET", Target: "/a/b?c=d&e", Host: "h:8080",
			Header: [][2]string{{"Accept", "*/*"}, {"x-lower", "v"}, {"X-Empty", ""}}},
			"GET /a/b?c=d&e HTTP/1.1\r\nHost: h:8080\r\nAccept: */*\r\nx-lower: v\r\nX-Empty: \r\n\r\n"},
		{"post with body", RequestSpec{Method: "POST", Target: "/submit", Host: "h", Body: []byte(`{"a":1}`),
			Header: [][2]string{{"Content-Type", "application/json"}}},
			"POST /submit HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}"},
		{"empty post", RequestSpec{Method: "POST", Host: "h"},
			"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"},
		{"empty put", RequestSpec{Method: "PUT", Host: "h"},
			"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"},
		{"empty patch", RequestSpec{Method: "PATCH", Host: "h"},
			"PATCH / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"},
		{"empty delete", RequestSpec{Method: "DELETE", Host: "h"},
			"DELETE / HTTP/1.1\r\nHost: h\r\n\r\n"},
		{"get with body", RequestSpec{Host: "h", Body: []byte("xyz")},
			"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz"},
		{"user host replaces generated", RequestSpec{Host: "ignored", Header: [][2]string{{"A", "1"}, {"host", "mine"}}},
			"GET / HTTP/1.1\r\nA: 1\r\nhost: mine\r\n\r\n"},
		{"user content-length replaces generated", RequestSpec{Method: "POST", Host: "h", Body: []byte("ab"),
			Header: [][2]string{{"CONTENT-LENGTH", "2"}}},
			"POST / HTTP/1.1\r\nHost: h\r\nCONTENT-LENGTH: 2\r\n\r\nab"},
		{"close", RequestSpec{Host: "h", Close: true},
			"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"},
		{"keep-alive ignored for 1.1", RequestSpec{Host: "h", KeepAlive10: true},
			"GET / HTTP/1.1\r\nHost: h\r\n\r\n"},
		{"HTTP/1.0", RequestSpec{Proto: "HTTP/1.0", Host: "h"},
			"GET / HTTP/1.0\r\nHost: h\r\n\r\n"},
		{"HTTP/1.0 without host", RequestSpec{Proto: "HTTP/1.0"},
			"GET / HTTP/1.0\r\n\r\n"},
		{"HTTP/1.0 keep-alive", RequestSpec{Proto: "HTTP/1.0", Host: "h", KeepAlive10: true},
			"GET / HTTP/1.0\r\nHost: h\r\nConnection: keep-alive\r\n\r\n"},
		{"HTTP/1.0 close wins", RequestSpec{Proto: "HTTP/1.0", Host: "h", KeepAlive10: true, Close: true},
			"GET / HTTP/1.0\r\nHost: h\r\nConnection: close\r\n\r\n"},
		{"options star", RequestSpec{Method: "OPTIONS", Target: "*", Host: "h"},
			"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.spec.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			prefix := []byte("prefix")
			got := AppendRequest(prefix, &tc.spec)
			if string(got) != "prefix"+tc.want {
				t.Fatalf("got\n%q\nwant\n%q", got, "prefix"+tc.want)
			}
			checkReadRequest(t, &tc.spec, got[len(prefix):])
		})
	}
}

// checkReadRequest checks that net/http reads wire back as spec: same
// method, target, host and body, and nothing left over.
func checkReadRequest(t *testing.T, spec *RequestSpec, wire []byte) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(wire))
	req, err := http.ReadRequest(br)
	if err != nil {
		t.Fatalf("http.ReadRequest(%q): %v", wire, err)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatalf("reading body of %q: %v", wire, err)
	}
	host := spec.Host
	for _, h := range spec.Header {
		if strings.EqualFold(h[0], "host") {
			host = strings.Trim(h[1], " \t")
		}
	}
	if req.Method != spec.method() || req.RequestURI != spec.target() || req.Host != host ||
		req.Proto != spec.proto() || !bytes.Equal(body, spec.Body) {
		t.Fatalf("http.ReadRequest(%q) = %s %s %s host %q body %q", wire, req.Method, req.RequestURI, req.Proto, req.Host, body)
	}
	if n := br.Buffered(); n != 0 {
		t.Fatalf("http.ReadRequest(%q) left %d bytes", wire, n)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec RequestSpec
		want []string // substrings of the error: field and value
	}{
		{"method with space", RequestSpec{Method: "GE T", Host: "h"}, []string{"method", `"GE T"`, "space"}},
		{"method with CRLF", RequestSpec{Method: "GET\r\n", Host: "h"}, []string{"method", `"GET\r\n"`, "CR"}},
		{"method with NUL", RequestSpec{Method: "G\x00", Host: "h"}, []string{"method", `"G\x00"`, "NUL"}},
		{"method with slash", RequestSpec{Method: "GET/", Host: "h"}, []string{"method", `"GET/"`, `'/'`}},
		{"target with LF", RequestSpec{Target: "/a\nb", Host: "h"}, []string{"target", `"/a\nb"`, "LF"}},
		{"target with NUL", RequestSpec{Target: "/\x00", Host: "h"}, []string{"target", `"/\x00"`, "NUL"}},
		{"target with space", RequestSpec{Target: "/a b", Host: "h"}, []string{"target", `"/a b"`, "space", "percent-encode"}},
		{"target with non-ASCII", RequestSpec{Target: "/é", Host: "h"}, []string{"target", "0xc3"}},
		{"target not origin form", RequestSpec{Target: "index.html", Host: "h"}, []string{"target", `"index.html"`, `"/"`}},
		{"target absolute form", RequestSpec{Target: "http://h/", Host: "h"}, []string{"target", `"http://h/"`}},
		{"target bad escape", RequestSpec{Target: "/a%zz", Host: "h"}, []string{"target", `"/a%zz"`, "percent-escape"}},
		{"target truncated escape", RequestSpec{Target: "/a%2", Host: "h"}, []string{"target", `"/a%2"`, "percent-escape"}},
		{"star without OPTIONS", RequestSpec{Target: "*", Host: "h"}, []string{"target", `"*"`, "OPTIONS"}},
		{"host with CR", RequestSpec{Host: "h\rx"}, []string{"host", `"h\rx"`, "CR"}},
		{"host with space", RequestSpec{Host: "a b"}, []string{"host", `"a b"`}},
		{"host with path", RequestSpec{Host: "example.com/x"}, []string{"host", `"example.com/x"`, `'/'`}},
		{"missing host", RequestSpec{}, []string{"host", "HTTP/1.1"}},
		{"bad proto", RequestSpec{Proto: "HTTP/2", Host: "h"}, []string{"protocol", `"HTTP/2"`}},
		{"lowercase proto", RequestSpec{Proto: "http/1.1", Host: "h"}, []string{"protocol", `"http/1.1"`}},
		{"header name with space", RequestSpec{Host: "h", Header: [][2]string{{"X Y", "v"}}}, []string{"header name", `"X Y"`}},
		{"header name with colon", RequestSpec{Host: "h", Header: [][2]string{{"X:", "v"}}}, []string{"header name", `"X:"`, `':'`}},
		{"header name with LF", RequestSpec{Host: "h", Header: [][2]string{{"X\n", "v"}}}, []string{"header name", `"X\n"`, "LF"}},
		{"empty header name", RequestSpec{Host: "h", Header: [][2]string{{"", "v"}}}, []string{"header name", `"v"`}},
		{"header value with CRLF", RequestSpec{Host: "h", Header: [][2]string{{"X-Inject", "a\r\nEvil: 1"}}},
			[]string{"header", `"X-Inject"`, `"a\r\nEvil: 1"`, "CR"}},
		{"header value with NUL", RequestSpec{Host: "h", Header: [][2]string{{"X", "a\x00"}}}, []string{`"X"`, `"a\x00"`, "NUL"}},
		{"header value with DEL", RequestSpec{Host: "h", Header: [][2]string{{"X", "a\x7f"}}}, []string{`"X"`, "0x7f"}},
		{"duplicate host", RequestSpec{Header: [][2]string{{"Host", "a"}, {"host", "b"}}}, []string{"duplicate", `"host"`, `"b"`}},
		{"duplicate content-length", RequestSpec{Host: "h", Header: [][2]string{{"Content-Length", "0"}, {"Content-Length", "0"}}},
			[]string{"duplicate", "Content-Length"}},
		{"content-length mismatch", RequestSpec{Host: "h", Body: []byte("abc"), Header: [][2]string{{"Content-Length", "10"}}},
			[]string{"Content-Length", `"10"`, "3"}},
		{"content-length not a number", RequestSpec{Host: "h", Header: [][2]string{{"Content-Length", "x"}}},
			[]string{"Content-Length", `"x"`}},
		{"content-length signed", RequestSpec{Host: "h", Header: [][2]string{{"Content-Length", "+0"}}},
			[]string{"Content-Length", `"+0"`}},
		{"transfer-encoding", RequestSpec{Host: "h", Header: [][2]string{{"Transfer-Encoding", "chunked"}}},
			[]string{"Transfer-Encoding", `"chunked"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			if err == nil {
				t.Fatalf("Validate accepted %+v", tc.spec)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %s", msg, w)
				}
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, spec := range []RequestSpec{
		{Host: "example.com"},
		{Host: "[::1]:8080", Target: "/p%20q?x=a%zz&y=100%"},
		{Method: "M-SEARCH", Target: "/~user/!$&'()*+,;=:@", Host: "h"},
		{Proto: "HTTP/1.0"},
		{Header: [][2]string{{"Host", "only-here"}}},
		{Host: "h", Header: [][2]string{{"X-Tab", "a\tb"}, {"X-Obs", "caf\xc3\xa9"}, {"Connection", "close"}}},
		{Method: "POST", Host: "h", Body: []byte("abc"), Header: [][2]string{{"content-length", " 3 "}}},
	} {
		if err := spec.Validate(); err != nil {
			t.Errorf("Validate(%+v): %v", spec, err)
			continue
		}
		checkReadRequest(t, &spec, AppendRequest(nil, &spec))
	}
}

var benchSpec = RequestSpec{
	Method: "POST",
	Target: "/api/v1/items?limit=10",
	Host:   "api.example.com:8080",
	Header: [][2]string{
		{"User-Agent", "hail/1.0"},
		{"Accept", "application/json"},
		{"Content-Type", "application/json"},
	},
	Body: []byte(`{"name":"widget","count":3}`),
}

func TestAppendRequestNoAllocs(t *testing.T) {
	buf := AppendRequest(nil, &benchSpec)
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendRequest(buf[:0], &benchSpec)
	})
	if allocs != 0 {
		t.Fatalf("AppendRequest into a large enough buffer allocated %v times", allocs)
	}
}

func BenchmarkAppendRequest(b *testing.B) {
	buf := AppendRequest(nil, &benchSpec)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRequest(buf[:0], &benchSpec)
	}
}
