package engine

import (
	"crypto/tls"
	"crypto/x509"
	"errors"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
)

// tlsKind names why a TLS handshake failed, from the verification error
// it carries: an expired certificate, one for another name, one from an
// unknown authority, or a server that does not speak TLS at all; any other
// failure is the generic kind.
func tlsKind(e *transport.TLSError) stats.ErrorKind {
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	switch {
	case errors.As(e, &invalid) && invalid.Reason == x509.Expired:
		return stats.ErrTLSExpired
	case errors.As(e, new(x509.HostnameError)):
		return stats.ErrTLSHostname
	case errors.As(e, new(x509.UnknownAuthorityError)):
		return stats.ErrTLSUnknownCA
	case errors.As(e, &record):
		return stats.ErrNotTLS
	}
	return stats.ErrTLS
}
