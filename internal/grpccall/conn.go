package grpccall

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/hail-loadgen/hail/internal/transport"
)

// Dial returns a grpc-go client connection (for reflection) whose
// connections come from d, hail's own transport (TCP, TLS, unix sockets,
// vsock, proxies, --connect-to alike), sending authority as :authority.
func Dial(d *transport.Dialer, authority string) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///"+authority,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			c, _, err := d.Dial(ctx)
			return c, err
		}),
		grpc.WithTransportCredentials(dialed{tls: d.Options().TLS != nil}),
		grpc.WithAuthority(authority))
}

// dialed are the credentials of connections whose TLS (if any) hail's
// dialer already did: the handshake is a no-op, and a TLS connection is
// reported as one (so calls carry :scheme https).
type dialed struct{ tls bool }

func (d dialed) ClientHandshake(_ context.Context, _ string, c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if tc, ok := c.(*tls.Conn); ok {
		return c, credentials.TLSInfo{State: tc.ConnectionState(),
			CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
	}
	return c, insecureInfo{}, nil
}

func (d dialed) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("client credentials")
}

func (d dialed) Info() credentials.ProtocolInfo {
	if d.tls {
		return credentials.ProtocolInfo{SecurityProtocol: "tls"}
	}
	return credentials.ProtocolInfo{SecurityProtocol: "insecure"}
}

func (d dialed) Clone() credentials.TransportCredentials { return d }
func (d dialed) OverrideServerName(string) error         { return nil }

type insecureInfo struct{}

func (insecureInfo) AuthType() string { return "insecure" }

// Probe opens one connection as the run will (TLS when opt has it, h2c
// otherwise), checks that the server answers HTTP/2, and closes it. A
// server on the other side of a TLS mismatch, or one that is not HTTP/2,
// is one line saying which flag to change. target names the server.
func Probe(ctx context.Context, opt transport.Options, target string) error {
	d, err := transport.NewDialer(ctx, opt)
	if err != nil {
		return fmt.Errorf("%w: check the host name", err)
	}
	start := time.Now()
	c, _, err := d.Dial(ctx)
	if err != nil {
		var te *transport.TLSError
		switch {
		case errors.As(err, &te) && strings.Contains(err.Error(), "does not look like a TLS handshake"):
			return fmt.Errorf("the server at %s answered in plaintext, not TLS: add --insecure (plaintext h2c, as ghz)", target)
		case errors.As(err, &te) && strings.Contains(err.Error(), "no application protocol"):
			return fmt.Errorf("the server at %s does not offer HTTP/2 over TLS (ALPN h2): it is not a gRPC server", target)
		case errors.As(err, &te):
			return fmt.Errorf("TLS with %s failed: %v: trust its CA with --cacert FILE, or skip verification with --skipTLS", target, te.Err)
		}
		return fmt.Errorf("cannot connect to %s: %w", target, err)
	}
	defer c.Close()
	if tc, ok := c.(*tls.Conn); ok {
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			return fmt.Errorf("the server at %s chose ALPN %q, not h2: it is not a gRPC server", target, p)
		}
		return nil
	}
	first, err := prefaceAnswer(ctx, c, start, opt.Timeout)
	if ctx.Err() != nil {
		return fmt.Errorf("probing %s: %w", target, ctx.Err())
	}
	var ne net.Error
	switch {
	case len(first) == 0 && errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("the server at %s accepted the connection but sent no HTTP/2 settings: timed out after %v waiting for them (--connect-timeout): is it a gRPC server, and is it overloaded?",
			target, opt.Timeout)
	case err == nil && len(first) >= 9 && http2.FrameType(first[3]) == http2.FrameSettings:
		return nil
	case len(first) > 0 && (first[0] == 0x15 || first[0] == 0x16):
		return fmt.Errorf("the server at %s speaks TLS: drop --insecure (and trust its CA with --cacert FILE, or use --skipTLS)", target)
	case bytes.HasPrefix(first, []byte("HTTP/")):
		line, _, _ := bytes.Cut(first, []byte("\r\n"))
		return fmt.Errorf("the server at %s answered in HTTP/1 (%q): it is not a gRPC server", target, line)
	case len(first) > 0:
		return fmt.Errorf("the server at %s did not answer the HTTP/2 preface with SETTINGS (it began %q): it is not a gRPC server", target, first[:min(len(first), 24)])
	}
	if speaksTLS(ctx, opt) {
		return fmt.Errorf("the server at %s speaks TLS: drop --insecure (and trust its CA with --cacert FILE, or use --skipTLS)", target)
	}
	return fmt.Errorf("the server at %s closed the connection at the HTTP/2 preface (%v): it is not a gRPC server", target, err)
}

// prefaceAnswer sends HTTP/2's client preface and an empty SETTINGS frame
// and returns the first bytes of the answer (up to 64). The connect
// timeout (timeout > 0), counted from start (the dial's), bounds the wait
// as it bounds the rest of the connection's setup; ctx's deadline too.
func prefaceAnswer(ctx context.Context, c net.Conn, start time.Time, timeout time.Duration) ([]byte, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = start.Add(timeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) }) // ctx ends the wait too
	defer stop()
	msg := append([]byte(http2.ClientPreface), 0, 0, 0, byte(http2.FrameSettings), 0, 0, 0, 0, 0)
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(c, buf, 9)
	return buf[:n], err
}

// speaksTLS reports whether the server completes a TLS handshake (any
// certificate).
func speaksTLS(ctx context.Context, opt transport.Options) bool {
	opt.TLS = &tls.Config{InsecureSkipVerify: true, ServerName: opt.Host, NextProtos: []string{"h2"}}
	d, err := transport.NewDialer(ctx, opt)
	if err != nil {
		return false
	}
	c, _, err := d.Dial(ctx)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
