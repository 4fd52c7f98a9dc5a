package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/redirect"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Classify names the failure err as one of the fixed error kinds. midResponse
// tells whether part of a response had arrived when the connection failed.
func Classify(err error, midResponse bool) stats.ErrorKind {
	var dnsErr *transport.DNSError
	var tlsErr *transport.TLSError
	var ctoErr *transport.ConnectTimeoutError
	var netDNS *net.DNSError
	switch {
	case err == nil:
		return stats.ErrOther
	case errors.Is(err, ErrStreamIdle):
		return stats.ErrStreamIdle
	case errors.Is(err, ErrTooManyRedirects):
		return stats.ErrTooManyRedirects
	case errors.Is(err, redirect.ErrBadLocation), errors.Is(err, redirect.ErrNotRequest), errors.Is(err, ErrOtherOrigin):
		return stats.ErrRedirect
	case errors.As(err, &ctoErr):
		return stats.ErrConnectTimeout
	case errors.As(err, &dnsErr), errors.As(err, &netDNS):
		return stats.ErrDNS
	case transport.IsClientCertRejection(err):
		return stats.ErrTLSClientCert
	case errors.As(err, new(*transport.VsockRefusedError)):
		return stats.ErrVsockRefused
	case errors.As(err, new(*transport.VsockGarbledError)):
		return stats.ErrVsockGarbled
	case errors.As(err, new(*transport.VsockUnavailableError)):
		return stats.ErrVsockUnavailable
	case errors.As(err, new(*transport.ProxyError)):
		return stats.ErrProxyConnect
	case errors.As(err, &tlsErr):
		return tlsKind(tlsErr)
	case errors.Is(err, http1.ErrMalformedStatusLine):
		return stats.ErrMalformedStatus
	case errors.Is(err, http1.ErrMalformedHeader):
		return stats.ErrMalformedHeader
	case errors.Is(err, http1.ErrHeaderTooLarge):
		return stats.ErrHeaderTooLarge
	case errors.Is(err, http1.ErrBadContentLength):
		return stats.ErrBadContentLength
	case errors.Is(err, http1.ErrBadChunk):
		return stats.ErrBadChunk
	case errors.Is(err, http1.ErrUnexpectedUpgrade):
		return stats.ErrUnexpectedUpgrade
	case errors.Is(err, http1.ErrClosedBeforeResponse):
		return stats.ErrClosedBeforeResponse
	case errors.Is(err, http1.ErrUnexpectedEOF):
		return stats.ErrClosedMidResponse
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT): // ENOENT: a unix socket gone mid-run
		return stats.ErrConnectRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED):
		if midResponse {
			return stats.ErrClosedMidResponse
		}
		return stats.ErrReset
	case errors.Is(err, syscall.EPIPE):
		return stats.ErrBrokenPipe
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return stats.ErrTooManyOpenFiles
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return stats.ErrNoLocalPorts
	case errors.Is(err, syscall.ENOMEM), errors.Is(err, syscall.ENOBUFS):
		return stats.ErrOutOfMemory
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return stats.ErrUnreachable
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return stats.ErrTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if midResponse {
			return stats.ErrClosedMidResponse
		}
		return stats.ErrClosedBeforeResponse
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return stats.ErrTimeout
	}
	return stats.ErrOther
}
