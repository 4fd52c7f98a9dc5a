package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Proxies (-x/--proxy URL): every connection goes to the proxy. For http://
// targets spoken in HTTP/1.x the requests themselves go to the proxy in
// absolute form (the plan writes them so); for https:// targets, and for
// HTTP/2 in clear text, the dialer opens a tunnel with CONNECT and the rest
// of the connection (TLS, HTTP) is the target's. An https:// proxy is
// reached over TLS first.

// ParseProxy parses a --proxy value: http://[user:pass@]host[:port] or
// https://...; a value without a scheme is taken as http://. The port
// defaults to the scheme's (80, 443).
func ParseProxy(s string) (*url.URL, error) {
	raw := s
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--proxy %q is not a URL: write it like http://127.0.0.1:3128 or http://user:pass@proxy:8080", s)
	}
	switch u.Scheme {
	case "http", "https":
	case "socks4", "socks4a", "socks5", "socks5h":
		return nil, fmt.Errorf("--proxy %q: SOCKS proxies are not supported; give an http:// or https:// proxy", s)
	default:
		return nil, fmt.Errorf("--proxy %q: the scheme must be http or https", s)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("--proxy %q has no host: write it like http://127.0.0.1:3128", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--proxy %q: port %q is not a number from 1 to 65535", s, p)
		}
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return nil, fmt.Errorf("--proxy %q: a proxy URL has no path or query", s)
	}
	return u, nil
}

// ProxyAuthorization returns the Proxy-Authorization value for the proxy
// URL's user information, or "" if it has none.
func ProxyAuthorization(u *url.URL) string {
	if u == nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
}

// proxyHostPort is where connections to the proxy go.
func proxyHostPort(u *url.URL) (string, int) {
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	return u.Hostname(), port
}

// ProxyError is a proxy that would not open the tunnel.
type ProxyError struct {
	Proxy     string // host:port of the proxy
	Authority string // what CONNECT asked for
	Status    string // the proxy's status line, "" if it sent none
	Err       error  // what went wrong otherwise
}

func (e *ProxyError) Error() string {
	if e.Status != "" {
		msg := fmt.Sprintf("proxy connect failed: %s answered CONNECT %s with %q", e.Proxy, e.Authority, e.Status)
		if strings.HasPrefix(e.Status, "407") {
			msg += " (give the credentials in the proxy URL: http://user:pass@host:port)"
		}
		return msg
	}
	return fmt.Sprintf("proxy connect failed: CONNECT %s via %s: %v", e.Authority, e.Proxy, e.Err)
}

func (e *ProxyError) Unwrap() error { return e.Err }

// viaProxy completes a connection to the proxy: TLS to an https:// proxy,
// then the CONNECT tunnel when the options ask for one.
func (d *Dialer) viaProxy(ctx context.Context, c net.Conn) (net.Conn, error) {
	pu := d.opt.Proxy
	ph, pp := proxyHostPort(pu)
	proxyAddr := net.JoinHostPort(ph, strconv.Itoa(pp))
	if pu.Scheme == "https" {
		conf := d.opt.ProxyTLS
		if conf == nil {
			conf = &tls.Config{}
		}
		if conf.ServerName == "" {
			conf = conf.Clone()
			conf.ServerName = ph
		}
		tc := tls.Client(c, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			if ctx.Err() == context.DeadlineExceeded {
				return nil, &ConnectTimeoutError{Err: err}
			}
			return nil, &TLSError{Err: fmt.Errorf("with the proxy %s: %w", proxyAddr, err)}
		}
		c = tc
	}
	if !d.opt.ProxyTunnel {
		return c, nil
	}
	host, port := d.opt.Host, d.opt.Port
	if d.opt.ConnectHost != "" {
		host, port = d.opt.ConnectHost, d.opt.ConnectPort
	}
	authority := net.JoinHostPort(host, strconv.Itoa(port))
	c2, err := proxyConnect(ctx, c, proxyAddr, authority, d.opt.ProxyHeader)
	if err != nil {
		c.Close()
		return nil, err
	}
	return c2, nil
}

// proxyConnect asks the proxy on c for a tunnel to authority and reads its
// answer. Bytes the proxy sent past its response head stay readable from the
// returned connection.
func proxyConnect(ctx context.Context, c net.Conn, proxyAddr, authority string, header [][2]string) (net.Conn, error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
		defer c.SetDeadline(noDeadline)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(pastDeadline) })
	defer stop()
	var b strings.Builder
	b.WriteString("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n")
	for _, h := range header {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	if _, err := c.Write([]byte(b.String())); err != nil {
		return nil, ctxErr(ctx, &ProxyError{Proxy: proxyAddr, Authority: authority, Err: err})
	}
	// The head is read through a limit: a proxy that sends header lines without end is refused
	// at maxProxyHead, not buffered until the connect timeout.
	lim := &io.LimitedReader{R: c, N: maxProxyHead}
	br := bufio.NewReaderSize(lim, 4096)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		if lim.N == 0 {
			err = fmt.Errorf("its response head is longer than %d KiB", maxProxyHead>>10)
		}
		var ne net.Error
		if ctx.Err() == context.DeadlineExceeded || errors.As(err, &ne) && ne.Timeout() {
			return nil, &ConnectTimeoutError{Err: &ProxyError{Proxy: proxyAddr, Authority: authority, Err: err}}
		}
		return nil, &ProxyError{Proxy: proxyAddr, Authority: authority, Err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &ProxyError{Proxy: proxyAddr, Authority: authority, Status: resp.Status}
	}
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// maxProxyHead bounds a proxy's response head to CONNECT (the same cap as a response head).
const maxProxyHead = 64 << 10

// bufferedConn is a connection some of whose incoming bytes were already
// read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) {
	if c.r.Buffered() > 0 {
		return c.r.Read(p)
	}
	return c.Conn.Read(p)
}
