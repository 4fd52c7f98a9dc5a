package transport

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
)

// AF_VSOCK is tested without connecting to any context ID: the dial
// function is replaced, and the tests check what Dial asks for and how it
// names each failure.
func TestVsockDialNamesFailures(t *testing.T) {
	saved := vsockDial
	t.Cleanup(func() { vsockDial = saved })
	var gotCID, gotPort uint32
	for _, tc := range []struct {
		err  error
		want string
		is   func(error) bool
	}{
		{syscall.EAFNOSUPPORT, "vhost_vsock", func(err error) bool { return errors.As(err, new(*VsockUnavailableError)) }},
		{syscall.ENODEV, "not available", func(err error) bool { return errors.As(err, new(*VsockUnavailableError)) }},
		{syscall.ECONNRESET, "nothing listening on the guest port", func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
		{syscall.ETIMEDOUT, "vsock 3:8080", func(err error) bool { return errors.Is(err, syscall.ETIMEDOUT) }},
	} {
		vsockDial = func(_ context.Context, cid, port uint32) (net.Conn, error) {
			gotCID, gotPort = cid, port
			return nil, &net.OpError{Op: "dial", Net: "vsock", Err: tc.err}
		}
		d, err := NewDialer(context.Background(), Options{Host: "guest", Port: 80, Vsock: true, VsockCID: 3, VsockPort: 8080, PreLookup: true})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = d.Dial(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !tc.is(err) {
			t.Errorf("%v: got %v, want an error mentioning %q", tc.err, err, tc.want)
		}
		if gotCID != 3 || gotPort != 8080 {
			t.Errorf("dialed %d:%d, want 3:8080", gotCID, gotPort)
		}
		if d.Transport() != "vsock" {
			t.Errorf("transport %q", d.Transport())
		}
	}
}

// A stub AF_VSOCK stream carries the connection like any other: Dial
// hands back what the vsock dialer returned (no name lookup happens).
func TestVsockDialStubConn(t *testing.T) {
	saved := vsockDial
	t.Cleanup(func() { vsockDial = saved })
	a, b := net.Pipe()
	defer b.Close()
	vsockDial = func(context.Context, uint32, uint32) (net.Conn, error) { return a, nil }
	d, err := NewDialer(context.Background(), Options{Host: "no-such-host.invalid", Port: 80, Vsock: true, VsockCID: 42, VsockPort: 1, PreLookup: true})
	if err != nil {
		t.Fatalf("a vsock dialer looked the URL's host up: %v", err)
	}
	c, _, err := d.Dial(context.Background())
	if err != nil || c != a {
		t.Fatalf("Dial = %v, %v", c, err)
	}
	c.Close()
}

func TestParseVsock(t *testing.T) {
	for _, tc := range []struct {
		in        string
		cid, port uint32
		bad       string
	}{
		{"3:8080", 3, 8080, ""},
		{"2:80", 2, 80, ""},
		{"4294967294:1", 4294967294, 1, ""},
		{"3", 0, 0, "CID:PORT"},
		{":80", 0, 0, "CID:PORT"},
		{"3:", 0, 0, "CID:PORT"},
		{"x:80", 0, 0, "CID"},
		{"3:http", 0, 0, "port"},
		{"-1:80", 0, 0, "CID"},
		{"4294967295:80", 0, 0, "any"},
		{"3:4294967296", 0, 0, "port"},
	} {
		cid, port, err := ParseVsockAddr(tc.in)
		if tc.bad == "" && (err != nil || cid != tc.cid || port != tc.port) {
			t.Errorf("%q: %d:%d %v", tc.in, cid, port, err)
		}
		if tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.HasPrefix(err.Error(), "--vsock-addr")) {
			t.Errorf("%q: error %v, want one about %q", tc.in, err, tc.bad)
		}
	}
	for _, tc := range []struct {
		in, path string
		port     uint32
		bad      bool
	}{
		{"/run/fc.vsock:8080", "/run/fc.vsock", 8080, false},
		{"/tmp/a:b/v.sock:52", "/tmp/a:b/v.sock", 52, false},
		{"v.sock:1", "v.sock", 1, false},
		{"/run/fc.vsock", "", 0, true},
		{"/run/fc.vsock:", "", 0, true},
		{":8080", "", 0, true},
		{"/run/fc.vsock:port", "", 0, true},
		{"/run/fc.vsock:4294967295", "", 0, true},
	} {
		path, port, err := ParseVsockUDS(tc.in)
		if tc.bad != (err != nil) || path != tc.path || port != tc.port {
			t.Errorf("%q: %q %d %v", tc.in, path, port, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "--vsock-uds") {
			t.Errorf("%q: error %q does not name the flag", tc.in, err)
		}
	}
}
