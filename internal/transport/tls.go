package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// SessionCacheSize is how many TLS sessions a run keeps to resume them
// (TLSOptions.Sessions).
const SessionCacheSize = 64

// TLSOptions describe the client side of TLS for a run.
type TLSOptions struct {
	// ServerName is the SNI and the name the certificate must match: the
	// URL's host, or --host's.
	ServerName string
	// Insecure skips certificate verification (--insecure).
	Insecure bool
	// CACert is a PEM file of CAs to trust besides the system's (--cacert,
	// as oha and curl: the system's roots stay trusted).
	CACert string
	// Cert and Key are the client certificate and its key, PEM files
	// (--cert, --key). With Cert alone the file must hold both.
	Cert, Key string
	// NextProtos are the ALPN protocols offered, in preference order.
	NextProtos []string
	// Sessions, if set, caches sessions so reconnects resume.
	Sessions tls.ClientSessionCache
}

// NewTLSConfig builds the client TLS configuration, reading the files it
// names; errors name the flag at fault.
func NewTLSConfig(o TLSOptions) (*tls.Config, error) {
	conf := &tls.Config{ServerName: o.ServerName, InsecureSkipVerify: o.Insecure, NextProtos: o.NextProtos,
		ClientSessionCache: o.Sessions}
	if o.CACert != "" {
		pem, err := readPEM(o.CACert)
		if err != nil {
			return nil, fmt.Errorf("--cacert %s: %v", o.CACert, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool() // no system roots on this machine
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate found in the file", o.CACert)
		}
		conf.RootCAs = pool
	}
	switch {
	case o.Cert != "":
		key := o.Key
		if key == "" {
			key = o.Cert
		}
		certPEM, err := readPEM(o.Cert)
		if err != nil {
			return nil, fmt.Errorf("--cert %s: %v", o.Cert, err)
		}
		keyPEM, err := readPEM(key)
		if err != nil {
			return nil, fmt.Errorf("--key %s: %v", key, err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "tls: ")
			if o.Key == "" {
				return nil, fmt.Errorf("--cert %s: %s (give the private key with --key)", o.Cert, msg)
			}
			return nil, fmt.Errorf("--cert %s / --key %s: %s", o.Cert, o.Key, msg)
		}
		conf.Certificates = []tls.Certificate{pair}
	case o.Key != "":
		return nil, fmt.Errorf("--key %s needs --cert (the client certificate it belongs to)", o.Key)
	}
	return conf, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ClientCertError is a server that rejected the client's certificate, or
// asked for one that was not given.
type ClientCertError struct {
	Err    error
	Sent   bool // a client certificate was configured
	Remote string
}

func (e *ClientCertError) Error() string {
	if !e.Sent {
		return "tls client certificate rejected: the server requires a client certificate; give --cert and --key (" + e.Err.Error() + ")"
	}
	return "tls client certificate rejected: the server did not accept --cert (" + e.Err.Error() + ")"
}
func (e *ClientCertError) Unwrap() error { return e.Err }

// IsClientCertRejection reports whether err is the server's TLS alert about
// the client's certificate: bad_certificate, certificate_required,
// unknown_ca and the like. In TLS 1.3 it arrives after the client's side of
// the handshake completed, on the first read.
func IsClientCertRejection(err error) bool {
	var ce *ClientCertError
	if errors.As(err, &ce) {
		return true
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" || oe.Err == nil {
		return false
	}
	m := oe.Err.Error()
	return strings.Contains(m, "certificate") || strings.Contains(m, "unknown certificate authority")
}

// tlsCounters count a Dialer's TLS handshakes.
type tlsCounters struct {
	handshakes  atomic.Int64
	resumptions atomic.Int64
	alpn        atomic.Pointer[string]
	mismatch    atomic.Pointer[NameMismatch]
}

// NameMismatch is a server certificate that was not issued for the name
// hail checked: the names it was issued for, for the report's hint.
type NameMismatch struct {
	Host  string   // the name hail checked (the URL's host, or --host)
	Names []string // the certificate's DNS names and IP addresses (its common name when it has none)
}

// NoteVerify notes a failed handshake's verification error: the first
// certificate issued for other names than the one checked is kept
// (Mismatch). Engines whose handshakes the Dialer does not make (HTTP/3)
// call it too.
func (d *Dialer) NoteVerify(err error) {
	var he x509.HostnameError
	if d.tls.mismatch.Load() != nil || !errors.As(err, &he) || he.Certificate == nil {
		return
	}
	m := &NameMismatch{Host: he.Host, Names: append([]string(nil), he.Certificate.DNSNames...)}
	for _, ip := range he.Certificate.IPAddresses {
		m.Names = append(m.Names, ip.String())
	}
	if len(m.Names) == 0 && he.Certificate.Subject.CommonName != "" {
		m.Names = []string{he.Certificate.Subject.CommonName}
	}
	d.tls.mismatch.CompareAndSwap(nil, m)
}

// Mismatch is the first certificate met that was not issued for the name
// hail checked; nil when none was.
func (d *Dialer) Mismatch() *NameMismatch { return d.tls.mismatch.Load() }

// TLSStats are a Dialer's TLS handshakes so far.
type TLSStats struct {
	Handshakes  int64  // completed handshakes
	Resumptions int64  // of which resumed an earlier session
	ALPN        string // protocol negotiated by the first handshake ("" if none)
}

// NoteTLS counts a completed handshake. Dial calls it for TLS over streams;
// engines that handshake themselves (QUIC) call it with their state.
func (d *Dialer) NoteTLS(cs tls.ConnectionState) {
	d.tls.handshakes.Add(1)
	if cs.DidResume {
		d.tls.resumptions.Add(1)
	}
	if d.tls.alpn.Load() == nil {
		p := cs.NegotiatedProtocol
		d.tls.alpn.CompareAndSwap(nil, &p)
	}
}

// TLSStats returns the handshakes counted so far.
func (d *Dialer) TLSStats() TLSStats {
	s := TLSStats{Handshakes: d.tls.handshakes.Load(), Resumptions: d.tls.resumptions.Load()}
	if p := d.tls.alpn.Load(); p != nil {
		s.ALPN = *p
	}
	return s
}

// handshake runs the client TLS handshake on c and counts it.
//
// A TLS 1.3 server that asks for a client certificate gives its verdict only
// after the client's side of the handshake has completed: a rejection is an
// alert that arrives with, or instead of, the first response, and a request
// written meanwhile can make the server reset the connection and lose the
// alert. So when the server asked, the handshake waits briefly for the
// verdict (up to 4× the handshake's own time, 5 ms to 200 ms), keeping any
// application data that arrives, and reports a rejection as one.
func (d *Dialer) handshake(ctx context.Context, c net.Conn) (net.Conn, error) {
	conf := d.opt.TLS
	var asked atomic.Bool
	if conf.GetClientCertificate == nil {
		conf = conf.Clone()
		certs := conf.Certificates
		conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			asked.Store(true)
			if len(certs) > 0 {
				return &certs[0], nil
			}
			return &tls.Certificate{}, nil
		}
	}
	t0 := time.Now()
	tc := tls.Client(c, conf)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		if ctx.Err() == context.DeadlineExceeded {
			return nil, &ConnectTimeoutError{Err: err}
		}
		if IsClientCertRejection(err) {
			return nil, &ClientCertError{Err: err, Sent: len(d.opt.TLS.Certificates) > 0}
		}
		d.NoteVerify(err)
		return nil, &TLSError{Err: err}
	}
	cs := tc.ConnectionState()
	if asked.Load() && cs.Version == tls.VersionTLS13 {
		wait := min(max(4*time.Since(t0), 5*time.Millisecond), 200*time.Millisecond)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			wait = max(time.Until(dl), 0)
		}
		buf := make([]byte, 16<<10)
		_ = tc.SetReadDeadline(time.Now().Add(wait))
		n, err := tc.Read(buf)
		_ = tc.SetReadDeadline(noDeadline)
		var ne net.Error
		switch {
		case n > 0:
			d.NoteTLS(cs)
			return &verdictConn{Conn: tc, tc: tc, buf: buf[:n]}, nil
		case err == nil || errors.As(err, &ne) && ne.Timeout():
			// No word from the server: the certificate stands.
		case IsClientCertRejection(err):
			tc.Close()
			return nil, &ClientCertError{Err: err, Sent: len(d.opt.TLS.Certificates) > 0}
		default:
			tc.Close()
			return nil, &TLSError{Err: fmt.Errorf("connection closed after the handshake (client certificate requested): %w", err)}
		}
	}
	d.NoteTLS(cs)
	return tc, nil
}

// verdictConn is a TLS connection some of whose application data was read
// while waiting for the server's verdict on the client certificate.
type verdictConn struct {
	net.Conn
	tc  *tls.Conn
	buf []byte
}

func (c *verdictConn) Read(p []byte) (int, error) {
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	return c.tc.Read(p)
}

// ConnectionState is the TLS connection's state.
func (c *verdictConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

// ClientCertSent reports whether the dialer's TLS configuration carries a
// client certificate.
func (d *Dialer) ClientCertSent() bool { return d.opt.TLS != nil && len(d.opt.TLS.Certificates) > 0 }

// Transport names how the dialer's connections travel, as reports show it:
// "vsock", "vsock-uds", "unix", "proxy", "tls" or "tcp".
func (d *Dialer) Transport() string {
	switch {
	case d.opt.Vsock:
		return "vsock"
	case d.opt.VsockUDS != "":
		return "vsock-uds"
	case d.opt.UnixSocket != "":
		return "unix"
	case d.opt.Proxy != nil:
		return "proxy"
	case d.opt.TLS != nil:
		return "tls"
	}
	return "tcp"
}

// Options returns the options the dialer was made with.
func (d *Dialer) Options() Options { return d.opt }

// maxPEM bounds a certificate or key file: a CA bundle is a few hundred
// KiB; a larger file (or /dev/zero) is not one, and is not read whole.
const maxPEM = 16 << 20

// readPEM reads a certificate or key file of at most maxPEM bytes.
func readPEM(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err != nil {
		return nil, unwrapPath(err)
	}
	if len(b) > maxPEM {
		return nil, fmt.Errorf("more than %d MiB: not a PEM certificate or key file", maxPEM>>20)
	}
	return b, nil
}
