// Package h2engine is hail's HTTP/2 engine: c connections, each hail's own
// HTTP/2 client (client: pre-encoded HEADERS blocks, batched writes, one
// reader on x/net's Framer and HPACK decoder) over a connection from the
// run's transport.Dialer (TCP, TLS, unix socket, vsock, proxy tunnel), with
// p streams in flight on each (-p), so c × p requests are outstanding at
// once.
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
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http2"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/transport"
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
	// Frames leave through the connection's writer goroutine: an abort lets
	// the requests handed to it in the last 250 ms get their answer (or
	// that long) before it closes the connections.
	m := &Mux{Streams: e.Streams, Classify: Classify, Settle: 250 * time.Millisecond}
	m.Open = func(ctx context.Context) (Conn, transport.Timing, error) {
		return Open(ctx, j.Dialer, j.MaxHeaderBytes, j.Since)
	}
	m.OpenOrigin = func(ctx context.Context, u *url.URL) (Conn, error) {
		if j.RedirectDialer == nil {
			return nil, engine.ErrOtherOrigin
		}
		d, err := j.RedirectDialer(u)
		if err != nil {
			return nil, err
		}
		c, _, err := Open(ctx, d, j.MaxHeaderBytes, j.Since)
		return c, err
	}
	return m.Run(j)
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

// Open dials one connection with d and starts HTTP/2 on it: h2 when the
// dialer speaks TLS (a server that does not negotiate h2 gives a
// FatalError), h2c with prior knowledge otherwise. since timestamps
// response heads (the job's clock).
func Open(ctx context.Context, d *transport.Dialer, maxHeaderBytes int, since func() time.Duration) (Conn, transport.Timing, error) {
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
	limit := d.Options().Timeout // --connect-timeout bounds the whole setup: the server's SETTINGS too
	within := limit
	if limit > 0 {
		within = max(limit-tm.Total, time.Millisecond)
	}
	c, err := newClient(newBatchConn(nc), maxHeaderBytes, since, within, limit)
	if err != nil {
		nc.Close()
		return nil, tm, err
	}
	c.sent = d.ClientCertSent()
	return c, tm, nil
}

// certCause returns the server's rejection of the client certificate when
// that is what err (a connection's first read error) is, else nil.
func certCause(err error, sent bool) error {
	if transport.IsClientCertRejection(err) {
		return &transport.ClientCertError{Err: err, Sent: sent}
	}
	return nil
}

// Classify names an HTTP/2 request failure: stream resets and connection
// errors (GOAWAY, protocol errors) by their own kinds, everything else as
// the other engines do.
func Classify(err error, mid bool) stats.ErrorKind {
	var se http2.StreamError
	var ga *GoAwayError
	var ce http2.ConnectionError
	var ae *ALPNError
	var nh *NotH2CError
	var st *SettingsTimeoutError
	var fl *FloodError
	switch {
	case err == nil:
		return stats.ErrOther
	case errors.As(err, &st):
		return stats.ErrConnectTimeout
	case transport.IsClientCertRejection(err):
		return stats.ErrTLSClientCert
	case errors.As(err, &ae):
		return stats.ErrTLS
	case errors.As(err, &se):
		return stats.ErrHTTP2StreamReset
	case errors.As(err, &ga):
		return stats.ErrHTTP2GoAway
	case errors.As(err, &ce), errors.As(err, &nh), errors.As(err, &fl):
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
