package listen

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestListenReplacesADeadServersSocket(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.sock")
	live, err := Listen("unix:" + path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen("unix:" + path); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("a second server on a live socket: %v, want EADDRINUSE", err)
	}
	live.(*net.UnixListener).SetUnlinkOnClose(false) // die as a killed server does: the file stays
	live.Close()
	ln, err := Listen("unix:" + path)
	if err != nil {
		t.Fatalf("the dead server's socket file was not replaced: %v", err)
	}
	defer ln.Close()
	file := filepath.Join(t.TempDir(), "not-a-socket")
	if err := os.WriteFile(file, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen("unix:" + file); err == nil {
		t.Error("a regular file in the way was replaced")
	} else if b, _ := os.ReadFile(file); string(b) != "data" {
		t.Errorf("the regular file in the way holds %q", b)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// tempErr is a temporary accept error (as EMFILE is).
type tempErr struct{}

func (tempErr) Error() string   { return "too many open files" }
func (tempErr) Temporary() bool { return true }
func (tempErr) Timeout() bool   { return false }

// flaky fails its first accepts with temporary errors, then accepts from ln.
type flaky struct {
	net.Listener
	fails int
}

func (f *flaky) Accept() (net.Conn, error) {
	if f.fails > 0 {
		f.fails--
		return nil, tempErr{}
	}
	return f.Listener.Accept()
}

func TestAccept(t *testing.T) {
	t.Parallel()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			<-done
		}
	}()
	start := time.Now()
	nc, err := Accept(&flaky{Listener: ln, fails: 2}, done)
	if err != nil || nc == nil {
		t.Fatalf("after two temporary errors: %v, %v", nc, err)
	}
	nc.Close()
	if d := time.Since(start); d < 15*time.Millisecond { // 5 ms, then 10 ms
		t.Errorf("retried after %v, want a backoff of 15 ms", d)
	}
	close(done)
	ln.Close()
	if nc, err := Accept(ln, done); nc != nil || err != nil {
		t.Errorf("after close: %v, %v; want nil, nil", nc, err)
	}
	other, _ := Listen("127.0.0.1:0")
	other.Close()
	if _, err := Accept(other, make(chan struct{})); err == nil {
		t.Error("a closed listener of a server still running: no error")
	}
}

func TestServer(t *testing.T) {
	t.Parallel()
	errClosed := errors.New("test: server closed")
	handled := make(chan error, 2)
	s := NewServer(Config{Name: "test", Addr: "127.0.0.1:0", ErrClosed: errClosed, Handle: func(nc net.Conn) {
		defer nc.Close()
		_, err := nc.Read(make([]byte, 1)) // blocks until Close closes nc
		handled <- err
	}})
	if s.Addr() != nil {
		t.Errorf("Addr before Listen: %v", s.Addr())
	}
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr().String() != addr.String() {
		t.Errorf("Addr %v, Listen returned %v", s.Addr(), addr)
	}
	if _, err := s.Listen(); err == nil || err.Error() != "test: already listening on "+addr.String() {
		t.Errorf("a second Listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	for range 2 {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections served, want 2", n)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-s.Done():
		t.Fatal("Done closed before Close")
	default:
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	for range 2 {
		if err := <-handled; err == nil {
			t.Error("a connection's read ended without an error at Close")
		}
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	<-s.Done()
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := s.Listen(); err != errClosed {
		t.Errorf("Listen after Close: %v", err)
	}
	if err := s.Serve(); err != nil {
		t.Errorf("Serve after Close: %v", err)
	}
}
