// Package h2engine is hail's HTTP/2 engine: c connections, each an
// x/net/http2 ClientConn over a connection from the run's transport.Dialer
// (TCP, TLS, unix socket, vsock, proxy tunnel), with p streams in flight on
// each (-p), so c × p requests are outstanding at once.
//
// https:// targets negotiate "h2" by ALPN (a server that picks anything else
// ends the run with one clear error); http:// targets speak h2c with prior
// knowledge. The stream slots record into the job's recorders exactly as the
// net engine's workers do, open and closed models alike: see Mux, the
// multiplexing core, which the HTTP/3 engine shares.
package h2engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http2"

	"hail/internal/engine"
	"hail/internal/stats"
	"hail/internal/transport"
)

// Engine is the HTTP/2 engine.
type Engine struct {
	// Streams is the number of concurrent streams per connection (-p); 0 means 1.
	Streams int
}

// Name implements engine.Engine.
func (Engine) Name() string { return "h2" }

// Run implements engine.Engine.
func (e Engine) Run(j *engine.Job) error {
	t := NewTransport(j.MaxHeaderBytes)
	m := &Mux{Streams: e.Streams, Classify: Classify}
	m.Open = func(ctx context.Context) (Conn, transport.Timing, error) { return Open(ctx, t, j.Dialer) }
	m.OpenOrigin = func(ctx context.Context, u *url.URL) (Conn, error) {
		if j.RedirectDialer == nil {
			return nil, errors.New("redirect to another origin")
		}
		d, err := j.RedirectDialer(u)
		if err != nil {
			return nil, err
		}
		c, _, err := Open(ctx, t, d)
		return c, err
	}
	return m.Run(j)
}

// NewTransport returns the http2.Transport whose client connections the
// engine makes: h2c allowed, no transparent compression (bodies are counted
// as received), requests wait for a free stream rather than exceed the
// server's SETTINGS_MAX_CONCURRENT_STREAMS.
func NewTransport(maxHeaderBytes int) *http2.Transport {
	t := &http2.Transport{AllowHTTP: true, StrictMaxConcurrentStreams: true, DisableCompression: true}
	if maxHeaderBytes > 0 {
		t.MaxHeaderListSize = uint32(maxHeaderBytes)
	}
	return t
}

// ALPNError is a TLS server that did not choose HTTP/2.
type ALPNError struct{ Got string }

func (e *ALPNError) Error() string {
	got := fmt.Sprintf("%q", e.Got)
	if e.Got == "" {
		got = "none of them"
	}
	return "the server does not speak HTTP/2 over TLS: hail offered ALPN \"h2\" and the server chose " + got +
		"; drop --http2 (or enable HTTP/2 on the server)"
}

// Open dials one connection with d and starts an HTTP/2 client connection
// on it. A TLS server that does not negotiate h2 gives a FatalError.
func Open(ctx context.Context, t *http2.Transport, d *transport.Dialer) (Conn, transport.Timing, error) {
	nc, tm, err := d.Dial(ctx)
	if err != nil {
		var te *transport.TLSError
		if errors.As(err, &te) && strings.Contains(err.Error(), "no application protocol") {
			return nil, tm, &FatalError{Err: &ALPNError{}}
		}
		return nil, tm, err
	}
	if tc, ok := nc.(interface{ ConnectionState() tls.ConnectionState }); ok {
		if p := tc.ConnectionState().NegotiatedProtocol; p != http2.NextProtoTLS {
			nc.Close()
			return nil, tm, &FatalError{Err: &ALPNError{Got: p}}
		}
	}
	cn := newBatchConn(nc)
	cc, err := t.NewClientConn(cn)
	if err != nil {
		// A TLS 1.3 server rejects a client certificate after the client's
		// side of the handshake: its alert may be waiting to be read.
		if cause := cn.cause(); cause == nil && d.Options().TLS != nil {
			_ = nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = cn.Read(make([]byte, 64))
		}
		nc.Close()
		if cause := cn.cause(); transport.IsClientCertRejection(cause) {
			return nil, tm, &transport.ClientCertError{Err: cause, Sent: d.ClientCertSent()}
		}
		return nil, tm, err
	}
	return &h2conn{cc: cc, nc: cn, sent: d.ClientCertSent()}, tm, nil
}

// h2conn is an HTTP/2 client connection.
type h2conn struct {
	cc   *http2.ClientConn
	nc   *batchConn
	sent bool // a client certificate was configured
}

// Cause is why the connection died, when that says more than the HTTP/2
// layer's error: the server's rejection of the client certificate.
func (c *h2conn) Cause() error {
	if err := c.nc.cause(); transport.IsClientCertRejection(err) {
		return &transport.ClientCertError{Err: err, Sent: c.sent}
	}
	return nil
}

func (c *h2conn) RoundTrip(r *http.Request) (*http.Response, error) { return c.cc.RoundTrip(r) }
func (c *h2conn) Usable() bool {
	st := c.cc.State()
	return !st.Closed && !st.Closing
}
func (c *h2conn) Bytes() (int64, int64)              { return c.nc.in.Load(), c.nc.out.Load() }
func (c *h2conn) Close() error                       { return c.cc.Close() }
func (c *h2conn) Shutdown(ctx context.Context) error { return c.cc.Shutdown(ctx) }
func (c *h2conn) ClientConn() *http2.ClientConn      { return c.cc }
func (c *h2conn) ConnectionState() (tls.ConnectionState, bool) {
	if tc, ok := c.nc.Conn.(interface{ ConnectionState() tls.ConnectionState }); ok {
		return tc.ConnectionState(), true
	}
	return tls.ConnectionState{}, false
}

// Classify names an HTTP/2 request failure: stream resets and connection
// errors (GOAWAY, protocol errors) by their own kinds, everything else as
// the other engines do.
func Classify(err error, mid bool) stats.ErrorKind {
	var se http2.StreamError
	var ga http2.GoAwayError
	var ce http2.ConnectionError
	var ae *ALPNError
	switch {
	case err == nil:
		return stats.ErrOther
	case transport.IsClientCertRejection(err):
		return stats.ErrTLSClientCert
	case errors.As(err, &ae):
		return stats.ErrTLS
	case errors.As(err, &se):
		return stats.ErrHTTP2StreamReset
	case errors.As(err, &ga), errors.As(err, &ce):
		return stats.ErrHTTP2Conn
	}
	k := engine.Classify(err, mid)
	if k != stats.ErrOther {
		return k
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "client connection lost"), strings.Contains(msg, "client conn is closed"):
		if mid {
			return stats.ErrClosedMidResponse
		}
		return stats.ErrClosedBeforeResponse
	case strings.Contains(msg, "RST_STREAM"), strings.Contains(msg, "stream error"):
		return stats.ErrHTTP2StreamReset
	case strings.HasPrefix(msg, "http2:"):
		return stats.ErrHTTP2Conn
	}
	return k
}
