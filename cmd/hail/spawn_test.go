package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// childStderr is what a child hail writes to stderr, read as it comes.
type childStderr struct {
	mu      sync.Mutex
	b       strings.Builder
	drained chan struct{} // closed when the child's stderr is closed (it exited)
}

// String is what was written so far.
func (c *childStderr) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// All is everything the child wrote; call it after cmd.Wait.
func (c *childStderr) All() string {
	select {
	case <-c.drained:
	case <-time.After(5 * time.Second):
	}
	return c.String()
}

// startListening starts cmd, a hail that listens (its --addr at port 0),
// and returns the address it says it listens on: the first word after
// prefix in a line of its stderr. The port is the process's own from its
// bind on, so no parallel test can take it between a probe's close and
// hail's bind. cmd is killed when t ends, and may be waited on before.
func startListening(t *testing.T, cmd *exec.Cmd, prefix string) (addr string, stderr *childStderr) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stderr = &childStderr{drained: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		defer close(stderr.drained)
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		for sent := false; sc.Scan(); {
			line := sc.Text()
			stderr.mu.Lock()
			stderr.b.WriteString(line + "\n")
			stderr.mu.Unlock()
			if a, ok := strings.CutPrefix(line, prefix); ok && !sent {
				a, _, _ = strings.Cut(a, " ")
				found <- a
				sent = true
			}
		}
	}()
	select {
	case addr = <-found:
		return addr, stderr
	case <-stderr.drained:
		t.Fatalf("%s exited without saying %q; stderr %q", cmd.Args, prefix, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not say %q in 20 s; stderr %q", cmd.Args, prefix, stderr.String())
	}
	return "", nil
}

// startMetrics starts cmd, a hail run given --metrics-addr at port 0, and
// returns the address its metrics are served at, from its stderr line.
func startMetrics(t *testing.T, cmd *exec.Cmd) (addr string, stderr *childStderr) {
	t.Helper()
	url, stderr := startListening(t, cmd, "hail: metrics at http://")
	return strings.TrimSuffix(url, "/metrics"), stderr
}
