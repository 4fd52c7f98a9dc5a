package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/redirect"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Every failure an engine meets is named by one kind, wrapped or not.
func TestClassify(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
	}
	for _, tc := range []struct {
		err  error
		mid  bool
		want stats.ErrorKind
	}{
		{nil, false, stats.ErrOther},
		{errors.New("something else"), false, stats.ErrOther},
		{op(syscall.ECONNREFUSED), false, stats.ErrConnectRefused},
		{&transport.ConnectTimeoutError{Err: os.ErrDeadlineExceeded}, false, stats.ErrConnectTimeout},
		{&transport.DNSError{Host: "x", Err: errors.New("no such host")}, false, stats.ErrDNS},
		{&net.DNSError{Err: "no such host", Name: "x"}, false, stats.ErrDNS},
		{&transport.TLSError{Err: errors.New("x509: unknown authority")}, false, stats.ErrTLS},
		{&transport.ProxyError{Proxy: "p:1", Authority: "a:1", Status: "HTTP/1.1 403 Forbidden"}, false, stats.ErrProxyConnect},
		{&transport.VsockRefusedError{Path: "/v", Port: 1}, false, stats.ErrVsockRefused},
		{&transport.VsockGarbledError{Path: "/v", Port: 1, Reply: "NO"}, false, stats.ErrVsockGarbled},
		{&transport.VsockUnavailableError{Err: errors.New("no vsock")}, false, stats.ErrVsockUnavailable},
		{fmt.Errorf("parse: %w", http1.ErrMalformedStatusLine), true, stats.ErrMalformedStatus},
		{http1.ErrMalformedHeader, true, stats.ErrMalformedHeader},
		{http1.ErrHeaderTooLarge, true, stats.ErrHeaderTooLarge},
		{http1.ErrBadContentLength, true, stats.ErrBadContentLength},
		{http1.ErrBadChunk, true, stats.ErrBadChunk},
		{http1.ErrUnexpectedUpgrade, true, stats.ErrUnexpectedUpgrade},
		{http1.ErrClosedBeforeResponse, false, stats.ErrClosedBeforeResponse},
		{http1.ErrUnexpectedEOF, true, stats.ErrClosedMidResponse},
		{op(syscall.ECONNRESET), false, stats.ErrReset},
		{op(syscall.ECONNRESET), true, stats.ErrClosedMidResponse},
		{op(syscall.ECONNABORTED), false, stats.ErrReset},
		{op(syscall.EPIPE), false, stats.ErrBrokenPipe},
		{op(syscall.EMFILE), false, stats.ErrTooManyOpenFiles},
		{op(syscall.ENFILE), false, stats.ErrTooManyOpenFiles},
		{op(syscall.EADDRNOTAVAIL), false, stats.ErrNoLocalPorts},
		{op(syscall.ENOMEM), false, stats.ErrOutOfMemory},
		{op(syscall.ENOBUFS), false, stats.ErrOutOfMemory},
		{op(syscall.ENETUNREACH), false, stats.ErrUnreachable},
		{op(syscall.EHOSTUNREACH), false, stats.ErrUnreachable},
		{os.ErrDeadlineExceeded, false, stats.ErrTimeout},
		{context.DeadlineExceeded, false, stats.ErrTimeout},
		{io.EOF, false, stats.ErrClosedBeforeResponse},
		{io.EOF, true, stats.ErrClosedMidResponse},
		{io.ErrUnexpectedEOF, true, stats.ErrClosedMidResponse},
		{ErrTooManyRedirects, false, stats.ErrTooManyRedirects},
		{redirect.ErrBadLocation, false, stats.ErrRedirect},
		{redirect.ErrNotRequest, false, stats.ErrRedirect},
		{ErrOtherOrigin, false, stats.ErrRedirect},
	} {
		if got := Classify(tc.err, tc.mid); got != tc.want {
			t.Errorf("Classify(%v, mid %v) = %q, want %q", tc.err, tc.mid, got, tc.want)
		}
	}
}
