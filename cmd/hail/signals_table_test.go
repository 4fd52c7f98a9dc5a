package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The signal table (signals.go) as a function: every phase, with and
// without a signal that stopped it, for a new signal and the same one
// delivered twice.
func TestSignalTable(t *testing.T) {
	t.Parallel()
	intr, term := os.Interrupt, os.Signal(syscall.SIGTERM)
	later := signalWindow + time.Millisecond
	for _, tc := range []struct {
		name            string
		p               phase
		stoppedBy, prev os.Signal
		sig             os.Signal
		since           time.Duration
		want            action
	}{
		{"setup: first", phaseSetup, nil, nil, term, 0, actStop},
		{"setup: further", phaseSetup, term, term, term, later, actExit},
		{"load: first", phaseLoad, nil, nil, intr, 0, actStop},
		{"load: the same, from the process group", phaseLoad, term, term, term, time.Microsecond, actIgnore},
		{"load: Ctrl-C after a TERM", phaseLoad, term, term, intr, time.Millisecond, actExit},
		{"load (drain): further", phaseLoad, intr, intr, intr, later, actExit},
		{"drain after -z: first", phaseLoad, nil, nil, intr, 0, actStop},
		{"teardown after a stopped load: first of its own", phaseTeardown, nil, intr, intr, later, actStop},
		{"teardown: the load's signal, again", phaseTeardown, nil, term, term, time.Millisecond, actIgnore},
		{"teardown: further", phaseTeardown, intr, intr, intr, later, actExit},
		{"output: first", phaseOutput, nil, nil, intr, 0, actIgnore},
		{"output: further", phaseOutput, intr, intr, intr, later, actExit},
	} {
		if got := signalAction(tc.p, tc.stoppedBy, tc.prev, tc.sig, tc.since); got != tc.want {
			t.Errorf("%s: action %d, want %d", tc.name, got, tc.want)
		}
	}
}

// arrivals is an HTTP server that tells the test when a request for a
// path first arrives, and holds the requests for paths under /hold until
// the test ends (a silent server, as far as hail can tell).
type arrivals struct {
	url   string
	mu    sync.Mutex
	first map[string]chan struct{}
	n     map[string]int
}

func startArrivals(t *testing.T) *arrivals {
	a := &arrivals{first: map[string]chan struct{}{}, n: map[string]int{}}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.n[r.URL.Path]++
		a.n["conn "+r.RemoteAddr]++
		ch := a.ch(r.URL.Path)
		if a.n["conn "+r.RemoteAddr] == 2 { // hail read this connection's first response
			if reused := a.ch(answered); !closed(reused) {
				close(reused)
			}
		}
		a.mu.Unlock()
		select {
		case <-ch:
		default:
			close(ch)
		}
		if strings.HasPrefix(r.URL.Path, "/hold") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	a.url = srv.URL
	return a
}

// answered is the arrivals' event for a second request on one connection:
// hail had read a response (a stopped load then exits 0, not 3).
const answered = "answered"

// closed says whether ch is closed.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (a *arrivals) ch(path string) chan struct{} {
	ch, ok := a.first[path]
	if !ok {
		ch = make(chan struct{})
		a.first[path] = ch
	}
	return ch
}

// wait returns once a request for path has arrived (failing the test
// after 15 s).
func (a *arrivals) wait(t *testing.T, path string) {
	t.Helper()
	a.mu.Lock()
	ch := a.ch(path)
	a.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(15 * time.Second):
		t.Fatalf("no request for %s arrived", path)
	}
}

func (a *arrivals) count(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[path]
}

// hailProc is hail started in its own process group, its stderr kept.
type hailProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
}

func startHail(t *testing.T, args ...string) *hailProc {
	t.Helper()
	h := &hailProc{cmd: exec.Command(hailBin, args...), done: make(chan struct{})}
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	h.cmd.Stderr = &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.cmd.Wait(); close(h.done) }()
	t.Cleanup(func() { h.cmd.Process.Kill(); <-h.done })
	return h
}

// exit waits for hail to end, at most limit, and returns its exit code.
func (h *hailProc) exit(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-h.done:
		return h.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("hail still running %v after the signal; stderr %q", limit, h.stderr.String())
		return -1
	}
}

// signal sends sig to hail, and waits out the window in which another
// counts as the same signal.
func (h *hailProc) signal(sig syscall.Signal) {
	h.cmd.Process.Signal(sig)
}

// resultMap reads a complete JSON result at path and fails the test if it is
// not one, or if any temporary file is left in its directory.
func resultMap(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no result: %v", err)
	}
	var r map[string]any
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s is not valid JSON (%d bytes): %v", path, len(raw), err)
	}
	noTemp(t, filepath.Dir(path))
	return r
}

func noTemp(t *testing.T, dir string) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// field walks a decoded JSON result: field(r, "hail", "setup", "failed").
func field(r map[string]any, path ...string) any {
	var v any = r
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// Each row of the signal table, as a run meets it: the signal is sent when
// the server sees the request of the phase (no fixed sleeps), and the run
// ends as the table says — a complete, valid -o file and no temporary file
// left, or exit 130 and nothing at all.
func TestSignalPhases(t *testing.T) {
	t.Parallel()
	signals := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP}
	for _, name := range []string{"INT", "TERM", "HUP"} {
		sig := signals[name]

		// Setup: a scenario's setup step waits on a silent server. One signal
		// stops it (the step aborted); the load starts and stops at once;
		// the report is written, the setup shown as interrupted.
		t.Run("setup/scenario/"+name, func(t *testing.T) {
			t.Parallel()
			a := startArrivals(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "s.yaml")
			os.WriteFile(file, []byte("base: "+a.url+"\nrequests: 20\nsetup:\n  - {name: s, path: /hold/setup}\nsteps:\n  - {name: a, path: /load}\n"), 0o644)
			out := filepath.Join(dir, "out.json")
			h := startHail(t, "run", "--no-tui", "-j", "-o", out, file)
			a.wait(t, "/hold/setup")
			h.signal(sig)
			if code := h.exit(t, 5*time.Second); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, h.stderr.String())
			}
			r := resultMap(t, out)
			if f := field(r, "hail", "setup", "failed"); f != "s: interrupted" || field(r, "hail", "interrupted") != true || a.count("/load") != 0 {
				t.Errorf("setup.failed %v, interrupted %v, %d load requests arrived", f, field(r, "hail", "interrupted"), a.count("/load"))
			}
		})

		// Setup: hail grpc probing a server that accepts and stays silent.
		// Nothing can start without it: exit 130 with one line, nothing written.
		t.Run("setup/grpc-probe/"+name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				if c, err := ln.Accept(); err == nil {
					accepted <- c
				}
			}()
			dir := t.TempDir()
			h := startHail(t, "grpc", "--no-tui", "-j", "--insecure", "--connect-timeout", "30s", "--call", "hail.v1.Target/Echo",
				"-o", filepath.Join(dir, "out.json"), ln.Addr().String())
			select {
			case c := <-accepted:
				defer c.Close()
			case <-time.After(15 * time.Second):
				t.Fatal("hail did not connect")
			}
			h.signal(sig)
			if code := h.exit(t, 5*time.Second); code != 130 || !strings.Contains(h.stderr.String(), "interrupted during setup: nothing was sent") {
				t.Fatalf("exit %d, stderr %q", code, h.stderr.String())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left in the output directory: %v", entries)
			}
		})

		// Load: one signal stops sending; the report is complete. Until it
		// is written, nothing is at -o (output files are created only when
		// written).
		t.Run("load/"+name, func(t *testing.T) {
			t.Parallel()
			a := startArrivals(t)
			dir := t.TempDir()
			out := filepath.Join(dir, "out.json")
			h := startHail(t, "-z", "60s", "-q", "200", "-c", "2", "--no-tui", "-j", "-o", out, a.url+"/load")
			a.wait(t, answered)
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("during the load, before anything is written: %v", entries)
			}
			h.signal(sig)
			if code := h.exit(t, 5*time.Second); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, h.stderr.String())
			}
			r := resultMap(t, out)
			if field(r, "hail", "interrupted") != true {
				t.Errorf("interrupted %v", field(r, "hail", "interrupted"))
			}
		})
	}

	// Setup: a shard waiting for --start-at. Nothing can be sent any more:
	// exit 130 with one line, nothing written. The signal is sent once
	// hail's metrics endpoint answers: it is then waiting.
	t.Run("setup/start-at", func(t *testing.T) {
		t.Parallel()
		a := startArrivals(t)
		dir := t.TempDir()
		metrics := freeAddr(t)
		at := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
		h := startHail(t, "--start-at", at, "--metrics-addr", metrics, "-n", "5", "--no-tui", "-j", "-o", filepath.Join(dir, "out.json"), a.url+"/load")
		waitServing(t, "http://"+metrics+"/metrics")
		h.signal(syscall.SIGTERM)
		if code := h.exit(t, 5*time.Second); code != 130 || !strings.Contains(h.stderr.String(), "interrupted while waiting for --start-at") {
			t.Fatalf("exit %d, stderr %q", code, h.stderr.String())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 || a.count("/load") != 0 {
			t.Errorf("left %v; %d requests sent", entries, a.count("/load"))
		}
	})

	// Drain: -w after -z waits for a request the server holds; a signal
	// aborts it and the report is written (the others' responses in it).
	t.Run("drain/first", func(t *testing.T) {
		t.Parallel()
		base, _, idleClosed := stallServer(t)
		dir := t.TempDir()
		out := filepath.Join(dir, "out.json")
		// The closed model: the connection that is not held sends until -z
		// ends, then closes (in the open model it would close after the last
		// request due, before -z ends).
		h := startHail(t, "-z", "300ms", "-w", "-c", "2", "--no-tui", "-j", "-o", out, base+"/")
		select { // past -z: settling, which only the held request keeps going
		case <-idleClosed:
		case <-time.After(15 * time.Second):
			t.Fatal("the load did not end")
		}
		h.signal(syscall.SIGINT)
		if code := h.exit(t, 5*time.Second); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, h.stderr.String())
		}
		if r := resultMap(t, out); field(r, "errorDistribution", "aborted due to deadline") == nil {
			t.Errorf("errors %v: want the held request aborted", field(r, "errorDistribution"))
		}
	})

	// Drain: a further signal while -w settles exits at once with 130, and
	// nothing is left. It is sent the window after hail took the first (it
	// closed its idle connection): a new signal, not the same one twice.
	t.Run("drain/further", func(t *testing.T) {
		t.Parallel()
		base, answered, idleClosed := stallServer(t)
		dir := t.TempDir()
		h := startHail(t, "-z", "60s", "-w", "-c", "2", "-q", "4", "--no-tui", "-j", "-o", filepath.Join(dir, "out.json"), base+"/")
		<-answered
		h.signal(syscall.SIGTERM)
		select {
		case <-idleClosed:
		case <-time.After(15 * time.Second):
			t.Fatal("hail did not stop the load within 15 s of the signal")
		}
		time.Sleep(signalWindow + 100*time.Millisecond)
		h.signal(syscall.SIGTERM)
		if code := h.exit(t, 3*time.Second); code != 130 {
			t.Fatalf("exit %d, stderr %q", code, h.stderr.String())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("left in the output directory: %v", entries)
		}
	})

	// Teardown: a signal stops the load, the teardown then waits on a
	// silent server; a signal of its own stops it, and the report is
	// written with the teardown interrupted.
	for _, stopLoad := range []bool{true, false} {
		name := map[bool]string{true: "teardown/after-a-stopped-load", false: "teardown/after-the-load"}[stopLoad]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := startArrivals(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "s.yaml")
			length := "requests: 3"
			if stopLoad {
				length = "duration: 60s\nrate: 100"
			}
			os.WriteFile(file, []byte("base: "+a.url+"\n"+length+"\nsteps:\n  - {name: a, path: /load}\nteardown:\n  - {name: t, path: /hold/teardown}\n"), 0o644)
			out := filepath.Join(dir, "out.json")
			h := startHail(t, "run", "--no-tui", "-j", "-o", out, file)
			if stopLoad {
				a.wait(t, answered)
				h.signal(syscall.SIGTERM)
			}
			a.wait(t, "/hold/teardown")
			if stopLoad {
				time.Sleep(signalWindow) // the teardown's own signal, not the load's again
			}
			h.signal(syscall.SIGINT)
			if code := h.exit(t, 5*time.Second); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, h.stderr.String())
			}
			r := resultMap(t, out)
			if f := field(r, "hail", "teardown", "failed"); f != "t: interrupted" || field(r, "hail", "interrupted") != stopLoad {
				t.Errorf("teardown.failed %v, interrupted %v", f, field(r, "hail", "interrupted"))
			}
		})
	}
}

// -o is checked before anything is sent: a directory, or a file in a
// directory that does not exist, is one line and exit 1, and the server
// sees no request (the whole result was lost after the run before).
func TestOutputCheckedFirst(t *testing.T) {
	t.Parallel()
	a := startArrivals(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct{ out, want string }{
		{dir, "is a directory: name a file, e.g. -o " + filepath.Join(dir, "result.json")},
		{filepath.Join(dir, "missing", "r.json"), "directory " + filepath.Join(dir, "missing") + " does not exist"},
		{filepath.Join(file, "r.json"), "directory " + file + " does not exist"},
	} {
		for _, cmd := range [][]string{{"-n", "5", a.url + "/load"}, {"grpc", "--insecure", "-n", "5", "127.0.0.1:1"}} {
			args := append([]string{}, cmd[:len(cmd)-1]...)
			args = append(args, "--no-tui", "-o", tc.out, cmd[len(cmd)-1])
			_, errOut, code := hail(t, args...)
			if code != 1 || !strings.Contains(errOut, "-o "+tc.out+": "+tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("hail %v: exit %d, stderr %q", args, code, errOut)
			}
		}
	}
	if n := a.count("/load"); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
	// A FIFO (or a device: /dev/null, /dev/stdout) is written in place,
	// never replaced by a file: renaming over /dev/null replaced the
	// machine's /dev/null with a regular file.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // opens when hail does, reads to its close
		got <- b
	}()
	if _, errOut, code := hail(t, "-n", "3", "--no-tui", "-j", "-o", fifo, a.url+"/load"); code != 0 {
		t.Fatalf("-o %s: exit %d, %s", fifo, code, errOut)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is now %v (%v)", fifo, st.Mode(), err)
	}
	if b := <-got; !json.Valid(b) {
		t.Errorf("the FIFO carried %d bytes that are not JSON", len(b))
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitServing waits until url answers (failing the test after 15 s).
func waitServing(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never answered", url)
}

// The signal table across a scenario's targets: each setup and teardown
// step is a run of its own, on its target's connections, and the load one
// run with an engine per target; a signal stops whichever is in flight
// (the step's requests aborted, no further step run) and the report is
// written, with each target's row.
func TestSignalsAcrossTargets(t *testing.T) {
	t.Parallel()
	for _, phase := range []string{"setup", "load", "teardown"} {
		t.Run(phase, func(t *testing.T) {
			t.Parallel()
			a, b := startArrivals(t), startArrivals(t)
			hold := map[string]string{"setup": "/setup", "load": "/load", "teardown": "/teardown"}
			hold[phase] = "/hold/" + phase
			length := "duration: 60s\nrate: 50\n"
			if phase == "teardown" {
				length = "requests: 6\n" // a load that ends by itself
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "s.yaml")
			os.WriteFile(file, []byte("targets: {a: "+a.url+", b: "+b.url+"}\n"+length+
				"setup:\n  - {name: s1, target: a, path: /setup, repeat: 4, concurrency: 2}\n  - {name: s2, target: b, path: "+hold["setup"]+"}\n"+
				"steps:\n  - {name: la, target: a, path: /load}\n  - {name: lb, target: b, path: "+hold["load"]+"}\n"+
				"teardown:\n  - {name: t1, target: a, path: /teardown}\n  - {name: t2, target: b, path: "+hold["teardown"]+"}\n  - {name: t3, target: a, path: /after}\n"), 0o644)
			out := filepath.Join(dir, "out.json")
			h := startHail(t, "run", "--no-tui", "-j", "-o", out, file)
			b.wait(t, "/hold/"+phase)
			if phase == "load" {
				// A response came back before the signal (none would exit 3):
				// the second request to a is 20 ms behind its answered first.
				for deadline := time.Now().Add(15 * time.Second); a.count("/load") < 2; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("no load requests arrived at a")
					}
				}
			}
			h.signal(syscall.SIGTERM)
			if phase == "load" { // the teardown, which runs after a stopped load, waits on nothing
				b.wait(t, "/teardown")
			}
			if code := h.exit(t, 5*time.Second); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, h.stderr.String())
			}
			r := resultMap(t, out)
			origins, _ := field(r, "hail", "origins").([]any)
			if len(origins) != 2 || field(r, "hail", "interrupted") != (phase != "teardown") {
				t.Errorf("%d origins, interrupted %v", len(origins), field(r, "hail", "interrupted"))
			}
			switch phase {
			case "setup":
				if f := field(r, "hail", "setup", "failed"); f != "s2: interrupted" || a.count("/setup") != 4 || a.count("/load")+b.count("/load") != 0 {
					t.Errorf("setup.failed %v; %d setup and %d load requests arrived", f, a.count("/setup"), a.count("/load")+b.count("/load"))
				}
			case "load":
				if f := field(r, "hail", "teardown", "failed"); f != nil || a.count("/after") != 1 {
					t.Errorf("teardown.failed %v, %d requests of its last step", f, a.count("/after"))
				}
			case "teardown":
				if f := field(r, "hail", "teardown", "failed"); f != "t2: interrupted" || a.count("/teardown") != 1 || a.count("/after") != 0 {
					t.Errorf("teardown.failed %v; its steps' requests: %d, then %d", f, a.count("/teardown"), a.count("/after"))
				}
			}
		})
	}
}
