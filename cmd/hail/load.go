package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"hail/internal/plan"
	"hail/internal/report"
	"hail/internal/run"
	"hail/internal/stats"
	"hail/internal/transport"
)

// loadFlags are oha's flags (same names, meanings and defaults where sensible).
type loadFlags struct {
	n           uint64
	c           int
	z           time.Duration
	q           float64
	burstDelay  time.Duration
	burstRate   int
	wait        bool
	method      string
	headers     []string
	body        string
	bodyFile    string
	bodyLines   string
	contentType string
	accept      string
	basicAuth   string
	timeout     time.Duration
	connTimeout time.Duration
	host        string
	httpVersion string
	noKeepalive bool
	noCompress  bool
	redirect    int
	insecure    bool
	cacert      string
	connectTo   []string
	ipv4, ipv6  bool
	noPreLookup bool
	unixSocket  string
	latencyCorr bool
	outputFlags
	debug       bool
	showSecrets bool
	redact      []string
	engine      string
	sqpoll      bool
	urls        urlFlags // runcmd.go: --urls-from-file, --rand-regex-url, --max-repeat, --dump-urls
	// transports and protocols
	http2        bool
	parallel     int
	vsockAddr    string
	vsockUDS     string
	proxy        string
	proxyHeaders []string
	cert, key    string
	results      resultFlags // report.go: --db-url, --metrics-addr, --target-pid, --shard, --start-at

	bodyFileLimit int64 // --body-file-limit (bodies.go)
}

func newRootCmd() *cobra.Command {
	f := &loadFlags{n: 200, c: 50, redirect: 10, method: "GET", httpVersion: "1.1", engine: "auto", outputFlags: defaultOutputFlags()}
	cmd := &cobra.Command{
		Use:   "hail [flags] URL",
		Short: "hail is an HTTP load generator that measures latency truthfully",
		Long: `hail sends HTTP requests to URL and reports latency, throughput, status codes and errors.

Closed model (default): -c connections each send the next request when the previous one completes.
Open model (-q): requests are scheduled at fixed times and latency counts from each request's
intended send time, so a stalled server cannot hide (coordinated-omission correction, as wrk2).

Subcommands: 'hail serve' runs the built-in target, 'hail demo' loads it and prints a report.`,
		Example: `  hail -n 10k -c 64 http://127.0.0.1:8080/
  hail -z 30s -q 5000 -c 200 --no-tui -j -o result.json http://127.0.0.1:8080/items
  hail demo`,
		Version:       plan.Version,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLoad(cmd, f, args)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.SetVersionTemplate("hail {{.Version}}\n")
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.VarP(countValue{&f.n}, "n-requests", "n", "number of requests to send; k/m suffixes (10k, 2m); ignored with -z")
	fl.VarP(intValue{&f.c, "connections"}, "connections", "c", "number of concurrent connections")
	fl.VarP(durationValue{&f.z}, "duration", "z", "run for this long (10s, 3m; plain numbers are seconds) instead of -n requests")
	fl.VarP(floatValue{&f.q, "requests per second"}, "query-per-second", "q", "open model: send this many requests per second in total, at fixed intended times")
	fl.Var(durationValue{&f.burstDelay}, "burst-delay", "send --burst-rate requests at once every this long (ignored with -q)")
	fl.Var(intValue{&f.burstRate, "requests per burst"}, "burst-rate", "requests per burst with --burst-delay")
	fl.BoolVarP(&f.wait, "wait-ongoing-requests-after-deadline", "w", false, "let in-flight requests finish after -z or Ctrl-C (bounded by -t, else 30s) instead of aborting them")
	fl.StringVarP(&f.method, "method", "m", f.method, "HTTP method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "extra header 'Name: value' (repeatable)")
	fl.StringVarP(&f.body, "body-string", "d", "", "request body")
	fl.StringVarP(&f.bodyFile, "body-path", "D", "", "request body from a file")
	fl.StringVarP(&f.bodyLines, "body-path-lines", "Z", "", "file whose lines are request bodies, used in turn")
	fl.Var(sizeValue{&f.bodyFileLimit}, "body-file-limit", bodyFileHelp)
	fl.StringVarP(&f.contentType, "content-type", "T", "", "Content-Type header")
	fl.StringVarP(&f.accept, "accept-header", "A", "", "Accept header")
	fl.StringVarP(&f.basicAuth, "basic-auth", "a", "", "basic authentication 'user:password'")
	fl.VarP(durationValue{&f.timeout}, "timeout", "t", "per-request timeout (none by default)")
	fl.Var(durationValue{&f.connTimeout}, "connect-timeout", "timeout for DNS + connect + TLS handshake (default 5s)")
	fl.StringVar(&f.host, "host", "", "Host header (and TLS server name) to send instead of the URL's")
	fl.Var(choiceValue{&f.httpVersion, []string{"1.0", "1.1", "2", "3"}}, "http-version", "HTTP version: 1.0, 1.1, 2 (h2 over TLS, h2c for http://) or 3 (QUIC)")
	fl.BoolVar(&f.http2, "http2", false, "same as --http-version 2")
	fl.VarP(intValue{&f.parallel, "streams per connection"}, "http2-parallel", "p", "HTTP/2 and HTTP/3: requests in flight per connection; c × p in all")
	fl.StringVar(&f.vsockAddr, "vsock-addr", "", "connect over AF_VSOCK to CID:PORT (a QEMU/KVM guest); the URL gives Host and path")
	fl.StringVar(&f.vsockUDS, "vsock-uds", "", "connect to PATH:PORT, a Firecracker/Cloud Hypervisor hybrid vsock socket and the guest port")
	fl.StringVarP(&f.proxy, "proxy", "x", "", "send requests through this HTTP(S) proxy, http://[user:pass@]host:port (CONNECT for https:// targets)")
	fl.StringArrayVar(&f.proxyHeaders, "proxy-header", nil, "extra header 'Name: value' for the proxy (repeatable)")
	fl.StringVar(&f.cert, "cert", "", "TLS client certificate (PEM file; may hold the key too)")
	fl.StringVar(&f.key, "key", "", "private key of --cert (PEM file)")
	fl.BoolVar(&f.noKeepalive, "disable-keepalive", false, "open a new connection for every request")
	fl.BoolVar(&f.noCompress, "disable-compression", false, "do not send Accept-Encoding: gzip, deflate, br")
	fl.VarP(intValue{&f.redirect, "redirects"}, "redirect", "r", "follow up to this many redirects; 0 reports 3xx as they are")
	fl.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification")
	fl.StringVar(&f.cacert, "cacert", "", "PEM file of CA certificates to trust")
	fl.StringArrayVar(&f.connectTo, "connect-to", nil, "connect HOST:PORT to TARGET_HOST:TARGET_PORT instead (repeatable)")
	fl.BoolVar(&f.ipv4, "ipv4", false, "resolve the host to IPv4 addresses only")
	fl.BoolVar(&f.ipv6, "ipv6", false, "resolve the host to IPv6 addresses only")
	fl.BoolVar(&f.noPreLookup, "no-pre-lookup", false, "resolve the host at every connect, not once before the run")
	fl.StringVar(&f.unixSocket, "unix-socket", "", "send requests over this unix socket (http:// URLs)")
	fl.BoolVar(&f.latencyCorr, "latency-correction", false, "accepted for oha compatibility: hail always measures open-model latency from the intended send time")
	addOutputFlags(fl, &f.outputFlags, loadFormatHelp)
	fl.BoolVar(&f.debug, "debug", false, "send one request and print both sides of the exchange")
	fl.BoolVar(&f.showSecrets, "show-secrets", false, "do not redact Authorization, Cookie and Proxy-Authorization in --debug and reports")
	fl.StringArrayVar(&f.redact, "redact", nil, "also redact this header or query parameter in --debug and reports (repeatable)")
	fl.Var(choiceValue{&f.engine, []string{"auto", "net", "uring"}}, "engine", "engine: net (goroutine per connection), uring (io_uring, Linux) or auto")
	fl.BoolVar(&f.sqpoll, "sqpoll", false, "uring engine: let a kernel thread poll the submission ring (saves syscalls, costs a core)")
	addURLFlags(fl, &f.urls)
	addResultFlags(fl, &f.results)
	return cmd
}

// buildPlan turns the flags and URL into a validated plan.
func buildPlan(cmd *cobra.Command, f *loadFlags, args []string) (*plan.Plan, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("no URL given: usage is hail [flags] URL, e.g. hail -n 1000 http://127.0.0.1:8080/ (or try 'hail demo')")
	}
	if len(args) > 1 {
		return nil, fmt.Errorf("one URL expected, got %d arguments (%s): quote the URL if it contains spaces or &", len(args), strings.Join(args, " "))
	}
	raw := args[0]
	if f.urls.set() {
		first, err := f.urls.load(raw)
		if err != nil {
			return nil, err
		}
		raw = first
	}
	if !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("URL %q has no scheme: write http://%s or https://%s", raw, raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("URL %q is not valid: %v", raw, unwrapURLErr(err))
	}
	p := &plan.Plan{
		URL: u, Method: strings.ToUpper(f.method), Connections: f.c, Requests: f.n, Rate: f.q,
		WaitOngoing: f.wait, Timeout: f.timeout, ConnectTimeout: f.connTimeout, MaxRedirects: f.redirect,
		Host: f.host, HTTP10: f.httpVersion == "1.0", KeepAlive: !f.noKeepalive, Compression: !f.noCompress,
		IPv4: f.ipv4, IPv6: f.ipv6, NoPreLookup: f.noPreLookup, UnixSocket: f.unixSocket,
		Insecure: f.insecure, CACert: f.cacert, Engine: f.engine, SQPoll: f.sqpoll,
	}
	if p.ConnectTimeout == 0 {
		p.ConnectTimeout = 5 * time.Second
	}
	if f.z > 0 {
		p.Duration, p.Requests = f.z, 0
	}
	if f.burstDelay > 0 && f.q == 0 {
		if f.burstRate < 1 {
			f.burstRate = 1
		}
		p.BurstEvery, p.BurstSize = f.burstDelay, uint64(f.burstRate)
	} else if cmd.Flags().Changed("burst-rate") && f.burstDelay == 0 {
		return nil, fmt.Errorf("--burst-rate needs --burst-delay (how often a burst is sent)")
	}
	if u.User != nil && f.basicAuth == "" {
		pw, _ := u.User.Password()
		f.basicAuth = u.User.Username() + ":" + pw
		u.User = nil
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("-H %q: write headers as 'Name: value'", h)
		}
		p.Headers = append(p.Headers, [2]string{name, strings.TrimSpace(value)})
	}
	if f.accept != "" {
		p.Headers = append(p.Headers, [2]string{"Accept", f.accept})
	}
	if f.contentType != "" {
		p.Headers = append(p.Headers, [2]string{"Content-Type", f.contentType})
	}
	if f.basicAuth != "" && !slices.ContainsFunc(p.Headers, func(h [2]string) bool { return strings.EqualFold(h[0], "Authorization") }) {
		// -a or the URL's user:password; an explicit -H Authorization wins, as with curl
		p.Headers = append(p.Headers, [2]string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(f.basicAuth))})
	}
	bodies, err := readBodies(f)
	if err != nil {
		return nil, err
	}
	p.Bodies = bodies
	for _, ct := range f.connectTo {
		h, port, th, tport, err := transport.ParseConnectTo(ct)
		if err != nil {
			return nil, err
		}
		p.ConnectTo = append(p.ConnectTo, plan.ConnectTo{Host: h, Port: port, ToHost: th, ToPort: tport})
	}
	if f.unixSocket != "" && u.Scheme != "http" {
		return nil, fmt.Errorf("--unix-socket works with http:// URLs, not %s://", u.Scheme)
	}
	if err := applyTransportFlags(cmd, f, p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

func unwrapURLErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func runLoad(cmd *cobra.Command, f *loadFlags, args []string) error {
	p, err := buildPlan(cmd, f, args)
	if err != nil {
		return err
	}
	if f.urls.dump > 0 {
		return f.urls.dumpURLs(os.Stdout, p)
	}
	if f.json {
		f.format = "json"
	}
	if err := applyResultFlags(&f.results, p); err != nil {
		return err
	}
	if rowsOnStdout(f.format, f.output) {
		f.noTUI = true
	}
	color := !f.noColor && os.Getenv("NO_COLOR") == "" && f.output == "" && term.IsTerminal(int(os.Stdout.Fd()))
	if f.debug && p.HTTPVersion != "" {
		return fmt.Errorf("--debug speaks HTTP/1.1; drop --http2/--http-version %s to see one exchange", p.HTTPVersion)
	}
	extraSecrets = f.redact
	if f.debug {
		return debugExchange(cmd.Context(), p, os.Stdout, f.showSecrets)
	}
	announcePlan(cmd, p, true)
	out, err := openOutput(f.output)
	if err != nil {
		return err
	}
	defer out.Discard()
	workload := f.urls.workload(p)
	results, err := prepareResults(&f.results, f.format, p, workload, out, f.showSecrets)
	if err != nil {
		return err
	}

	interrupt, stop, release := handleSignals(out)
	defer release()

	opts := run.Options{Interrupt: interrupt, SuccessBreakdown: f.successSplit, Config: redactedConfig(p, f)}
	opts.Workload = workload
	res, err := execute(p, &f.outputFlags, stop, out, results, opts)
	if err != nil {
		return err
	}
	if err := writeReport(out, res, afterRun(f.format), report.TextOptions{Unit: f.unit, Color: color}); err != nil {
		return err
	}
	return out.Commit()
}

func writeReport(w io.Writer, res *report.Result, format string, to report.TextOptions) error {
	if ok, err := writeRendered(w, res, format); ok {
		return err
	}
	switch format {
	case "json":
		return report.WriteJSON(w, res)
	case "csv":
		return report.WriteCSV(w, res)
	case "quiet":
		return nil
	}
	return report.WriteText(w, res, to)
}

func printProgress(w io.Writer, s stats.Snapshot) {
	rate := 0.0
	if s.Last.Span > 0 {
		rate = float64(s.Last.Requests) / s.Last.Span
	}
	fmt.Fprintf(w, "\r\x1b[K%6.1fs  %d requests  %.0f req/s  %d errors  p99 %s",
		s.Elapsed.Seconds(), s.Requests, rate, s.Errors, time.Duration(s.P99).Round(time.Microsecond))
}

// applyTransportFlags sets the plan's HTTP version, streams, vsock, proxy
// and client certificate from their flags.
func applyTransportFlags(cmd *cobra.Command, f *loadFlags, p *plan.Plan) error {
	if f.httpVersion == "2" || f.httpVersion == "3" {
		p.HTTPVersion = f.httpVersion
	}
	if f.http2 {
		if cmd.Flags().Changed("http-version") && f.httpVersion != "2" {
			return fmt.Errorf("--http2 and --http-version %s disagree: give one", f.httpVersion)
		}
		p.HTTPVersion = "2"
	}
	if cmd.Flags().Changed("http2-parallel") {
		if f.parallel < 1 {
			return fmt.Errorf("-p %d: need at least one stream per connection", f.parallel)
		}
		p.Streams = f.parallel
	}
	if f.vsockAddr != "" {
		cid, port, err := transport.ParseVsockAddr(f.vsockAddr)
		if err != nil {
			return err
		}
		p.Vsock, p.VsockCID, p.VsockPort = true, cid, port
	}
	if f.vsockUDS != "" {
		path, port, err := transport.ParseVsockUDS(f.vsockUDS)
		if err != nil {
			return err
		}
		p.VsockUDS, p.VsockUDSPort = path, port
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
	p.Cert, p.Key = f.cert, f.key
	return nil
}
