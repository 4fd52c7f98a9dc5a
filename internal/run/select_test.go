package run

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/engine/uringengine"
	"github.com/hail-loadgen/hail/internal/plan"
)

func selectPlan(t *testing.T, raw, eng string) *plan.Plan {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return &plan.Plan{URL: u, Method: "GET", Connections: 4, Requests: 1, KeepAlive: true, Engine: plan.EngineName(eng)}
}

// Not parallel: it replaces uringAvailable, which every run reads.
func TestSelect(t *testing.T) {
	blocked := &uringengine.UnavailableError{Cause: "io_uring_setup is blocked by a seccomp filter (Docker's default profile blocks it)",
		Fix: "run the container with --security-opt seccomp=unconfined"}
	for _, tc := range []struct {
		name    string
		url     string
		engine  string
		sqpoll  bool
		vsock   bool
		avail   error
		want    string // engine name, "" for an error
		reason  string
		errText string
	}{
		{name: "auto-plain", url: "http://127.0.0.1:1/", engine: "auto", want: "uring", reason: "auto: io_uring available, plain HTTP/1.1 target"},
		{name: "auto-tls", url: "https://127.0.0.1:1/", engine: "auto", want: "net", reason: "auto: TLS target, using net"},
		{name: "auto-unavailable", url: "http://127.0.0.1:1/", engine: "auto", avail: blocked, want: "net",
			reason: "auto: io_uring unavailable (io_uring_setup is blocked by a seccomp filter (Docker's default profile blocks it)), using net"},
		{name: "auto-vsock-uds", url: "http://guest/", engine: "auto", vsock: true, want: "uring", reason: "auto: io_uring available, plain HTTP/1.1 target"},
		{name: "auto-sqpoll-fallback", url: "https://127.0.0.1:1/", engine: "auto", sqpoll: true, want: "net", reason: "auto: TLS target, using net (--sqpoll ignored)"},
		{name: "net", url: "http://127.0.0.1:1/", engine: "net", want: "net", reason: "--engine net"},
		{name: "net-sqpoll", url: "http://127.0.0.1:1/", engine: "net", sqpoll: true,
			errText: "--sqpoll is an option of the uring engine: drop it, or use --engine uring"},
		{name: "uring", url: "http://127.0.0.1:1/", engine: "uring", want: "uring", reason: "--engine uring"},
		{name: "uring-tls", url: "https://127.0.0.1:1/", engine: "uring",
			errText: "--engine uring: TLS targets need --engine net (the uring engine speaks plain HTTP/1.1)"},
		{name: "uring-unavailable", url: "http://127.0.0.1:1/", engine: "uring", avail: blocked,
			errText: "--engine uring: io_uring_setup is blocked by a seccomp filter (Docker's default profile blocks it); " +
				"run the container with --security-opt seccomp=unconfined; use --engine net"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := uringAvailable
			defer func() { uringAvailable = saved }()
			uringAvailable = func() error { return tc.avail }
			p := selectPlan(t, tc.url, tc.engine)
			p.SQPoll = tc.sqpoll
			if tc.vsock {
				p.VsockUDS, p.VsockUDSPort = "/tmp/v.sock", 8080
			}
			e, reason, err := Select(p)
			if tc.errText != "" {
				if err == nil || err.Error() != tc.errText {
					t.Fatalf("error %v, want %q", err, tc.errText)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is not one line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() != tc.want || reason != tc.reason {
				t.Errorf("engine %s, reason %q; want %s, %q", e.Name(), reason, tc.want, tc.reason)
			}
			if ue, ok := e.(*uringengine.Engine); ok && ue.SQPoll != tc.sqpoll {
				t.Errorf("SQPoll %v, want %v", ue.SQPoll, tc.sqpoll)
			}
		})
	}
}

// The real probe: on a machine where io_uring works, Select picks it; where
// it does not, the error names the cause and wraps uring.ErrUnavailable.
func TestSelectRealProbe(t *testing.T) {
	t.Parallel()
	err := uringengine.Available()
	e, reason, _ := Select(selectPlan(t, "http://127.0.0.1:1/", "auto"))
	if err == nil {
		if e.Name() != "uring" {
			t.Errorf("io_uring is available but auto chose %s (%s)", e.Name(), reason)
		}
		return
	}
	var ue *uringengine.UnavailableError
	if !errors.As(err, &ue) || e.Name() != "net" || !strings.Contains(reason, ue.Cause) {
		t.Errorf("unavailable (%v): auto chose %s (%s)", err, e.Name(), reason)
	}
}
