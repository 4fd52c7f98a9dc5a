package kube

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/barrier"
)

// A shard's result is found in its log between hail's own lines, even
// with one of them inside it; a log without a whole result says so.
func TestResultFromLog(t *testing.T) {
	t.Parallel()
	s := &sim{t: t}
	spec := testSpec(2)
	res := s.result(spec, 1, 7, true, time.Unix(1700000000, 0), false)
	half := len(res) / 2
	for len(res) > half && res[half] != '\n' {
		half++
	}
	for name, log := range map[string]string{
		"plain":    string(res),
		"around":   "hail: warning: one\n" + string(res) + "hail: shard 1/2 was interrupted after 1s\n",
		"inside":   string(res[:half+1]) + "hail: a line that came in between\n" + string(res[half+1:]),
		"two runs": strings.Replace(string(res), `"requests": 7`, `"requests": 1`, 1) + string(res),
	} {
		r, err := resultFromLog([]byte(log))
		if err != nil || r.Hail.Counts.Requests != 7 || !r.Hail.Interrupted || r.Hail.Shard.Index != 1 {
			t.Errorf("%s: %v %+v", name, err, r)
		}
	}
	for _, log := range []string{"", "hail: error\n", string(res[:half])} {
		if _, err := resultFromLog([]byte(log)); err == nil {
			t.Errorf("%q: no error", log)
		}
	}
}

// How a shard ended, named from its pod and its log.
func TestEnding(t *testing.T) {
	t.Parallel()
	s := testSpec(2)
	dump := "panic: send on closed channel\n\ngoroutine 9 [running]:\nmain.f()\nrip 0x1\ngs 0x0\n"
	for _, tc := range []struct {
		name   string
		st     shardState
		log    string
		result bool
		want   string
	}{
		{"complete", shardState{started: true, ended: true}, "", true, ""},
		{"thresholds", shardState{started: true, ended: true, exit: 2}, "hail: 1 of 2 thresholds failed", true, ""},
		{"no success", shardState{started: true, ended: true, exit: 3}, "", true, ""},
		{"deleted", shardState{started: true, ended: true, exit: 4, deleted: true}, "", true, "interrupted (exit code 4): its pod was deleted"},
		{"evicted by the kubelet", shardState{started: true, ended: true, exit: 4, podReason: "Evicted", podMessage: "The node was low on resource: memory."}, "", true,
			"interrupted (exit code 4): evicted: The node was low on resource: memory."},
		{"oom", shardState{started: true, ended: true, exit: 137, reason: "OOMKilled"}, "", false, "OOMKilled (exit code 137): it went over its memory limit of 256Mi"},
		{"killed", shardState{started: true, ended: true, exit: 137, reason: "Error", deleted: true}, "", false, "killed by a signal (exit code 137, Error): its pod was deleted"},
		{"crash", shardState{started: true, ended: true, exit: 2, reason: "Error"}, dump, false, "crashed (exit code 2): panic: send on closed channel"},
		{"crash, log gone", shardState{pod: "p", started: true, ended: true, exit: 2, reason: "Error", message: "rip 0x1\ngs 0x0\n"}, "", false,
			"crashed (exit code 2; no result, and no crash message left: kubectl -n load logs p)"},
		{"bad input", shardState{started: true, ended: true, exit: 1, reason: "Error"}, "hail: warning: x\nhail: URL \"x\" has no scheme\n", false,
			"Error (exit code 1): hail: URL \"x\" has no scheme"},
		{"twice", shardState{started: true, ended: true, exit: 130, reason: "Error"}, "", false,
			"interrupted twice, exited at once (exit code 130): a signal from outside (SIGTERM or SIGINT)"},
		{"image", shardState{pod: "p", waiting: "ErrImagePull", waitingMsg: "not found"}, "", false, "ErrImagePull: not found (kubectl -n load describe pod p)"},
		{"no pod", shardState{}, "", false, "the Job made no pod for it"},
	} {
		if got := tc.st.ending(s, []byte(tc.log), false, tc.result); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The counter of a Prometheus text scrape.
func TestCounter(t *testing.T) {
	t.Parallel()
	text := "# HELP hail_requests_total x\n# TYPE hail_requests_total counter\nhail_requests_total_x 5\nhail_requests_total{shard=\"1\"} 1234 1700000000\n"
	if v, ok := counter(text, "hail_requests_total"); !ok || v != 1234 {
		t.Errorf("%v %v", v, ok)
	}
	if v, ok := counter("hail_requests_total 7\n", "hail_requests_total"); !ok || v != 7 {
		t.Errorf("%v %v", v, ok)
	}
	if _, ok := counter("other 1\n", "hail_requests_total"); ok {
		t.Error("found in nothing")
	}
}

// The start goes in the shards' clock (the median offset: one shard's
// clock far off does not move it), at least the lead ahead.
func TestStartTime(t *testing.T) {
	t.Parallel()
	now := time.Unix(1700000000, 0)
	samples := []clockSample{{offset: 3 * time.Second, rtt: time.Millisecond}, {offset: 3*time.Second + time.Millisecond, rtt: time.Millisecond},
		{offset: -40 * time.Second, rtt: 2 * time.Millisecond}}
	at := startTime(now, samples, time.Second)
	if lead := at.Sub(now.Add(3 * time.Second)); lead < time.Second || lead > time.Second+20*time.Millisecond {
		t.Errorf("start %s after the shards' now, want the 1s lead and a little", lead)
	}
}

// Files: the small ones in the ConfigMap, the rest on the volume; without
// one, too much is refused; a directory ships what is in it; the results
// mount point and kernel file systems are refused.
func TestShip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, big := write("users.csv", 1000), write("big body.bin", 950<<10)
	write("protos/a.proto", 10)
	write("protos/sub/b.proto", 10)
	files, data, err := Ship([]string{small, big, filepath.Join(dir, "protos"), small}, "results")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("files %+v", files)
	}
	for _, f := range files {
		if f.OnVolume != (f.Path == big) || int64(len(data[f.Key])) != f.Size || strings.ContainsAny(f.Key, " /") {
			t.Errorf("file %+v", f)
		}
	}
	if _, _, err := Ship([]string{small, big}, ""); err == nil || !strings.Contains(err.Error(), "more than a ConfigMap holds (900 KiB): give --results pvc:CLAIM") {
		t.Errorf("too much without a volume: %v", err)
	}
	if _, _, err := Ship([]string{filepath.Join(dir, "nope.csv")}, ""); err == nil || !strings.Contains(err.Error(), "nope.csv: no such file or directory (the shards need it)") {
		t.Errorf("missing: %v", err)
	}
	if _, _, err := Ship([]string{"/proc/self/status"}, ""); err == nil || !strings.Contains(err.Error(), "cannot be shipped") {
		t.Errorf("/proc: %v", err)
	}
}

// The volume helper serves only its run's files, only with the token,
// writes atomically, and ends by itself when idle or told to.
func TestFilesServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r1.shard-0.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "other.shard-0.json"), []byte("{}"), 0o644)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &FilesServer{Dir: dir, Prefix: "r1.", Token: "t0k", Idle: time.Minute}
	done := make(chan error, 1)
	go func() { done <- fs.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	do := func(method, path, tok, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if tok != "" {
			req.Header.Set(tokenHeader, tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	for _, tc := range []struct {
		method, path, tok, body string
		code                    int
		want                    string
	}{
		{"GET", "/healthz", "", "", 200, ""},
		{"GET", "/list", "", "", 403, "no or wrong token"},
		{"GET", "/list", "bad", "", 403, "no or wrong token"},
		{"GET", "/list", "t0k", "", 200, `["r1.shard-0.json"]`},
		{"GET", "/files/r1.shard-0.json", "t0k", "", 200, "{}"},
		{"GET", "/files/other.shard-0.json", "t0k", "", 400, "not a file of this run"},
		{"GET", "/files/r1.shard-9.json", "t0k", "", 404, "no such file"},
		{"PUT", "/files/r1.files/f0-users.csv", "t0k", "id\n1\n", 201, ""},
		{"GET", "/files/r1.files/f0-users.csv", "t0k", "", 200, "id\n1\n"},
		{"PUT", "/files/r1.files%2F..%2F..%2Fetc", "t0k", "x", 400, "not a file of this run"},
		{"PUT", "/files/r1.files/../../etc", "t0k", "x", 404, ""}, // the mux cleans the path: no such route
	} {
		code, body := do(tc.method, tc.path, tc.tok, tc.body)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, code, body, tc.code, tc.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "r1.files", ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	do("POST", "/quit", "t0k", "")
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not quit")
	}
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	idle := &FilesServer{Dir: dir, Prefix: "r1.", Token: "x", Idle: 40 * time.Millisecond}
	t0 := time.Now()
	if err := idle.Serve(ln2); err != nil || time.Since(t0) > 2*time.Second {
		t.Errorf("idle: %v after %s", err, time.Since(t0))
	}
}

// askReady reads a shard's barrier state and clock through the proxy.
func TestAskReady(t *testing.T) {
	t.Parallel()
	s := newSim(t, ok(1))
	g := barrier.New("0/1", nil)
	s.pods["p"] = &simPod{name: "p", gate: g}
	r, _, _ := s.runner(t.TempDir())
	c, err := r.askReady(t.Context(), "p")
	if err != nil || c.state.Ready || c.state.Shard != "0/1" || c.offset > time.Second || c.offset < -time.Second {
		t.Errorf("%+v %v", c, err)
	}
}
