package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/barrier"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
)

// barrierState polls a shard's /ready; nil until it answers.
func barrierState(addr string) *barrier.State {
	resp, err := http.Get("http://" + addr + "/ready")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var st barrier.State
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return nil
	}
	return &st
}

// waitReady waits up to 20 s for the shard at addr to say it is ready.
func waitReady(t *testing.T, addr string, cmd *exec.Cmd, stderr fmt.Stringer) *barrier.State {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if st := barrierState(addr); st != nil && st.Ready {
			return st
		}
	}
	cmd.Process.Kill()
	t.Fatalf("the shard never became ready: %s", stderr.String())
	return nil
}

func post(t *testing.T, url string, token ...string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, nil)
	for _, tok := range token {
		req.Header.Set(barrier.TokenHeader, tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A shard started with --start-at barrier prepares its run, says so at
// /ready and sends nothing until a start time is posted; it starts at that
// time, records it as its start_at, and a /stop after the start stops it
// as SIGTERM does: a complete result marked interrupted, exit 4.
func TestShardBarrierStartAndStop(t *testing.T) {
	t.Parallel()
	base, srv := servetest.Start(t)
	out := filepath.Join(t.TempDir(), "shard.json")
	cmd := exec.Command(hailBin, "-z", "30s", "-q", "400", "-c", "2", "--no-tui", "-j", "-o", out,
		"--shard", "1/2", "--start-at", "barrier", "--metrics-addr", "127.0.0.1:0", base+"/")
	addr, stderr := startMetrics(t, cmd)
	st := waitReady(t, addr, cmd, stderr)
	if st.Shard != "1/2" || st.StartUnixNano != 0 {
		t.Fatalf("ready state %+v", st)
	}
	time.Sleep(200 * time.Millisecond) // ready, not started: nothing may arrive
	if n := srv.Stats().Requests; n != 0 {
		t.Fatalf("the server saw %d requests before the start", n)
	}
	at := time.Now().Add(400 * time.Millisecond)
	if code := post(t, fmt.Sprintf("http://%s/start?at=%d", addr, at.UnixNano())); code != 200 {
		t.Fatalf("start: %d", code)
	}
	waitArrivals(t, srv, 40)
	if time.Now().Before(at) {
		t.Fatal("requests arrived before the start time")
	}
	if code := post(t, "http://"+addr+"/stop?why=test"); code != 200 {
		t.Fatalf("stop: %d", code)
	}
	if code := exitWithin(cmd, 10*time.Second); code != exitInterruptedShard {
		t.Fatalf("exit %d, want %d: %s", code, exitInterruptedShard, stderr.All())
	}
	if !strings.Contains(stderr.All(), "hail: shard 1/2 was interrupted after") {
		t.Errorf("stderr: %s", stderr.All())
	}
	checkResult(t, out, true)
	r := readResultFile(t, out)
	s := r.Hail.Shard
	if s == nil || s.StartAt != at.UTC().Format(time.RFC3339Nano) || s.Late < 0 || s.Late > 100*time.Millisecond {
		t.Fatalf("shard %+v, want start_at %s", s, at.UTC().Format(time.RFC3339Nano))
	}
	if started := r.Hail.Start; started.Before(at) {
		t.Errorf("started %s before the barrier's time %s", started, at)
	}
}

// A stop before the start calls the run off: exit 1 with one line saying
// so, nothing sent, no output file. With a barrier token (the Job's), a
// stop without it is refused.
func TestShardBarrierCalledOff(t *testing.T) {
	t.Parallel()
	base, srv := servetest.Start(t)
	out := filepath.Join(t.TempDir(), "shard.json")
	cmd := exec.Command(hailBin, "-n", "100", "-c", "2", "--no-tui", "-j", "-o", out,
		"--shard", "0/2", "--start-at", "barrier", "--metrics-addr", "127.0.0.1:0", base+"/")
	cmd.Env = append(os.Environ(), barrier.TokenEnv+"=t0k")
	addr, stderr := startMetrics(t, cmd)
	waitReady(t, addr, cmd, stderr)
	if code := post(t, "http://"+addr+"/stop?why=not+mine"); code != 403 {
		t.Fatalf("a stop without the token: %d", code)
	}
	if code := post(t, "http://"+addr+"/stop?why=shard+1%2F2+is+not+ready", "t0k"); code != 200 {
		t.Fatalf("stop: %d", code)
	}
	if code := exitWithin(cmd, 10*time.Second); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr.All())
	}
	// One line after the one saying where the metrics are (port 0 asked).
	se := strings.TrimSpace(stderr.All())
	if metrics, rest, _ := strings.Cut(se, "\n"); !strings.HasPrefix(metrics, "hail: metrics at http://"+addr+"/metrics") ||
		strings.Count(rest, "\n") != 0 || !strings.Contains(rest, "called off before its start (shard 1/2 is not ready): nothing was sent") {
		t.Errorf("stderr %q", se)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output file: %v", err)
	}
	if n := srv.Stats().Requests; n != 0 {
		t.Errorf("the server saw %d requests", n)
	}
}

// --start-at barrier needs --shard and --metrics-addr: one line naming them.
func TestShardBarrierNeedsShardAndAddr(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--start-at", "barrier", "--metrics-addr", "127.0.0.1:0"},
		{"--start-at", "barrier", "--shard", "0/2"},
	} {
		_, se, code := hail(t, append(args, "-n", "10", "http://127.0.0.1:1/")...)
		if code != 1 || !strings.Contains(se, "--start-at barrier: give --shard I/N and --metrics-addr") {
			t.Errorf("%v: exit %d, %q", args, code, se)
		}
	}
}
