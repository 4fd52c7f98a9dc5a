package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/serve"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/testtier"
)

var hailBin string

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "hail" { // this process is hail: the test binary linked as hail (makeHail)
		main()
		os.Exit(0)
	}
	if os.Getenv(netnsHelperEnv) != "" { // this process is the network-namespace helper
		os.Exit(netnsHelper())
	}
	if os.Getenv(docsShellEnv) != "" { // this process runs a docs block in a network namespace
		os.Exit(docsShell())
	}
	if os.Getenv(burnServerEnv) != "" { // this process is a target that burns CPU per request
		os.Exit(burnServer())
	}
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzzworker") { // fuzz workers run only the pure fuzz targets
			os.Exit(m.Run())
		}
	}
	testtier.WaitBound(8) // each test mostly waits on hail processes
	dir, err := os.MkdirTemp("", "hail-cli-test")
	if err != nil {
		panic(err)
	}
	hailBin = filepath.Join(dir, "hail")
	if err := makeHail(hailBin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// makeHail puts the hail command at path: this test binary, which holds
// package main whole and runs it when started by that name (TestMain), as a
// hard link (a copy across file systems) — no second link of the command
// for each test run. Under the race detector, whose instrumentation would
// slow every hail process several times, it builds hail without it instead.
func makeHail(path string) error {
	if testtier.Race {
		if out, err := exec.Command("go", "build", "-o", path, ".").CombinedOutput(); err != nil {
			return fmt.Errorf("building hail: %v\n%s", err, out)
		}
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if os.Link(self, path) == nil {
		return nil
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

func startServe(t *testing.T) string {
	u, _ := servetest.Start(t)
	return u
}

// waitArrivals waits until s has seen n requests in all (the run under test
// is under way), failing the test after 20 s.
func waitArrivals(t *testing.T, s *serve.Server, n uint64) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); s.Stats().Requests < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the server saw %d requests in 20 s, waiting for %d", s.Stats().Requests, n)
		}
	}
}

// hail runs the binary with a time bound and returns stdout, stderr and the exit code.
func hail(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return hailEnv(t, nil, args...)
}

// hailIn runs hail's command line in this process — cli, as main does,
// without catching signals — and returns stdout, stderr and the exit code.
// It is for bad input and other checks that end before a run starts:
// a hail process costs ~30 ms of CPU before it reads its flags (its
// start, its packages' inits), and the tests check hundreds of such lines.
// A run writes its report to the process's own stdout and its verdict
// counts the test's CPU as hail's: use hail for runs. TestBadInput runs
// its first cases both ways.
func hailIn(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var so, se bytes.Buffer
	code := cli(args, &so, &se, false)
	return so.String(), se.String(), code
}

// hailEnv is hail with extra environment variables (NAME=VALUE).
func hailEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(hailBin, args...)
	cmd.Env = append(os.Environ(), env...)
	return runBounded(t, cmd)
}

// runBounded runs cmd, killing it after 60 s, and returns its stdout,
// stderr and exit code.
func runBounded(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return so.String(), se.String(), code
}

// Bad input gets one clear line on stderr naming what was wrong, exit code
// 1, nothing on stdout and no file written.
func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	for i, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "no URL given"},
		{[]string{"127.0.0.1:8080"}, "has no scheme"},
		{[]string{"ftp://127.0.0.1/"}, "scheme must be http or https"},
		{[]string{"http://"}, "has no host"},
		{[]string{"http://127.0.0.1:99999/"}, "port"},
		{[]string{"http://a b/"}, "not valid"},
		{[]string{"-n", "ten", "http://127.0.0.1/"}, `-n, --n-requests "ten"`},
		{[]string{"-n", "0", "http://127.0.0.1/"}, "-n 0"},
		{[]string{"-c", "0", "http://127.0.0.1/"}, "-c 0"},
		{[]string{"-c", "x", "http://127.0.0.1/"}, "connections"},
		{[]string{"-z", "soon", "http://127.0.0.1/"}, "not a duration"},
		{[]string{"-q", "-5", "http://127.0.0.1/"}, "positive"},
		{[]string{"--http-version", "9", "http://127.0.0.1/"}, "not one of 0.9, 1.0, 1.1"},
		{[]string{"--http-version", "0.9", "http://127.0.0.1/"}, "HTTP/0.9"},
		{[]string{"-n", "10", "-z", "1s", "http://127.0.0.1/"}, "-n and -z"},
		{[]string{"-q", "5", "--burst-delay", "1s", "http://127.0.0.1/"}, "-q and --burst-delay"},
		{[]string{"-z", "5 parsecs", "http://127.0.0.1/"}, "not a duration"},
		{[]string{"-q", "-1", "http://127.0.0.1/"}, "not a rate"},
		{[]string{"--max-repeat", "3", "http://127.0.0.1/"}, "--max-repeat applies to --rand-regex-url"},
		{[]string{"-F", "novalue", "http://127.0.0.1/"}, "-F \"novalue\""},
		{[]string{"-d", "a", "-F", "x=y", "http://127.0.0.1/"}, "use only one"},
		{[]string{"--aws-sigv4", "us-east-1", "-a", "k:s", "http://127.0.0.1/"}, "aws:amz:REGION:SERVICE"},
		{[]string{"--aws-sigv4", "aws:amz:us-east-1:s3", "http://127.0.0.1/"}, "ACCESS_KEY_ID:SECRET_ACCESS_KEY"},
		{[]string{"--aws-session", "tok", "http://127.0.0.1/"}, "--aws-sigv4"},
		{[]string{"--proxy-http2", "-x", "http://127.0.0.1:3128", "http://127.0.0.1/"}, "HTTP/1.0 or HTTP/1.1"},
		{[]string{"--proxy-http-version", "1.0", "http://127.0.0.1/"}, "need -x"},
		{[]string{"--proxy-http-version", "1.0", "-x", "http://127.0.0.1:3128", "https://127.0.0.1/"}, "CONNECT"},
		{[]string{"--completions", "elvish"}, "bash, zsh, fish and powershell"},
		{[]string{"--frobnicate", "http://127.0.0.1/"}, "unknown flag: --frobnicate"},
		{[]string{"-H", "NoColon", "http://127.0.0.1/"}, "'Name: value'"},
		{[]string{"-H", "Bad Name: x", "http://127.0.0.1/"}, "header"},
		{[]string{"-D", "/nonexistent/body", "http://127.0.0.1/"}, "-D /nonexistent/body"},
		{[]string{"-d", "a", "-D", "b", "http://127.0.0.1/"}, "use only one"},
		{[]string{"--connect-to", "nonsense", "http://127.0.0.1/"}, "--connect-to"},
		{[]string{"--ipv4", "--ipv6", "http://127.0.0.1/"}, "--ipv4 and --ipv6"},
		{[]string{"--cacert", "/nonexistent.pem", "https://127.0.0.1/"}, "--cacert"},
		{[]string{"-o", "/nonexistent/dir/r.json", "http://127.0.0.1/"}, "does not exist"},
		{[]string{"-o", out, "http://host.invalid/"}, "dns lookup"},
		{[]string{"-m", "GE T", "http://127.0.0.1/"}, "method"},
		{[]string{"--burst-rate", "5", "http://127.0.0.1/"}, "--burst-delay"},
		{[]string{"serve", "--addr", "nonsense"}, "--addr nonsense"},
		{[]string{"--http-version", "3", "http://127.0.0.1/"}, "needs an https:// URL"},
		{[]string{"--http2", "--http-version", "1.0", "http://127.0.0.1/"}, "disagree"},
		{[]string{"-p", "0", "--http2", "http://127.0.0.1/"}, "-p 0"},
		{[]string{"-p", "4", "--http2", "--disable-keepalive", "http://127.0.0.1/"}, "--disable-keepalive"},
		{[]string{"--vsock-addr", "nonsense", "http://127.0.0.1/"}, "--vsock-addr \"nonsense\""},
		{[]string{"--vsock-addr", "3:http", "http://127.0.0.1/"}, "port"},
		{[]string{"--vsock-uds", "/tmp/fc.vsock", "http://127.0.0.1/"}, "--vsock-uds"},
		{[]string{"--vsock-addr", "3:80", "--vsock-uds", "/v:1", "http://127.0.0.1/"}, "exclude each other"},
		{[]string{"--vsock-addr", "3:80", "--engine", "uring", "http://127.0.0.1/"}, "--engine net"},
		{[]string{"-x", "socks5://127.0.0.1:1080", "http://127.0.0.1/"}, "SOCKS"},
		{[]string{"--proxy-header", "X-A: 1", "http://127.0.0.1/"}, "--proxy-header needs -x"},
		{[]string{"-x", "127.0.0.1:3128", "--proxy-header", "bad", "http://127.0.0.1/"}, "'Name: value'"},
		{[]string{"--http-version", "3", "-x", "http://127.0.0.1:3128", "https://127.0.0.1/"}, "HTTP/3"},
		{[]string{"--cert", "/nonexistent.pem", "https://127.0.0.1/"}, "--cert /nonexistent.pem"},
		{[]string{"--key", "/nonexistent.key", "https://127.0.0.1/"}, "--key"},
		{[]string{"--cert", "/nonexistent.pem", "http://127.0.0.1/"}, "https://"},
		{[]string{"--http2", "--engine", "uring", "http://127.0.0.1/"}, "drop --engine uring"},
	} {
		run := hailIn
		if i < 3 {
			run = hail // the binary, its exit status and streams, as a user runs it
		}
		stdout, stderr, code := run(t, tc.args...)
		name := strings.Join(tc.args, " ")
		if code != 1 {
			t.Errorf("%q: exit %d, want 1 (stderr %q)", name, code, stderr)
		}
		if lines := strings.Count(strings.TrimRight(stderr, "\n"), "\n"); lines != 0 || !strings.HasPrefix(stderr, "hail: ") {
			t.Errorf("%q: stderr is not one 'hail: ' line: %q", name, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q does not mention %q", name, stderr, tc.want)
		}
		if stdout != "" {
			t.Errorf("%q: wrote to stdout: %q", name, stdout)
		}
		if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
			t.Errorf("%q: stack trace on stderr", name)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad input left files behind: %v", entries)
	}
}

func TestJSONToFile(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := hail(t, "-n", "1k", "-c", "8", "-j", "-o", out, "-H", "Authorization: Bearer s3cret", base+"/")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct{ SuccessRate float64 }
		Hail    struct {
			Counts struct{ Requests int64 }
			Config map[string]any
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Summary.SuccessRate != 1 || doc.Hail.Counts.Requests != 1000 {
		t.Errorf("success %v, requests %d", doc.Summary.SuccessRate, doc.Hail.Counts.Requests)
	}
	if bytes.Contains(raw, []byte("s3cret")) {
		t.Error("the Authorization value leaked into the JSON report")
	}
}

// SIGINT mid-run stops within a second and leaves a complete, valid report.
func TestSIGINTLeavesValidJSON(t *testing.T) {
	t.Parallel()
	base, srv := servetest.Start(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(hailBin, "-z", "60s", "-c", "4", "--output-format", "json", "-o", out, base+"/?delay=1ms")
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitArrivals(t, srv, 100)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v (stderr %q)", err, se.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("hail did not stop after SIGINT")
	}
	if el := time.Since(sent); el > 1500*time.Millisecond {
		t.Errorf("stopped %v after SIGINT, want within a second", el)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hail struct {
			Interrupted bool
			Counts      struct{ Requests, Responses int64 }
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("report is not valid JSON: %v", err)
	}
	if !doc.Hail.Interrupted || doc.Hail.Counts.Responses == 0 {
		t.Errorf("interrupted %v, responses %d", doc.Hail.Interrupted, doc.Hail.Counts.Responses)
	}
}

func TestDebugRedacts(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	stdout, _, code := hail(t, "--debug", "-H", "Cookie: session=abc123", "-a", "user:pw", base+"/echo?headers=1")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"> GET /echo?headers=1 HTTP/1.1", "> Cookie: [redacted]", "> Authorization: [redacted]", "< HTTP/1.1 200", "* status 200"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--debug output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "> Cookie: session=abc123") {
		t.Error("cookie shown in the request dump")
	}
	stdout, _, _ = hail(t, "--debug", "--show-secrets", "-H", "Cookie: session=abc123", base+"/")
	if !strings.Contains(stdout, "session=abc123") {
		t.Error("--show-secrets did not show the cookie")
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	stdout, _, code := hail(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "hail ") {
		t.Errorf("--version: %d %q", code, stdout)
	}
	stdout, _, code = hail(t, "--help")
	for _, flag := range []string{"-n, --n-requests", "-c, --connections", "-z, --duration", "-q, --query-per-second", "--burst-delay",
		"-w, --wait-ongoing-requests-after-deadline", "-Z, --body-path-lines", "--connect-to", "--latency-correction", "--stats-success-breakdown"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("--help lacks %s", flag)
		}
	}
	if code != 0 {
		t.Errorf("--help exit %d", code)
	}
}

func TestCSVAndQuiet(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	// csv-seconds: a row a second (at 500/s: the format is the subject, not the load).
	stdout, _, code := hail(t, "-z", "1500ms", "-q", "500", "-c", "2", "--output-format", "csv-seconds", base+"/")
	if code != 0 || !strings.HasPrefix(stdout, "second,span,requests,") || strings.Count(stdout, "\n") < 2 {
		t.Errorf("csv-seconds: exit %d, %q", code, stdout)
	}
	// csv is oha's: one row per request, streamed as requests complete.
	stdout, _, code = hail(t, "-n", "300", "-c", "4", "--output-format", "csv", base+"/")
	if code != 0 || !strings.HasPrefix(stdout, "request-start,DNS,DNS+dialup,Response-delay,request-duration,bytes,status,") || strings.Count(stdout, "\n") != 301 {
		t.Errorf("csv: exit %d, %d lines, %.200q", code, strings.Count(stdout, "\n"), stdout)
	}
	stdout, _, code = hail(t, "-n", "10", "--output-format", "quiet", base+"/")
	if code != 0 || stdout != "" {
		t.Errorf("quiet: exit %d, %q", code, stdout)
	}
}

// Hitting the open-file limit is counted under its kind and explained once.
func TestOpenFileLimitHint(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit not installed")
	}
	base := startServe(t)
	cmd := exec.Command("prlimit", "--nofile=40:40", hailBin, "-c", "100", "-n", "300", "--no-tui", base+"/")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "too many open files") {
		t.Errorf("no 'too many open files' in the report:\n%s", s)
	}
	if n := strings.Count(s, "hint: the open-file limit"); n != 1 {
		t.Errorf("the open-file hint appears %d times, want once:\n%s", n, s)
	}
}

// --redact hides a custom header and a query parameter in reports and --debug.
func TestRedactFlag(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := hail(t, "-n", "5", "-j", "-o", out, "--redact", "X-Api-Key", "--redact", "token",
		"-H", "X-Api-Key: k3y", base+"/?token=t0ken&page=2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	raw, _ := os.ReadFile(out)
	for _, secret := range []string{"k3y", "t0ken"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("%q leaked into the JSON report", secret)
		}
	}
	if !bytes.Contains(raw, []byte("page=2")) {
		t.Error("an unredacted query parameter was lost")
	}
	stdout, _, _ := hail(t, "--debug", "--redact", "X-Api-Key", "--redact", "token", "-H", "X-Api-Key: k3y", base+"/echo?headers=1&token=t0ken")
	if strings.Contains(stdout, "> X-Api-Key: k3y") || strings.Contains(stdout, "> GET /echo?headers=1&token=t0ken") {
		t.Errorf("--debug request dump shows a redacted value:\n%s", stdout)
	}
}

// No secret reaches any output: every report format, the SQLite log, the per-request CSV and
// stderr, for headers (Authorization, Cookie, a --redact one), a --redact query parameter and
// URL credentials; the redaction marker is there instead, and with --show-secrets the values
// come back (so the check can fail).
func TestSecretsInNoOutput(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	basic := base64.StdEncoding.EncodeToString([]byte("alice:s3cr3tpw"))
	for _, tc := range []struct {
		name    string
		url     string
		args    []string
		secrets []string
	}{
		{"headers", base + "/?token=t0ken&page=2", []string{"-H", "Authorization: Bearer B34R3R", "-H", "Cookie: id=c00kie",
			"-H", "X-Api-Key: k3y", "--redact", "X-Api-Key", "--redact", "token"}, []string{"B34R3R", "c00kie", "k3y", "t0ken"}},
		{"url-credentials", strings.Replace(base, "http://", "http://alice:s3cr3tpw@", 1) + "/?page=2", nil,
			[]string{"s3cr3tpw", basic}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			common := append([]string{"-n", "5", "--no-tui"}, tc.args...)
			runs := map[string][]string{}
			for _, format := range []string{"text", "json", "csv", "csv-seconds", "markdown", "html"} {
				f := filepath.Join(dir, "out-"+format)
				runs[f] = append([]string{"--output-format", format, "-o", f}, common...)
			}
			db := filepath.Join(dir, "log.db")
			runs[db] = append([]string{"--db-url", db, "-j", "-o", filepath.Join(dir, "db.json")}, common...)
			for path, args := range runs {
				_, stderr, code := hail(t, append(args, tc.url)...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, stderr)
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, secret := range tc.secrets {
					if bytes.Contains(raw, []byte(secret)) || strings.Contains(stderr, secret) {
						t.Errorf("%s: secret %q leaked", filepath.Base(path), secret)
					}
				}
			}
			raw, _ := os.ReadFile(filepath.Join(dir, "out-json"))
			if !bytes.Contains(raw, []byte("[redacted]")) || !bytes.Contains(raw, []byte("page=2")) {
				t.Errorf("the JSON report has no [redacted] marker or lost page=2:\n%s", raw)
			}
			// With --show-secrets the same run shows them (URL passwords excepted: they travel
			// only as the Authorization header), so the checks above can fail.
			shown := filepath.Join(dir, "shown.json")
			if _, stderr, code := hail(t, append(append([]string{"-j", "-o", shown, "--show-secrets"}, common...), tc.url)...); code != 0 {
				t.Fatalf("--show-secrets: exit %d: %s", code, stderr)
			}
			raw, _ = os.ReadFile(shown)
			for _, secret := range tc.secrets {
				if secret != "s3cr3tpw" && !bytes.Contains(raw, []byte(secret)) {
					t.Errorf("--show-secrets: %q not shown", secret)
				}
			}
		})
	}
}
