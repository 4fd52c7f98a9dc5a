package main

import (
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hail-loadgen/hail/internal/reqgen/sigv4test"
)

// recorder is a loopback server that checks and counts what hail sends.
type recorder struct {
	mu    sync.Mutex
	paths map[string]int // request URI → count
	bad   []string       // why requests were refused
	check func(r *http.Request, body []byte) error
}

func startRecorder(t *testing.T, check func(r *http.Request, body []byte) error) (string, *recorder) {
	t.Helper()
	rec := &recorder{paths: map[string]int{}, check: check}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var err error
		if rec.check != nil {
			err = rec.check(r, body)
		}
		rec.mu.Lock()
		rec.paths[r.RequestURI]++
		if err != nil && len(rec.bad) < 5 {
			rec.bad = append(rec.bad, err.Error())
		}
		rec.mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
		}
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, rec
}

// statusCounts runs hail with -j and returns the status code distribution.
func statusCounts(t *testing.T, env []string, args ...string) map[string]int64 {
	t.Helper()
	stdout, stderr, code := hailEnv(t, env, append([]string{"--output-format", "json"}, args...)...)
	if code != 0 && code != exitNoSuccess { // a run with no successful request writes its report too
		t.Fatalf("hail %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var res struct {
		StatusCodeDistribution map[string]int64 `json:"statusCodeDistribution"`
		ErrorDistribution      map[string]int64 `json:"errorDistribution"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.ErrorDistribution) > 0 {
		t.Errorf("errors: %v", res.ErrorDistribution)
	}
	return res.StatusCodeDistribution
}

// --aws-sigv4: every request of a run carries a signature an AWS service
// accepts, on both HTTP/1.1 engines; keys from -a or the environment.
func TestSigV4Run(t *testing.T) {
	t.Parallel()
	keys := [2]string{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG"}
	base, rec := startRecorder(t, func(r *http.Request, body []byte) error {
		return sigv4test.Verify(r, body, keys, "TOKEN", "eu-west-1", "execute-api")
	})
	for _, engine := range []string{"net", "uring"} {
		got := statusCounts(t, nil, "-n", "300", "-c", "4", "--engine", engine, "--aws-sigv4", "aws:amz:eu-west-1:execute-api",
			"-a", keys[0]+":"+keys[1], "--aws-session", "TOKEN", "-d", `{"a":1}`, "-H", "X-Custom: v", base+"/prod/items?x=1&a=2")
		if got["200"] != 300 {
			t.Errorf("engine %s: statuses %v, want 300 verified requests; refusals: %v", engine, got, rec.bad)
		}
	}
	env := []string{"AWS_ACCESS_KEY_ID=" + keys[0], "AWS_SECRET_ACCESS_KEY=" + keys[1], "AWS_SESSION_TOKEN=TOKEN"}
	if got := statusCounts(t, env, "-n", "20", "--aws-sigv4", "aws:amz:eu-west-1:execute-api", base+"/"); got["200"] != 20 {
		t.Errorf("keys from the environment: %v (%v)", got, rec.bad)
	}
	if got := statusCounts(t, nil, "-n", "5", "--aws-sigv4", "aws:amz:eu-west-1:execute-api", "-a", keys[0]+":wrong", base+"/"); got["403"] != 5 {
		t.Errorf("a wrong secret: %v, want every request refused", got)
	}
}

// -F: curl's multipart form, POST, parsed by Go's server.
func TestFormRun(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "data.txt")
	os.WriteFile(file, []byte("file content"), 0o644)
	base, rec := startRecorder(t, func(r *http.Request, body []byte) error {
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			return err
		}
		f, h, err := r.FormFile("upload")
		if err != nil {
			return err
		}
		data, _ := io.ReadAll(f)
		if r.Method != "POST" || r.FormValue("name") != "value" || string(data) != "file content" ||
			h.Filename != "data.txt" || h.Header.Get("Content-Type") != "text/plain" {
			return errForm
		}
		return nil
	})
	if got := statusCounts(t, nil, "-n", "40", "-c", "2", "-F", "name=value", "-F", "upload=@"+file, base+"/form"); got["200"] != 40 {
		t.Errorf("statuses %v, refusals %v", got, rec.bad)
	}
}

var errForm = errString("the form did not arrive as sent")

type errString string

func (e errString) Error() string { return string(e) }

// --db-url: with --rand-regex-url every row names the URL its request went
// to (the server's count of each URL equals the log's), oha's view has
// them, and hail.config.url keeps the pattern so two runs of it compare.
func TestDBURLNamesEachRequest(t *testing.T) {
	t.Parallel()
	base, rec := startRecorder(t, nil)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	pattern := base + `/item/[a-z]{2}\?v=[0-9]`
	seen := map[string]int{} // what the server saw in the logged run
	for i, out := range []string{"a.json", "b.json"} {
		args := []string{"-n", "300", "-c", "3", "--rand-regex-url", "-j", "-o", filepath.Join(dir, out), pattern}
		if i == 0 {
			args = append([]string{"--db-url", db}, args...)
		}
		if _, stderr, code := hail(t, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if i == 0 {
			rec.mu.Lock()
			for k, v := range rec.paths {
				seen[k] = v
			}
			rec.mu.Unlock()
		}
	}
	s, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.Query("SELECT url, count(*) FROM oha GROUP BY url")
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]int{}
	total := 0
	for rows.Next() {
		var u string
		var n int
		if err := rows.Scan(&u, &n); err != nil {
			t.Fatal(err)
		}
		logged[strings.TrimPrefix(u, base)] = n
		total += n
	}
	rows.Close()
	if total != 300 || len(logged) < 50 {
		t.Fatalf("oha view: %d rows over %d URLs, want 300 over many", total, len(logged))
	}
	if len(logged) != len(seen) {
		t.Errorf("the log names %d URLs, the server saw %d", len(logged), len(seen))
	}
	for uri, n := range seen {
		if logged[uri] != n {
			t.Errorf("the server saw %s %d times; the log names it %d times", uri, n, logged[uri])
		}
	}
	var runURL string
	_ = s.QueryRow("SELECT url FROM runs").Scan(&runURL)
	if runURL != pattern {
		t.Errorf("runs.url %q, want the pattern", runURL)
	}
	res, err := readResult(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Hail.Config["url"] != pattern || res.Hail.Config["urls"] != "regex" {
		t.Errorf("hail.config url %v (%v), want the pattern", res.Hail.Config["url"], res.Hail.Config["urls"])
	}
	stdout, _, _ := hailIn(t, "compare", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"))
	if strings.Contains(stdout, "url differs") {
		t.Errorf("two runs of one pattern are not comparable:\n%s", stdout)
	}
}
