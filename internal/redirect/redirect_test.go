package redirect

import (
	"net/url"
	"strings"
	"testing"
)

func TestNext(t *testing.T) {
	cur, _ := url.Parse("http://127.0.0.1:8080/a/b?x=1")
	for _, tc := range []struct {
		status    int
		method    string
		loc       string
		url       string
		newMethod string
		keepBody  bool
		same      bool
	}{
		{301, "GET", "/c", "http://127.0.0.1:8080/c", "GET", true, true},
		{302, "POST", "c", "http://127.0.0.1:8080/a/c", "GET", false, true},
		{301, "PUT", "/c", "http://127.0.0.1:8080/c", "PUT", true, true},
		{303, "POST", "/c", "http://127.0.0.1:8080/c", "GET", false, true},
		{303, "HEAD", "/c", "http://127.0.0.1:8080/c", "HEAD", true, true},
		{303, "DELETE", "/c", "http://127.0.0.1:8080/c", "GET", false, true},
		{307, "POST", "/c", "http://127.0.0.1:8080/c", "POST", true, true},
		{308, "PATCH", "/c#frag", "http://127.0.0.1:8080/c", "PATCH", true, true},
		{302, "GET", "http://127.0.0.1:8081/", "http://127.0.0.1:8081/", "GET", true, false},
		{302, "GET", "https://127.0.0.1:8080/", "https://127.0.0.1:8080/", "GET", true, false},
		{302, "GET", "//localhost:8080/z", "http://localhost:8080/z", "GET", true, false},
		{302, "GET", "http://127.0.0.1:80/", "http://127.0.0.1:80/", "GET", true, false},
	} {
		h, err := Next(cur, tc.status, tc.method, []byte(tc.loc))
		if err != nil {
			t.Errorf("%d %s %q: %v", tc.status, tc.method, tc.loc, err)
			continue
		}
		if h.URL.String() != tc.url || h.Method != tc.newMethod || h.KeepBody != tc.keepBody || h.SameOrigin != tc.same {
			t.Errorf("%d %s %q: %s %s keep=%v same=%v, want %s %s keep=%v same=%v", tc.status, tc.method, tc.loc,
				h.Method, h.URL, h.KeepBody, h.SameOrigin, tc.newMethod, tc.url, tc.keepBody, tc.same)
		}
	}
	for _, loc := range []string{"ftp://x/", "mailto:a@b", "http://", "%zz"} {
		if _, err := Next(cur, 302, "GET", []byte(loc)); err != ErrBadLocation {
			t.Errorf("Location %q: %v, want ErrBadLocation", loc, err)
		}
	}
	a, _ := url.Parse("http://h/")
	b, _ := url.Parse("http://h:80/x")
	if !SameOrigin(a, b) {
		t.Error("an omitted port is the scheme's default")
	}
}

func TestRewrite(t *testing.T) {
	req := "POST /a HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer x\r\nCookie: a=b\r\nContent-Type: application/json\r\nContent-Length: 7\r\nX-Keep: 1\r\n\r\n{\"a\":1}"
	u := func(s string) *url.URL { x, _ := url.Parse(s); return x }
	for _, tc := range []struct {
		name string
		hop  Hop
		want string
	}{
		{"same origin 307 keeps everything but the target",
			Hop{URL: u("http://127.0.0.1:8080/b?q=1"), Method: "POST", KeepBody: true, SameOrigin: true},
			"POST /b?q=1 HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer x\r\nCookie: a=b\r\nContent-Type: application/json\r\nContent-Length: 7\r\nX-Keep: 1\r\n\r\n{\"a\":1}"},
		{"303 drops the body and what describes it",
			Hop{URL: u("http://127.0.0.1:8080/b"), Method: "GET", SameOrigin: true},
			"GET /b HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer x\r\nCookie: a=b\r\nX-Keep: 1\r\n\r\n"},
		{"another origin gets no credentials and its own Host",
			Hop{URL: u("http://other:9/c"), Method: "POST", KeepBody: true},
			"POST /c HTTP/1.1\r\nHost: other:9\r\nContent-Type: application/json\r\nContent-Length: 7\r\nX-Keep: 1\r\n\r\n{\"a\":1}"},
		{"another origin's Host leaves its IPv6 zone out, as the first request's does",
			Hop{URL: u("http://[fe80::1%25lo]:9/c"), Method: "GET"},
			"GET /c HTTP/1.1\r\nHost: [fe80::1]:9\r\nX-Keep: 1\r\n\r\n"},
	} {
		got, err := Rewrite(nil, []byte(req), tc.hop)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %q (%v)\nwant %q", tc.name, got, err, tc.want)
		}
	}
	abs := "GET http://127.0.0.1:8080/a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Authorization: Basic x\r\n\r\n"
	got, _ := Rewrite(nil, []byte(abs), Hop{URL: u("http://other/b"), Method: "GET", KeepBody: true})
	if !strings.HasPrefix(string(got), "GET http://other/b HTTP/1.1\r\n") || strings.Contains(string(got), "Proxy-Authorization") {
		t.Errorf("absolute form through a proxy: %q", got)
	}
	if _, err := Rewrite(nil, []byte("garbage"), Hop{URL: u("http://x/"), Method: "GET"}); err != ErrNotRequest {
		t.Errorf("garbage: %v", err)
	}
	if m := Method([]byte(req)); m != "POST" {
		t.Errorf("Method = %q", m)
	}
	if got := URLOf(u("http://h/x/y"), []byte("GET /z?q HTTP/1.1\r\n\r\n")); got.String() != "http://h/z?q" {
		t.Errorf("URLOf = %s", got)
	}
}

// Rewrite never panics and keeps a request's framing: what it writes ends
// its head with one empty line.
func FuzzRewrite(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), "/next", true, true)
	f.Add([]byte("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nCookie: c\r\n\r\nhi"), "http://o/x", false, false)
	f.Add([]byte("\r\n\r\n"), "", false, false)
	f.Fuzz(func(t *testing.T, req []byte, loc string, keep, same bool) {
		cur, _ := url.Parse("http://127.0.0.1/")
		h, err := Next(cur, 307, Method(req), []byte(loc))
		if err != nil {
			return
		}
		h.KeepBody, h.SameOrigin = keep, same
		out, err := Rewrite(nil, req, h)
		if err != nil {
			return
		}
		if !strings.Contains(string(out), "\r\n\r\n") {
			t.Fatalf("no end of head in %q", out)
		}
	})
}
