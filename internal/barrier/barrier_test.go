package barrier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// call sends one request to the gate's server and returns the
// status and the decoded state (when the body is one).
func call(t *testing.T, method, url string) (int, State, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st State
	var raw strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		raw.Write(buf[:n])
		if err != nil {
			break
		}
	}
	_ = json.Unmarshal([]byte(raw.String()), &st)
	return resp.StatusCode, st, raw.String()
}

// The protocol, step by step: not ready, ready, a start refused when too
// close or different, the start accepted once, Wait returning it.
func TestGateProtocol(t *testing.T) {
	t.Parallel()
	g := New("1/3", nil)
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()

	if code, st, _ := call(t, "GET", srv.URL+"/ready"); code != 503 || st.Ready || st.Shard != "1/3" || st.NowUnixNano == 0 {
		t.Fatalf("before Wait: %d %+v", code, st)
	}
	if code, _, body := call(t, "POST", srv.URL+fmt.Sprintf("/start?at=%d", time.Now().Add(time.Second).UnixNano())); code != 409 || !strings.Contains(body, "not ready") {
		t.Fatalf("a start before ready: %d %s", code, body)
	}
	type waited struct {
		at  time.Time
		err error
	}
	done := make(chan waited, 1)
	go func() {
		at, err := g.Wait(context.Background(), nil)
		done <- waited{at, err}
	}()
	for {
		if code, st, _ := call(t, "GET", srv.URL+"/ready"); code == 200 && st.Ready {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, tc := range []struct {
		query string
		code  int
		want  string
	}{
		{"", 400, "at=UNIX_NANOSECONDS"},
		{"at=soon", 400, "at=UNIX_NANOSECONDS"},
		{fmt.Sprintf("at=%d", time.Now().Add(10*time.Millisecond).UnixNano()), 409, "less than 100ms"},
		{fmt.Sprintf("at=%d", time.Now().Add(-time.Second).UnixNano()), 409, "less than 100ms"},
	} {
		if code, _, body := call(t, "POST", srv.URL+"/start?"+tc.query); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("start %q: %d %q, want %d %q", tc.query, code, body, tc.code, tc.want)
		}
	}
	at := time.Now().Add(time.Second).Round(0)
	if code, st, _ := call(t, "POST", srv.URL+fmt.Sprintf("/start?at=%d", at.UnixNano())); code != 200 || st.StartUnixNano != at.UnixNano() {
		t.Fatalf("start: %d %+v", code, st)
	}
	w := <-done
	if w.err != nil || !w.at.Equal(at) {
		t.Fatalf("Wait: %v %v, want %v", w.at, w.err, at)
	}
	// The same time again is accepted (a retried request), another refused.
	if code, _, _ := call(t, "POST", srv.URL+fmt.Sprintf("/start?at=%d", at.UnixNano())); code != 200 {
		t.Errorf("the same start again: %d", code)
	}
	if code, _, body := call(t, "POST", srv.URL+fmt.Sprintf("/start?at=%d", at.Add(time.Second).UnixNano())); code != 409 || !strings.Contains(body, "already set") {
		t.Errorf("another start: %d %s", code, body)
	}
}

// With a token, /start and /stop refuse a request without it; /ready
// answers anyone.
func TestGateToken(t *testing.T) {
	t.Parallel()
	g := New("0/1", nil)
	g.RequireToken("s3cret")
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	go g.Wait(context.Background(), nil)
	for {
		if code, st, _ := call(t, "GET", srv.URL+"/ready"); code == 200 && st.Ready {
			break
		}
		time.Sleep(time.Millisecond)
	}
	at := fmt.Sprintf("/start?at=%d", time.Now().Add(time.Second).UnixNano())
	for _, path := range []string{at, "/stop?why=x"} {
		if code, _, body := call(t, "POST", srv.URL+path); code != 403 || !strings.Contains(body, "no or wrong barrier token") {
			t.Errorf("%s without the token: %d %s", path, code, body)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+at, nil)
	req.Header.Set(TokenHeader, "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("with the token: %v %v", resp, err)
	}
	resp.Body.Close()
}

// A stop before the start calls the run off: Wait fails with ErrStopped,
// naming why, and onStop is not called (nothing runs to stop); a start
// after it is refused.
func TestGateStopBeforeStart(t *testing.T) {
	t.Parallel()
	var stops atomic.Int32
	g := New("0/2", func() { stops.Add(1) })
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	done := make(chan error, 1)
	go func() {
		_, err := g.Wait(context.Background(), nil)
		done <- err
	}()
	for {
		if _, st, _ := call(t, "GET", srv.URL+"/ready"); st.Ready {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if code, st, _ := call(t, "POST", srv.URL+"/stop?why=shard+1+never+became+ready"); code != 200 || st.Stopped != "shard 1 never became ready" {
		t.Fatalf("stop: %d %+v", code, st)
	}
	err := <-done
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "shard 1 never became ready") || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("Wait: %v", err)
	}
	if err := g.Start(time.Now().Add(time.Second)); err == nil {
		t.Error("a start after the stop was accepted")
	}
	if stops.Load() != 0 {
		t.Error("onStop called for a run that never started")
	}
}

// A stop after the start goes to onStop, once; Wait still returns the
// start (the run stops through the signal handling).
func TestGateStopAfterStart(t *testing.T) {
	t.Parallel()
	var stops atomic.Int32
	g := New("0/2", func() { stops.Add(1) })
	go func() {
		for !g.state().Ready {
			time.Sleep(time.Millisecond)
		}
		if err := g.Start(time.Now().Add(200 * time.Millisecond)); err != nil {
			t.Error(err)
		}
		g.Stop("the user stopped the run")
		g.Stop("again")
	}()
	at, err := g.Wait(context.Background(), nil)
	if err != nil || at.IsZero() {
		t.Fatalf("Wait: %v %v", at, err)
	}
	for stops.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	if n := stops.Load(); n != 1 {
		t.Errorf("onStop called %d times", n)
	}
}

// The coordinator gets its whole answer to a stop before the stop takes
// effect: a shard ends right after it (called off, hail exits at once;
// stopped, it stops as on SIGTERM), and its connections with it. Here the
// shard "ends" — every connection to it closed — the moment the stop acts:
// when Wait returns (called off) or onStop is called (after the start).
// Called off, the answer is held until the shard has ended (or 100 ms
// passed, as it must not end before its answer is out): the race a loaded
// machine loses now and then, every time.
func TestGateAnswersBeforeStopping(t *testing.T) {
	t.Parallel()
	for _, started := range []bool{false, true} {
		var srv *httptest.Server
		g := New("0/2", func() { srv.CloseClientConnections() })
		ended := make(chan struct{})
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			g.Handler().ServeHTTP(heldWriter{w, ended}, r)
		}))
		waited := make(chan struct{})
		go func() {
			defer close(waited)
			if _, err := g.Wait(context.Background(), nil); err != nil {
				srv.CloseClientConnections() // called off: the process exits
				close(ended)
			}
		}()
		for !g.state().Ready {
			time.Sleep(time.Millisecond)
		}
		if started {
			if err := g.Start(time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		req, _ := http.NewRequest("POST", srv.URL+"/stop?why=shard+1+is+not+ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("started %v: %v", started, err)
		}
		var st State
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || st.Stopped != "shard 1 is not ready" {
			t.Fatalf("started %v: %d %+v %v", started, resp.StatusCode, st, err)
		}
		if !started {
			<-waited
		}
		srv.Close()
	}
}

// heldWriter holds a stop's answer until ended is closed or 100 ms passed.
type heldWriter struct {
	http.ResponseWriter
	ended chan struct{}
}

func (w heldWriter) WriteHeader(code int) {
	if code == http.StatusOK {
		select {
		case <-w.ended:
		case <-time.After(100 * time.Millisecond):
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w heldWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// An interrupt (SIGTERM while waiting) or a cancelled context ends the
// wait with nothing sent.
func TestGateInterrupted(t *testing.T) {
	t.Parallel()
	g := New("0/2", nil)
	stop := make(chan struct{})
	close(stop)
	if _, err := g.Wait(context.Background(), stop); err == nil || !strings.Contains(err.Error(), "nothing was sent") {
		t.Errorf("interrupt: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New("0/2", nil).Wait(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("context: %v", err)
	}
}
