package kube

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/result"
)

// resultFromLog finds a shard's result in its log: the last JSON object
// from a line "{" to a line "}" (hail's own messages, on stderr in the same
// log, are lines of their own outside it and are skipped should one come
// inside).
func resultFromLog(log []byte) (*result.Result, error) {
	var last []byte
	var cur *bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		l := sc.Bytes()
		switch {
		case string(l) == "{":
			cur = &bytes.Buffer{}
			cur.WriteString("{\n")
		case cur == nil:
		case string(l) == "}":
			cur.WriteString("}\n")
			last, cur = cur.Bytes(), nil
		case len(l) > 0 && (l[0] == ' ' || l[0] == '\t'):
			cur.Write(l)
			cur.WriteByte('\n')
		}
	}
	if last == nil {
		return nil, errors.New("its log holds no complete result")
	}
	r, err := result.ReadJSON(bytes.NewReader(last))
	if err != nil {
		return nil, fmt.Errorf("the result in its log is not valid: %v", err)
	}
	return r, nil
}

// followers follow the shards' logs while the run goes on, each into
// DIR/shard-I.log: a pod deleted mid-run takes its log with it, but what
// it printed as it stopped (its result) has been read by then.
type followers struct {
	dir func() (string, error) // the run's local directory, made on first use
	io  podIO

	mu      sync.Mutex
	started map[int]bool
	wg      sync.WaitGroup
}

// follow starts following shard i's pod, once.
func (f *followers) follow(ctx context.Context, i int, pod string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started == nil {
		f.started = map[int]bool{}
	}
	if f.started[i] {
		return
	}
	f.started[i] = true
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		dir, err := f.dir()
		if err != nil {
			return
		}
		rc, err := f.io.Logs(ctx, pod, container, true)
		if err != nil {
			return
		}
		defer rc.Close()
		out, err := os.Create(filepath.Join(dir, fmt.Sprintf("shard-%d.log", i)))
		if err != nil {
			return
		}
		defer out.Close()
		_, _ = io.Copy(out, rc)
	}()
}

// waitFor waits up to limit for every follower to end (their pods'
// containers ended, or their context did).
func (f *followers) waitFor(limit time.Duration) {
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
	}
}
