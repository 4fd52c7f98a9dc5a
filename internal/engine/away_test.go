package engine

import (
	"net/url"
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/redirect"
)

// After a hop, Chain.URL is the URL its request was written for: what
// parsing the request's target against it gives (Follow parses the target
// only before the first hop), in origin and in absolute (proxy) form.
func TestChainURLAfterHops(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080/")
	j := &Job{URL: base, MaxRedirects: 10}
	locations := []string{"/a/b?x=1", "c%2Fd/e", "?q=", "//other:9/p%20q", "http://[fe80::1%25lo]:9/z#frag",
		"../up", "https://h/a;b?c=%41", "/"}
	for _, req := range []string{"GET /start HTTP/1.1\r\nHost: h\r\n\r\n", "GET http://127.0.0.1:8080/start HTTP/1.1\r\nHost: h\r\n\r\n"} {
		var ch Chain
		ch.Reset(j, []byte(req), nil)
		for _, loc := range locations {
			p := http1.Parser{Status: 302, Location: []byte(loc)}
			follow, _, err := ch.Follow(j, &p)
			if !follow || err != nil {
				t.Fatalf("Location %q: follow %v, %v", loc, follow, err)
			}
			if got := redirect.URLOf(ch.URL, ch.Req); got.String() != ch.URL.String() || got.Host != ch.URL.Host {
				t.Errorf("after Location %q: the request's target is %s, Chain.URL %s", loc, got, ch.URL)
			}
		}
	}
}
