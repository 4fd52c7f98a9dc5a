// Package h3engine is hail's HTTP/3 engine: c QUIC connections (quic-go),
// each with its own UDP socket and an http3 ClientConn, with p requests in
// flight on each (-p). It runs on the HTTP/2 engine's multiplexing core
// (h2engine.Mux), so models, pacing and recording are the same; connection
// setup time is the QUIC handshake (1 RTT, TLS 1.3 included) and every
// handshake is counted, with its session resumption, in the report's
// hail.tls.
package h3engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/engine/h2engine"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Engine is the HTTP/3 engine.
type Engine struct {
	// Streams is the number of concurrent streams per connection (-p); 0 means 1.
	Streams int
}

// Name implements engine.Engine.
func (Engine) Name() string { return "h3" }

// Run implements engine.Engine.
func (e Engine) Run(j *engine.Job) error {
	quietBufferWarning()
	tr := &http3.Transport{DisableCompression: true, MaxResponseHeaderBytes: j.MaxHeaderBytes}
	// quic-go sends a request's frames from its own goroutine: an abort lets
	// those handed to it in the last 250 ms get their answer (or that long)
	// before it closes the connections.
	m := &h2engine.Mux{Streams: e.Streams, Classify: Classify, Settle: 250 * time.Millisecond}
	streams := max(e.Streams, 1)
	m.Open = func(ctx context.Context) (h2engine.Conn, transport.Timing, error) {
		return Open(ctx, tr, j.Dialer, streams)
	}
	m.OpenOrigin = func(ctx context.Context, u *url.URL) (h2engine.Conn, error) {
		if j.RedirectDialer == nil {
			return nil, engine.ErrOtherOrigin
		}
		if u.Scheme != "https" { // a bad redirect, as on every engine that cannot follow one
			return nil, fmt.Errorf("HTTP/3 redirect to %s: not an https:// origin (%w)", u.Redacted(), engine.ErrOtherOrigin)
		}
		d, err := j.RedirectDialer(u)
		if err != nil {
			return nil, err
		}
		c, _, err := Open(ctx, tr, d, 1)
		return c, err
	}
	return m.Run(j)
}

// quietBufferWarning stops quic-go from logging that it could not raise
// the UDP socket buffers (it says so on every small machine; the buffers
// it gets are enough for a load test's request sizes).
func quietBufferWarning() {
	if os.Getenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING") == "" {
		_ = os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	}
}

// HandshakeError is a QUIC connection that could not be established.
type HandshakeError struct{ Err error }

func (e *HandshakeError) Error() string { return "quic handshake failed: " + e.Err.Error() }
func (e *HandshakeError) Unwrap() error { return e.Err }

// Open makes one QUIC connection with d's address and TLS configuration on
// a UDP socket of its own, and starts an HTTP/3 client connection on it.
// A server that does not offer h3 gives a FatalError.
func Open(ctx context.Context, tr *http3.Transport, d *transport.Dialer, streams int) (h2engine.Conn, transport.Timing, error) {
	var tm transport.Timing
	t0 := time.Now()
	opt := d.Options()
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	ap, dns, err := d.QUICAddr(ctx)
	tm.DNS = dns
	if err != nil {
		return nil, tm, err
	}
	network := "udp4"
	if ap.Addr().Is6() {
		network = "udp6"
	}
	udp, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, tm, err
	}
	conf := &quic.Config{
		HandshakeIdleTimeout: opt.Timeout,
		MaxIdleTimeout:       30 * time.Second,
		KeepAlivePeriod:      10 * time.Second,
	}
	tlsConf := opt.TLS
	if tlsConf == nil {
		tlsConf = &tls.Config{}
	}
	if len(tlsConf.NextProtos) != 1 || tlsConf.NextProtos[0] != http3.NextProtoH3 {
		tlsConf = tlsConf.Clone()
		tlsConf.NextProtos = []string{http3.NextProtoH3}
	}
	qc, err := quic.Dial(ctx, udp, net.UDPAddrFromAddrPort(ap), tlsConf, conf)
	if err != nil {
		udp.Close()
		if ctx.Err() == context.DeadlineExceeded {
			return nil, tm, &transport.ConnectTimeoutError{Err: err}
		}
		var he *quic.HandshakeTimeoutError
		var ie *quic.IdleTimeoutError // no answer at all during the handshake: the same timeout, as quic-go may name it
		if errors.As(err, &he) || errors.As(err, &ie) {
			return nil, tm, &transport.ConnectTimeoutError{Err: err}
		}
		var te *quic.TransportError
		if errors.As(err, &te) && te.ErrorCode.IsCryptoError() && !te.Remote && !noALPN(err) {
			// hail's own verification of the server's certificate failed
			// (an unknown authority, another name, expired): a TLS error
			// by its cause, as over TCP — not the server refusing hail's.
			d.NoteVerify(err)
			return nil, tm, &transport.TLSError{Err: err}
		}
		herr := &HandshakeError{Err: err}
		if noALPN(err) {
			return nil, tm, &h2engine.FatalError{Err: fmt.Errorf("the server does not speak HTTP/3: it refused ALPN \"h3\" (%v)", err)}
		}
		return nil, tm, herr
	}
	tm.Total = time.Since(t0)
	d.NoteTLS(qc.ConnectionState().TLS)
	return &h3conn{qc: qc, cc: tr.NewClientConn(qc), udp: udp}, tm, nil
}

// noALPN reports a handshake the server refused for want of a common
// application protocol (TLS alert 120 as a QUIC crypto error).
func noALPN(err error) bool {
	var te *quic.TransportError
	return errors.As(err, &te) && te.ErrorCode == quic.TransportErrorCode(0x100+120)
}

// h3conn is an HTTP/3 client connection on its own UDP socket.
type h3conn struct {
	qc  *quic.Conn
	cc  *http3.ClientConn
	udp *net.UDPConn
}

func (c *h3conn) RoundTrip(r *http.Request) (*http.Response, error) { return c.cc.RoundTrip(r) }
func (c *h3conn) Usable() bool                                      { return c.qc.Context().Err() == nil }
func (c *h3conn) Bytes() (int64, int64) {
	st := c.qc.ConnectionStats()
	return int64(st.BytesReceived), int64(st.BytesSent)
}
func (c *h3conn) Close() error {
	err := c.qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	c.udp.Close()
	return err
}

// certAlerts are the TLS alerts a server sends about a client certificate.
var certAlerts = map[uint8]bool{42: true, 43: true, 44: true, 45: true, 46: true, 48: true, 116: true}

// Classify names an HTTP/3 request failure.
func Classify(err error, mid bool) stats.ErrorKind {
	var te *quic.TransportError
	var ie *quic.IdleTimeoutError
	var he *quic.HandshakeTimeoutError
	var ae *quic.ApplicationError
	var se *quic.StreamError
	var h3e *http3.Error
	var hs *HandshakeError
	switch {
	case err == nil:
		return stats.ErrOther
	case errors.As(err, new(*transport.ConnectTimeoutError)):
		return stats.ErrConnectTimeout
	case errors.As(err, new(*transport.TLSError)):
		return engine.Classify(err, mid) // hail rejected the server's certificate: by its cause
	case errors.As(err, &te) && te.Remote && te.ErrorCode.IsCryptoError() && certAlerts[uint8(te.ErrorCode-0x100)]:
		return stats.ErrTLSClientCert
	case errors.As(err, &he):
		return stats.ErrConnectTimeout
	case errors.As(err, &hs):
		return stats.ErrQUICHandshake
	case errors.As(err, &ie):
		return stats.ErrTimeout
	case errors.As(err, &h3e), errors.As(err, &se), errors.As(err, &ae), errors.As(err, &te):
		return stats.ErrHTTP3
	}
	return engine.Classify(err, mid)
}
