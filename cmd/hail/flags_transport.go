package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/transport"
)

// transportFlags say how requests travel: the proxy, the protocol, where
// connections go, TLS and the engine.
type transportFlags struct {
	proxy            string
	proxyHeaders     []string
	proxyHTTPVersion string
	proxyHTTP2       bool
	httpVersion      string
	http2            bool
	parallel         int
	noCompress       bool
	redirect         int
	noKeepalive      bool
	noPreLookup      bool
	ipv4, ipv6       bool
	connectTo        []string
	unixSocket       string
	vsockAddr        string
	vsockUDS         string
	cacert           string
	cert, key        string
	insecure         bool
	engine           string
	sqpoll           bool
}

func addTransportFlags(fl *pflag.FlagSet, f *transportFlags) {
	f.httpVersion, f.proxyHTTPVersion, f.parallel, f.engine = "1.1", "1.1", 1, "auto"
	fl.StringVarP(&f.proxy, "proxy", "x", "", "send requests through this HTTP(S) `PROXY`, http://[user:pass@]host:port (CONNECT for https://)")
	fl.StringArrayVar(&f.proxyHeaders, "proxy-header", nil, "extra header 'Name: value' for the proxy (repeatable)")
	fl.Var(versionValue{&f.proxyHTTPVersion, proxyVersions}, "proxy-http-version",
		"HTTP version spoken to the proxy: 1.0 (http:// targets) or 1.1")
	fl.BoolVar(&f.proxyHTTP2, "proxy-http2", false, "same as --proxy-http-version 2 (refused: hail speaks HTTP/1.x to proxies)")
	setGroup(fl, groupProxy, "proxy", "proxy-header", "proxy-http-version", "proxy-http2")

	fl.Var(versionValue{&f.httpVersion, httpVersions}, "http-version", "HTTP version: 1.0, 1.1, 2 (h2 over TLS, h2c for http://) or 3 (QUIC)")
	fl.BoolVar(&f.http2, "http2", false, "same as --http-version 2")
	fl.VarP(intValue{&f.parallel, "streams per connection"}, "http2-parallel", "p",
		"HTTP/2 and HTTP/3: requests in flight per connection, c × p in all")
	fl.BoolVar(&f.noCompress, "disable-compression", false, "do not send Accept-Encoding: gzip, deflate, br")
	fl.VarP(intValue{&f.redirect, "redirects"}, "redirect", "r", "follow up to this many redirects; 0 reports 3xx as they are")
	fl.BoolVar(&f.noKeepalive, "disable-keepalive", false, "open a new connection for every request")
	setGroup(fl, groupProtocol, "http-version", "http2", "http2-parallel", "disable-compression", "redirect", "disable-keepalive")

	fl.BoolVar(&f.noPreLookup, "no-pre-lookup", false, "resolve the host at every connect, not once before the run")
	fl.BoolVar(&f.ipv6, "ipv6", false, "resolve the host to IPv6 addresses only")
	fl.BoolVar(&f.ipv4, "ipv4", false, "resolve the host to IPv4 addresses only")
	fl.StringArrayVar(&f.connectTo, "connect-to", nil, "`HOST:PORT:TARGET_HOST:TARGET_PORT`: connect there instead (repeatable)")
	fl.StringVar(&f.unixSocket, "unix-socket", "", "send requests over this unix socket `PATH` (http:// URLs)")
	fl.StringVar(&f.vsockAddr, "vsock-addr", "", "connect over AF_VSOCK to `CID:PORT` (a QEMU/KVM guest); the URL gives Host and path")
	fl.StringVar(&f.vsockUDS, "vsock-uds", "", "connect to `PATH:PORT`, a Firecracker/Cloud Hypervisor hybrid vsock socket and port")
	setGroup(fl, groupConnect, "no-pre-lookup", "ipv6", "ipv4", "connect-to", "unix-socket", "vsock-addr", "vsock-uds")

	fl.StringVar(&f.cacert, "cacert", "", "PEM `FILE` of CA certificates to trust besides the system's")
	fl.StringVar(&f.cert, "cert", "", "TLS client certificate (PEM `FILE`; may hold the key too)")
	fl.StringVar(&f.key, "key", "", "private key of --cert (PEM `FILE`)")
	fl.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification")
	markFiles(fl, "cacert", "cert", "key")
	setGroup(fl, groupTLS, "cacert", "cert", "key", "insecure")

	fl.Var(choiceValue{&f.engine, []string{"auto", "net", "uring"}}, "engine", "net (goroutine per connection), uring (io_uring, Linux) or auto")
	fl.BoolVar(&f.sqpoll, "sqpoll", false, "uring engine: a kernel thread polls the submission ring (fewer syscalls, costs a core)")
	setGroup(fl, groupEngine, "engine", "sqpoll")
}

// Accepted spellings of --http-version (oha's) and --proxy-http-version.
var (
	httpVersions  = []string{"0.9", "1.0", "1.1", "2", "2.0", "3", "3.0"}
	proxyVersions = []string{"0.9", "1.0", "1.1", "2", "2.0"}
)

// apply sets the plan's transport: protocol, streams, redirects,
// connections, TLS, proxy and engine. oha's conflicts: --http2 with a
// different --http-version is an error (the same version twice is
// accepted); -p without HTTP/2 or HTTP/3 is ignored with a warning, as oha
// ignores it; --cert without --key is accepted when the file holds both.
func (f *transportFlags) apply(cmd *cobra.Command, p *plan.Plan) error {
	changed := cmd.Flags().Changed
	p.MaxRedirects, p.KeepAlive, p.Compression = f.redirect, !f.noKeepalive, !f.noCompress
	p.IPv4, p.IPv6, p.NoPreLookup, p.UnixSocket = f.ipv4, f.ipv6, f.noPreLookup, f.unixSocket
	p.Insecure, p.CACert, p.Cert, p.Key, p.Engine, p.SQPoll = f.insecure, f.cacert, f.cert, f.key, plan.EngineName(f.engine), f.sqpoll
	v, err := version("http", f.httpVersion, f.http2, changed)
	if err != nil {
		return err
	}
	switch v {
	case "0.9":
		return fmt.Errorf("--http-version 0.9: HTTP/0.9 (no headers, no status line) is not supported: use 1.0 or 1.1")
	case "1.0":
		p.HTTP10 = true
	case "2", "3":
		p.HTTPVersion = plan.Proto(v)
	}
	if changed("http2-parallel") {
		switch {
		case f.parallel < 1:
			return fmt.Errorf("-p %d: need at least one stream per connection", f.parallel)
		case p.HTTPVersion == "" && f.parallel > 1:
			fmt.Fprintf(cmd.ErrOrStderr(), "hail: warning: -p %d is ignored: streams per connection need --http2 or --http-version 2 or 3\n", f.parallel)
		case p.HTTPVersion != "":
			p.Streams = f.parallel
		}
	}
	if f.unixSocket != "" && p.URL.Scheme != "http" {
		return fmt.Errorf("--unix-socket works with http:// URLs, not %s://", p.URL.Scheme)
	}
	if err := applyDestination(p, f.connectTo, f.vsockAddr, f.vsockUDS); err != nil {
		return err
	}
	return f.applyProxy(changed, p)
}

// applyDestination puts --connect-to, --vsock-addr and --vsock-uds into
// the plan (the load command's and hail grpc's).
func applyDestination(p *plan.Plan, connectTo []string, vsockAddr, vsockUDS string) error {
	for _, ct := range connectTo {
		h, port, th, tport, err := transport.ParseConnectTo(ct)
		if err != nil {
			return err
		}
		p.ConnectTo = append(p.ConnectTo, plan.ConnectTo{Host: h, Port: port, ToHost: th, ToPort: tport})
	}
	if vsockAddr != "" {
		cid, port, err := transport.ParseVsockAddr(vsockAddr)
		if err != nil {
			return err
		}
		p.Vsock, p.VsockCID, p.VsockPort = true, cid, port
	}
	if vsockUDS != "" {
		path, port, err := transport.ParseVsockUDS(vsockUDS)
		if err != nil {
			return err
		}
		p.VsockUDS, p.VsockUDSPort = path, port
	}
	return nil
}

// version is the HTTP version --PREFIX-version and --PREFIX2 ask for: "0.9",
// "1.0", "1.1", "2" or "3" ("2.0" and "3.0" are oha's spellings of 2 and
// 3). The two flags disagreeing is an error; saying the same twice is not.
func version(prefix, v string, two bool, changed func(string) bool) (string, error) {
	switch v {
	case "2.0", "3.0":
		v = v[:1]
	}
	if two {
		if changed(prefix+"-version") && v != "2" {
			return "", fmt.Errorf("--%s2 and --%s-version %s disagree: give one", prefix, prefix, v)
		}
		v = "2"
	}
	return v, nil
}

// applyProxy sets -x, --proxy-header and the HTTP version spoken to the
// proxy. As in oha, a forward proxy (an http:// target) receives the
// requests in the proxy's HTTP version; HTTPS targets go through an
// HTTP/1.1 CONNECT tunnel. HTTP/2 to a proxy is refused with one line.
func (f *transportFlags) applyProxy(changed func(string) bool, p *plan.Plan) error {
	pv, err := version("proxy-http", f.proxyHTTPVersion, f.proxyHTTP2, changed)
	if err != nil {
		return err
	}
	if (changed("proxy-http-version") || f.proxyHTTP2) && f.proxy == "" {
		return fmt.Errorf("--proxy-http-version and --proxy-http2 need -x/--proxy (the proxy they are about)")
	}
	switch pv {
	case "0.9", "2":
		return fmt.Errorf("--proxy-http-version %s: hail speaks HTTP/1.0 or HTTP/1.1 to proxies (CONNECT for https://)", pv)
	case "1.0":
		if p.URL.Scheme != "http" || p.HTTPVersion != "" {
			return fmt.Errorf("--proxy-http-version 1.0 applies to http:// targets over HTTP/1.x (https:// goes through an HTTP/1.1 CONNECT tunnel)")
		}
		p.HTTP10 = true
	}
	if f.proxy != "" {
		u, err := transport.ParseProxy(f.proxy)
		if err != nil {
			return err
		}
		p.Proxy = u
	}
	if len(f.proxyHeaders) > 0 && f.proxy == "" {
		return fmt.Errorf("--proxy-header needs -x/--proxy (the proxy it is sent to)")
	}
	for _, h := range f.proxyHeaders {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return fmt.Errorf("--proxy-header %q: write headers as 'Name: value'", h)
		}
		p.ProxyHeaders = append(p.ProxyHeaders, [2]string{name, strings.TrimSpace(value)})
	}
	return nil
}
