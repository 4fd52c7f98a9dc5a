// Package transport opens the connections engines send requests over: TCP
// (with --connect-to overrides, IPv4/IPv6 preference and one DNS lookup up
// front), TLS over TCP, and unix sockets. It measures each setup's DNS and
// total connect time.
package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Options describe where and how to connect.
type Options struct {
	// Host and Port of the target as written in the URL.
	Host string
	Port int
	// ConnectTo overrides where Host:Port connects (--connect-to), "" if none.
	ConnectHost string
	ConnectPort int
	// UnixSocket, if set, is the path every connection goes to instead.
	UnixSocket string
	// IPv4 and IPv6 restrict name resolution to one family.
	IPv4, IPv6 bool
	// PreLookup resolves the name once before the run (oha's default); when
	// false every connection resolves it again.
	PreLookup bool
	// Timeout bounds DNS + dial + TLS handshake; 0 means none.
	Timeout time.Duration
	// TLS is the client config for https targets; nil for plain text.
	TLS *tls.Config

	// Vsock connects over AF_VSOCK to VsockCID:VsockPort (--vsock-addr).
	Vsock     bool
	VsockCID  uint32
	VsockPort uint32
	// VsockUDS, if set, is a VMM's hybrid-vsock unix socket (Firecracker,
	// Cloud Hypervisor) and VsockUDSPort the guest port (--vsock-uds).
	VsockUDS     string
	VsockUDSPort uint32
	// Proxy, if set, is the HTTP(S) proxy every connection goes to (-x);
	// ProxyTunnel opens a CONNECT tunnel to the target through it, with
	// ProxyHeader (authorization included); ProxyTLS is for https proxies.
	Proxy       *url.URL
	ProxyTunnel bool
	ProxyHeader [][2]string
	ProxyTLS    *tls.Config

	// RxTimes makes TCP connections take the kernel's receive time of the
	// bytes each read returns (RxTime), for streams' read lag.
	RxTimes bool
}

// Timing is how long one connection setup took.
type Timing struct {
	DNS   time.Duration // name lookup (0 for IP literals and pre-looked-up names)
	Total time.Duration // lookup + dial + TLS handshake
}

// Dialer opens connections as its Options say. Safe for concurrent use.
type Dialer struct {
	opt   Options
	ips   []netip.Addr // pre-looked-up addresses
	next  atomic.Uint32
	dnsNS int64 // duration of the pre-lookup
	tls   tlsCounters
}

// NewDialer checks opt and, with PreLookup, resolves the name now. A unix
// socket path (UnixSocket, VsockUDS) must exist and be a socket: a
// *SocketPathError names the flag and the path.
func NewDialer(ctx context.Context, opt Options) (*Dialer, error) {
	d := &Dialer{opt: opt}
	if err := checkSocketPath("--unix-socket", opt.UnixSocket); err != nil {
		return nil, err
	}
	if err := checkSocketPath("--vsock-uds", opt.VsockUDS); err != nil {
		return nil, err
	}
	if opt.UnixSocket != "" || opt.Vsock || opt.VsockUDS != "" || !opt.PreLookup {
		return d, nil
	}
	t0 := time.Now()
	ips, err := d.resolve(ctx)
	if err != nil {
		return nil, err
	}
	d.dnsNS = int64(time.Since(t0))
	d.ips = ips
	return d, nil
}

// Clone returns a Dialer to the same place, with d's TLS configuration and
// looked-up addresses, but counters of its own and, when d resumes TLS
// sessions, a session cache of its own: runs that share one set-up (a
// scenario's setup, load and teardown) count and resume their handshakes
// apart, as runs with dialers of their own do.
func (d *Dialer) Clone() *Dialer {
	c := &Dialer{opt: d.opt, ips: d.ips, dnsNS: d.dnsNS}
	if t := d.opt.TLS; t != nil && t.ClientSessionCache != nil {
		c.opt.TLS = t.Clone()
		c.opt.TLS.ClientSessionCache = tls.NewLRUClientSessionCache(SessionCacheSize)
	}
	return c
}

func (d *Dialer) host() (string, int) {
	if d.opt.Proxy != nil {
		return proxyHostPort(d.opt.Proxy)
	}
	if d.opt.ConnectHost != "" {
		return d.opt.ConnectHost, d.opt.ConnectPort
	}
	return d.opt.Host, d.opt.Port
}

func (d *Dialer) resolve(ctx context.Context) ([]netip.Addr, error) {
	host, _ := d.host()
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	network := "ip"
	if d.opt.IPv4 {
		network = "ip4"
	} else if d.opt.IPv6 {
		network = "ip6"
	}
	if d.opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.opt.Timeout)
		defer cancel()
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, network, host)
	if err != nil {
		return nil, &DNSError{Host: host, Err: err}
	}
	if len(ips) == 0 {
		return nil, &DNSError{Host: host, Err: errors.New("no addresses")}
	}
	for i := range ips {
		ips[i] = ips[i].Unmap()
	}
	return ips, nil
}

// DNSError is a failed name lookup.
type DNSError struct {
	Host string
	Err  error
}

func (e *DNSError) Error() string { return "dns lookup of " + e.Host + ": " + e.Err.Error() }
func (e *DNSError) Unwrap() error { return e.Err }

// TLSError is a failed TLS handshake.
type TLSError struct{ Err error }

func (e *TLSError) Error() string { return "tls handshake: " + e.Err.Error() }
func (e *TLSError) Unwrap() error { return e.Err }

// Addresses are the pre-looked-up addresses (empty without PreLookup).
func (d *Dialer) Addresses() []netip.Addr { return d.ips }

// Target is where connections go, for a report to name: the TCP address
// (the first of those looked up before the run, or the host as written
// with its port), the unix socket path, or the proxy's or VMM's address.
func (d *Dialer) Target() string {
	switch {
	case d.opt.UnixSocket != "":
		return d.opt.UnixSocket
	case d.opt.VsockUDS != "":
		return fmt.Sprintf("%s (vsock port %d)", d.opt.VsockUDS, d.opt.VsockUDSPort)
	case d.opt.Vsock:
		return fmt.Sprintf("vsock %d:%d", d.opt.VsockCID, d.opt.VsockPort)
	}
	host, port := d.host()
	if len(d.ips) > 0 {
		return netip.AddrPortFrom(d.ips[0], uint16(port)).String()
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// Loopback is the TCP address on this machine connections go to, when it
// is one known before the run (an IP, or a name looked up up front) and a
// loopback address, not reached through a proxy.
func (d *Dialer) Loopback() (netip.AddrPort, bool) {
	if d.opt.Proxy != nil || d.opt.UnixSocket != "" || d.opt.Vsock || d.opt.VsockUDS != "" || len(d.ips) == 0 || !d.ips[0].IsLoopback() {
		return netip.AddrPort{}, false
	}
	_, port := d.host()
	return netip.AddrPortFrom(d.ips[0], uint16(port)), true
}

// Endpoint is where a Dialer's next connection goes, for engines that open
// their own sockets (the io_uring engine).
type Endpoint struct {
	// Unix is the unix socket path; when empty, Addr is the TCP address.
	Unix string
	Addr netip.AddrPort
	// Hybrid says Unix is a VMM's hybrid-vsock socket: after connecting,
	// send "CONNECT <VsockPort>\n" and expect "OK <port>\n" (see
	// VsockHandshake).
	Hybrid    bool
	VsockPort uint32
	// TLS reports that connections need a TLS handshake.
	TLS bool
	// Timeout bounds DNS + connect (+ handshakes); 0 means none.
	Timeout time.Duration
}

// ErrNoEndpoint is returned by Endpoint for connections only Dial can open
// (AF_VSOCK, proxies).
var ErrNoEndpoint = errors.New("AF_VSOCK and proxied connections are opened by the net engine only")

// Endpoint returns where the next connection goes, as Dial would connect,
// without connecting: the name is looked up now unless it was before the
// run (dns is how long that took), and pre-looked-up addresses are used in
// turn.
func (d *Dialer) Endpoint(ctx context.Context) (ep Endpoint, dns time.Duration, err error) {
	ep = Endpoint{TLS: d.opt.TLS != nil, Timeout: d.opt.Timeout}
	switch {
	case d.opt.Vsock || d.opt.Proxy != nil:
		return ep, 0, ErrNoEndpoint
	case d.opt.UnixSocket != "":
		ep.Unix = d.opt.UnixSocket
		return ep, 0, nil
	case d.opt.VsockUDS != "":
		ep.Unix, ep.Hybrid, ep.VsockPort = d.opt.VsockUDS, true, d.opt.VsockUDSPort
		return ep, 0, nil
	}
	ep.Addr, dns, err = d.nextAddr(ctx)
	return ep, dns, err
}

// nextAddr is the TCP or UDP address the next connection goes to: the
// pre-looked-up addresses in turn, or the name looked up now (dns is how
// long that took); --connect-to applies.
func (d *Dialer) nextAddr(ctx context.Context) (ap netip.AddrPort, dns time.Duration, err error) {
	ips := d.ips
	if ips == nil {
		t0 := time.Now()
		ips, err = d.resolve(ctx)
		dns = time.Since(t0)
		if err != nil {
			return ap, dns, err
		}
	}
	_, port := d.host()
	return netip.AddrPortFrom(ips[int(d.next.Add(1))%len(ips)], uint16(port)), dns, nil
}

// Dial opens one connection.
func (d *Dialer) Dial(ctx context.Context) (net.Conn, Timing, error) {
	var tm Timing
	t0 := time.Now()
	if d.opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.opt.Timeout)
		defer cancel()
	}
	var nd net.Dialer
	var c net.Conn
	var err error
	if d.opt.UnixSocket != "" {
		c, err = nd.DialContext(ctx, "unix", d.opt.UnixSocket)
	} else if d.opt.Vsock {
		c, err = dialVsock(ctx, d.opt.VsockCID, d.opt.VsockPort)
	} else if d.opt.VsockUDS != "" {
		c, err = dialHybridVsock(ctx, &nd, d.opt.VsockUDS, d.opt.VsockUDSPort)
	} else {
		var ap netip.AddrPort
		if ap, tm.DNS, err = d.nextAddr(ctx); err != nil {
			return nil, tm, err
		}
		c, err = nd.DialContext(ctx, "tcp", ap.String())
		if err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetNoDelay(true)
				if d.opt.RxTimes && d.opt.Proxy == nil {
					c = stamp(tc)
				}
			}
		}
	}
	if err != nil {
		return nil, tm, setupErr(ctx, err)
	}
	if d.opt.Proxy != nil {
		if c, err = d.viaProxy(ctx, c); err != nil {
			return nil, tm, setupErr(ctx, err)
		}
	}
	if d.opt.TLS != nil {
		if c, err = d.handshake(ctx, c); err != nil {
			return nil, tm, setupErr(ctx, err)
		}
	}
	tm.Total = time.Since(t0)
	return c, tm, nil
}

// setupErr names a connection setup that ran out of time a connect
// timeout, whichever noticed first: the context's deadline, or the
// socket's own deadline (the dialer sets it from the same deadline, and it
// can fire before the context's timer does), or the kernel giving up
// (ETIMEDOUT). A setup cancelled for another reason keeps its error.
func setupErr(ctx context.Context, err error) error {
	var cto *ConnectTimeoutError
	if errors.As(err, &cto) {
		return err
	}
	var ne net.Error
	if ctx.Err() == context.DeadlineExceeded || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) ||
		errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.Canceled) {
		return &ConnectTimeoutError{Err: err}
	}
	return err
}

// ConnectTimeoutError is a connection setup that ran out of time.
type ConnectTimeoutError struct{ Err error }

func (e *ConnectTimeoutError) Error() string { return "connect timeout: " + e.Err.Error() }
func (e *ConnectTimeoutError) Unwrap() error { return e.Err }

// ParseConnectTo parses oha's --connect-to value "HOST:PORT:TARGET_HOST:TARGET_PORT"
// (IPv6 hosts in brackets) and returns the pair it applies to and the target.
func ParseConnectTo(s string) (host string, port int, toHost string, toPort int, err error) {
	fields, err := splitHostPorts(s)
	if err != nil || len(fields) != 4 {
		return "", 0, "", 0, fmt.Errorf("--connect-to %q: want HOST:PORT:TARGET_HOST:TARGET_PORT, e.g. example.com:443:127.0.0.1:8443", s)
	}
	port, err1 := strconv.Atoi(fields[1])
	toPort, err2 := strconv.Atoi(fields[3])
	if err1 != nil || err2 != nil || port <= 0 || port > 65535 || toPort <= 0 || toPort > 65535 {
		return "", 0, "", 0, fmt.Errorf("--connect-to %q: ports must be numbers from 1 to 65535", s)
	}
	return fields[0], port, fields[2], toPort, nil
}

// splitHostPorts splits on ':' outside square brackets, dropping the brackets.
func splitHostPorts(s string) ([]string, error) {
	var out []string
	cur := []byte{}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == ':' && depth == 0:
			out = append(out, string(cur))
			cur = cur[:0]
		default:
			cur = append(cur, c)
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced brackets")
	}
	return append(out, string(cur)), nil
}
