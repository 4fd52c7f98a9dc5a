package reqgen

import (
	"bufio"
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/plan"
)

func testPlan(t testing.TB, raw string, bodies ...string) *plan.Plan {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{URL: u, Method: "GET", Connections: 1, Requests: 1, KeepAlive: true}
	for _, b := range bodies {
		p.Bodies = append(p.Bodies, []byte(b))
	}
	if len(bodies) > 0 {
		p.Method = "POST"
	}
	return p
}

// parse reads an encoded request back.
func parse(t testing.TB, raw []byte) *http.Request {
	t.Helper()
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("%v: %q", err, raw)
	}
	return r
}

func urlFile(t *testing.T, lines ...string) string {
	path := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every request's URL is a function of its number: the builder of any
// worker sends to the URL AppendURL names, and the choice is spread over
// the whole list.
func TestURLOfEveryRequest(t *testing.T) {
	list, err := LoadURLs(urlFile(t, "http://127.0.0.1:8080/a", "", "http://127.0.0.1:8080/b?x=1", "http://127.0.0.1:8080/c"))
	if err != nil {
		t.Fatal(err)
	}
	regex, err := RegexURLs(`http://127.0.0.1:8080/[a-z]{3}/[0-9]{2}`, 4)
	if err != nil {
		t.Fatal(err)
	}
	for name, set := range map[string]*URLSet{"list": list, "regex": regex} {
		t.Run(name, func(t *testing.T) {
			p := testPlan(t, set.First())
			g := New(p, set, nil, 42)
			seen := map[string]int{}
			b1, b2 := g.NewBuilder(), g.NewBuilder()
			for hit := range uint64(300) {
				b := b1
				if hit%2 == 1 {
					b = b2
				}
				raw, step, head, ok := b.Next(hit)
				if !ok || step != 0 || head {
					t.Fatalf("Next(%d): step %d head %v ok %v", hit, step, head, ok)
				}
				r := parse(t, raw)
				got := "http://" + r.Host + r.RequestURI
				if want := string(g.AppendURL(nil, hit)); got != want {
					t.Fatalf("request %d went to %s, AppendURL says %s", hit, got, want)
				}
				seen[got]++
			}
			if name == "list" && (len(seen) != 3 || seen["http://127.0.0.1:8080/b?x=1"] < 60) {
				t.Errorf("URLs chosen: %v, want the three spread evenly", seen)
			}
			if name == "regex" && len(seen) < 250 {
				t.Errorf("only %d distinct generated URLs in 300", len(seen))
			}
			again := New(p, set, nil, 42)
			if string(again.AppendURL(nil, 7)) != string(g.AppendURL(nil, 7)) {
				t.Error("the same seed chose differently")
			}
		})
	}
}

// -Z: a random line per request (oha's choice), not the lines in turn.
func TestRandomBody(t *testing.T) {
	g := New(testPlan(t, "http://127.0.0.1/x", "a", "b", "c", "d"), nil, nil, 1)
	if g.Plain() {
		t.Fatal("several bodies need a workload")
	}
	b := g.NewBuilder()
	count := map[string]int{}
	inTurn := true
	for hit := range uint64(400) {
		raw, _, _, _ := b.Next(hit)
		body := string(raw[bytes.Index(raw, []byte("\r\n\r\n"))+4:])
		count[body]++
		if body != string("abcd"[hit%4]) {
			inTurn = false
		}
	}
	if inTurn || len(count) != 4 || count["a"] < 60 || count["d"] < 60 {
		t.Errorf("bodies %v (in turn: %v): want each line chosen at random, about 100 times", count, inTurn)
	}
	if !New(testPlan(t, "http://127.0.0.1/x", "a"), nil, nil, 1).Plain() {
		t.Error("one URL and one body is the plan's own request")
	}
}

// Generated targets are escaped, and a forward proxy gets absolute URLs.
func TestTargetsEscapedAndProxied(t *testing.T) {
	set, err := RegexURLs(`http://127.0.0.1:8080/x y\?q=é`, 4)
	if err != nil {
		t.Fatal(err)
	}
	p := testPlan(t, set.First())
	p.Proxy, _ = url.Parse("http://127.0.0.1:3128")
	g := New(p, set, nil, 3)
	raw, _, _, _ := g.NewBuilder().Next(0)
	line := string(raw[:bytes.IndexByte(raw, '\r')])
	if line != "GET http://127.0.0.1:8080/x%20y?q=%C3%A9 HTTP/1.1" {
		t.Errorf("request line %q", line)
	}
	if got := string(g.AppendURL(nil, 0)); got != "http://127.0.0.1:8080/x%20y?q=%C3%A9" {
		t.Errorf("AppendURL %q", got)
	}
}

// Building a request allocates nothing: pre-encoded variants, generated
// URLs once the buffers have grown, and signed requests within a second.
func TestBuilderNoAllocs(t *testing.T) {
	list, _ := LoadURLs(urlFile(t, "http://127.0.0.1/a", "http://127.0.0.1/b"))
	regex, _ := RegexURLs(`http://127.0.0.1/[a-z]{1,8}`, 4)
	sign, err := ParseSigV4("aws:amz:us-east-1:execute-api", "AKID:SECRET", "")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1767225600, 0)
	sign.SetClock(func() time.Time { return at }) // a second that does not end during the test
	cases := map[string]*Gen{
		"bodies": New(testPlan(t, "http://127.0.0.1/", "a", "b"), nil, nil, 1),
		"list":   New(testPlan(t, list.First(), "a", "b"), list, nil, 1),
		"regex":  New(testPlan(t, regex.First(), "a", "b"), regex, nil, 1),
		"signed": New(testPlan(t, list.First(), "a", "b"), list, sign, 1),
	}
	for name, g := range cases {
		b := g.NewBuilder()
		for hit := range uint64(64) { // grow buffers, fill the signing cache
			b.Next(hit)
		}
		hit := uint64(0)
		if n := testing.AllocsPerRun(1000, func() { b.Next(hit % 64); hit++ }); n != 0 {
			t.Errorf("%s: %v allocations per request", name, n)
		}
	}
}

func BenchmarkBuilder(b *testing.B) {
	regex, _ := RegexURLs(`http://127.0.0.1/[a-z]{1,8}/[0-9]{4}`, 4)
	g := New(testPlan(b, regex.First()), regex, nil, 1)
	bl := g.NewBuilder()
	for i := range b.N {
		bl.Next(uint64(i))
	}
}
