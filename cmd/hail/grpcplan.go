package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/metadata"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/transport"
)

// grpcRun is a checked hail grpc invocation: the plan (an HTTP/2 POST
// per call, with its framed messages as the body), the method, and the
// workload when templates make every call's payload.
type grpcRun struct {
	plan     *plan.Plan
	method   *grpccall.Method
	source   grpccall.Source
	workload *run.Workload
	meta     [][2]string
	messages int    // request messages per call
	listing  string // without --call: the source's methods, to print instead of a run
}

// prepareGRPC checks everything before a call is sent: the flags, the
// schema (compiled, or fetched by reflection after a probe of the server
// that catches TLS mismatches), the method, and the data against the
// method's input message. Each problem is one line.
func prepareGRPC(cmd *cobra.Command, f *grpcFlags, args []string) (*grpcRun, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("expected one HOST:PORT, got %d arguments: usage is hail grpc --call package.Service/Method [flags] HOST:PORT", len(args))
	}
	target := args[0]
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("%q: expected HOST:PORT, e.g. 127.0.0.1:9090", target)
	}
	p, err := grpcPlan(cmd, f, target)
	if err != nil {
		return nil, err
	}
	g := &grpcRun{plan: p}
	if g.meta, err = grpcMetadata(f.metadata, f.metadataFile, "-m", "-M", f.bodyFileLimit); err != nil {
		return nil, err
	}
	data, err := grpcData(f)
	if err != nil {
		return nil, err
	}
	// The schema: local files first, so that their problems need no server.
	switch {
	case f.protoset != "" && len(f.protos) > 0:
		return nil, fmt.Errorf("--proto and --protoset each give the schema: use one")
	case f.protoset != "":
		g.source, err = grpccall.FromProtoset(f.protoset, f.bodyFileLimit)
	case len(f.protos) > 0:
		g.source, err = grpccall.FromProto(f.protos, f.importPaths)
	case len(f.importPaths) > 0:
		return nil, fmt.Errorf("-i gives the directories of --proto's imports: add --proto FILE")
	}
	if err != nil {
		return nil, err
	}
	if g.source != nil && f.call != "" {
		if err := g.resolve(f, data); err != nil {
			return nil, err
		}
	}
	if g.source != nil && f.call == "" { // the files list their methods without the server
		return g, g.list()
	}
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.ConnectTimeout+5*time.Second)
	defer cancel()
	if err := grpccall.Probe(ctx, topt, target); err != nil {
		return nil, err
	}
	if g.source == nil {
		rm, err := grpcMetadata(f.reflectMetadata, "", "--reflect-metadata", "", 0)
		if err != nil {
			return nil, err
		}
		if g.source, err = reflectionSource(p, target, rm); err != nil {
			return nil, err
		}
	}
	if f.call == "" {
		return g, g.list()
	}
	if g.method == nil {
		if err := g.resolve(f, data); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// list fills g.listing with every method of g's source (hail grpc
// without --call).
func (g *grpcRun) list() error {
	methods, err := grpccall.List(g.source)
	if err != nil {
		return err
	}
	g.listing = grpccall.ListText(g.source, methods)
	return nil
}

// grpcPlan is the plan of the flags: calls are HTTP/2 POSTs to the
// method's path, over TLS unless --insecure.
func grpcPlan(cmd *cobra.Command, f *grpcFlags, target string) (*plan.Plan, error) {
	if f.insecure {
		for _, x := range []struct{ flag, val string }{{"--skipTLS", fmt.Sprint(f.skipTLS)}, {"--cacert", f.cacert}, {"--cert", f.cert}, {"--key", f.key}, {"--cname", f.cname}} {
			if x.val != "" && x.val != "false" {
				return nil, fmt.Errorf("--insecure is plaintext (no TLS) and %s configures TLS: drop one of them", x.flag)
			}
		}
	}
	if f.p < 1 {
		return nil, fmt.Errorf("-p %d: need at least one call in flight per connection", f.p)
	}
	path := "/"
	if f.call != "" {
		svc, m, err := grpccall.ParseCall(f.call)
		if err != nil {
			return nil, err
		}
		path = "/" + svc + "/" + m
	}
	scheme := "https"
	if f.insecure {
		scheme = "http"
	}
	p := &plan.Plan{URL: &url.URL{Scheme: scheme, Host: target, Path: path}, Method: "POST", Connections: f.c,
		Requests: f.n, Rate: f.q, WaitOngoing: f.wait, PacingGranularity: pacing(f.pacing), Timeout: f.timeout, ConnectTimeout: f.connTimeout,
		KeepAlive: true, Host: f.authority, ServerName: f.cname, Insecure: f.skipTLS, CACert: f.cacert,
		Cert: f.cert, Key: f.key, Engine: plan.EngineAuto, HTTPVersion: plan.HTTP2, Streams: f.p}
	if p.ConnectTimeout == 0 {
		p.ConnectTimeout = plan.DefaultConnectTimeout
	}
	p.UnixSocket = f.unixSocket
	if err := applyDestination(p, f.connectTo, f.vsockAddr, f.vsockUDS); err != nil {
		return nil, err
	}
	switch {
	case cmd.Flags().Changed("duration") && f.z > 0:
		p.Duration, p.Requests = f.z, 0
	case f.maxDuration > 0:
		p.Duration = f.maxDuration // -n calls, or fewer when time runs out
	}
	return p, nil
}

// grpcHeaders are a call's HTTP/2 headers: gRPC's own, then the metadata.
func grpcHeaders(p *plan.Plan, meta [][2]string) [][2]string {
	h := [][2]string{{"Content-Type", "application/grpc"}, {"TE", "trailers"}}
	if p.Timeout > 0 {
		h = append(h, [2]string{"grpc-timeout", grpccall.Timeout(p.Timeout)})
	}
	return append(h, meta...)
}

// resolve finds the method in the source and encodes the data for it.
func (g *grpcRun) resolve(f *grpcFlags, data []byte) error {
	m, err := grpccall.Resolve(g.source, f.call)
	if err != nil {
		return err
	}
	g.method = m
	if f.streamCount < 0 || f.streamCount > 0 && !m.ClientStreams() {
		return fmt.Errorf("--stream-call-count %d: %s is %s; the count applies to client and bidi streaming calls", f.streamCount, m.Name(), m.Kind())
	}
	p := g.plan
	p.Headers = grpcHeaders(p, g.meta)
	if data != nil && f.binFile != "" {
		return fmt.Errorf("-d/-D and -B each give the request: use one")
	}
	if f.binFile != "" {
		b, err := bodyfile.Read(f.binFile, f.bodyFileLimit)
		if err != nil {
			return fmt.Errorf("-B %v", err)
		}
		msgs, err := grpccall.SplitBinary(m.Desc.Input(), b)
		if err != nil {
			return fmt.Errorf("-B %s: %v", f.binFile, err)
		}
		p.Bodies, g.messages = grpcBodies(msgs, m.ClientStreams(), f.streamCount)
		return p.Validate()
	}
	if strings.Contains(string(data), "{{") || metaTemplated(g.meta) {
		w, msgs, err := grpcTemplated(g, f, data)
		if err != nil {
			return err
		}
		g.workload, g.messages = w, msgs
		return p.Validate()
	}
	msgs, err := grpccall.SplitData(data)
	if err != nil {
		return fmt.Errorf("%s: %v", dataFlag(f), err)
	}
	var encoded [][]byte
	for i, js := range msgs {
		b, err := grpccall.Encode(m.Desc.Input(), js)
		if err != nil {
			where := dataFlag(f)
			if len(msgs) > 1 {
				where += fmt.Sprintf(" [%d]", i)
			}
			return fmt.Errorf("%s: %v", where, err)
		}
		encoded = append(encoded, b)
	}
	p.Bodies, g.messages = grpcBodies(encoded, m.ClientStreams(), f.streamCount)
	return p.Validate()
}

// grpcBodies frames encoded messages into request bodies: one body per
// message (used in turn) for unary and server-streaming calls, one body
// holding the stream's messages for client and bidi streaming (count of
// them when count > 0, cycling).
func grpcBodies(encoded [][]byte, clientStreams bool, count int) ([][]byte, int) {
	if !clientStreams {
		bodies := make([][]byte, len(encoded))
		for i, b := range encoded {
			bodies[i] = grpccall.AppendFrame(nil, b)
		}
		return bodies, 1
	}
	if count == 0 {
		count = len(encoded)
	}
	var body []byte
	for i := range count {
		body = grpccall.AppendFrame(body, encoded[i%len(encoded)])
	}
	return [][]byte{body}, count
}

func dataFlag(f *grpcFlags) string {
	if f.dataFile != "" {
		return "-D " + f.dataFile
	}
	return "-d"
}

// grpcData reads -d or -D (nil when neither is given).
func grpcData(f *grpcFlags) ([]byte, error) {
	switch {
	case f.data != "" && f.dataFile != "":
		return nil, fmt.Errorf("-d and -D each give the request: use one")
	case f.dataFile != "":
		b, err := bodyfile.Read(f.dataFile, f.bodyFileLimit)
		if err != nil {
			return nil, fmt.Errorf("-D %v", err)
		}
		return b, nil
	case f.data == "@":
		b, err := bodyfile.Read("/dev/stdin", f.bodyFileLimit)
		if err != nil {
			return nil, fmt.Errorf("-d @: reading stdin: %v", err)
		}
		return b, nil
	case f.data != "":
		return []byte(f.data), nil
	}
	return nil, nil
}

// grpcMetadata reads metadata JSON ({"key":"value"}) from value or file:
// keys become lower-case header names; values of keys ending in -bin are
// sent base64-encoded, as gRPC requires. A file is read up to limit bytes
// (≤ 0: bodyfile's default).
func grpcMetadata(value, file, flag, fileFlag string, limit int64) ([][2]string, error) {
	src := []byte(value)
	if file != "" {
		if value != "" {
			return nil, fmt.Errorf("%s and %s each give the metadata: use one", flag, fileFlag)
		}
		b, err := bodyfile.Read(file, limit)
		if err != nil {
			return nil, fmt.Errorf("%s %v", fileFlag, err)
		}
		src, flag = b, fileFlag+" "+file
	}
	if len(strings.TrimSpace(string(src))) == 0 {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(src, &m); err != nil {
		return nil, fmt.Errorf(`%s: expected a JSON object of strings, {"key":"value"}: %v`, flag, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][2]string
	for _, k := range keys {
		lk := strings.ToLower(k)
		if !isToken(lk) || strings.HasPrefix(lk, "grpc-") && lk != "grpc-trace-bin" || lk == "content-type" || lk == "te" {
			return nil, fmt.Errorf("%s: metadata key %q: expected a lower-case token that gRPC does not reserve (not grpc-*, content-type, te)", flag, k)
		}
		v := m[k]
		if strings.HasSuffix(lk, "-bin") {
			v = base64.RawStdEncoding.EncodeToString([]byte(v))
		} else if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("%s: metadata %q: the value may not contain a line break", flag, k)
		}
		out = append(out, [2]string{lk, v})
	}
	return out, nil
}

func metaTemplated(meta [][2]string) bool {
	for _, kv := range meta {
		if strings.Contains(kv[1], "{{") {
			return true
		}
	}
	return false
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// reflectionSource connects for server reflection through hail's own
// transport, sending rm (--reflect-metadata) with each question.
func reflectionSource(p *plan.Plan, target string, rm [][2]string) (grpccall.Source, error) {
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return nil, err
	}
	d, err := transport.NewDialer(context.Background(), topt)
	if err != nil {
		return nil, err
	}
	authority := target
	if p.Host != "" {
		authority = p.Host
	}
	conn, err := grpccall.Dial(d, authority)
	if err != nil {
		return nil, fmt.Errorf("reflection: %v", err)
	}
	md := metadata.MD{}
	for _, kv := range rm {
		md.Append(kv[0], kv[1])
	}
	return grpccall.FromReflection(conn, md, target, p.ConnectTimeout+10*time.Second), nil
}

// scenarioGRPCSource is hail run's schema for gRPC steps of a file that
// names none: the server at base, probed (a TLS mismatch is one line) and
// asked by reflection.
func scenarioGRPCSource(base *url.URL, insecure bool) (grpccall.Source, error) {
	p := &plan.Plan{URL: base, HTTPVersion: plan.HTTP2, Insecure: insecure, ConnectTimeout: plan.DefaultConnectTimeout, KeepAlive: true}
	topt, err := p.TransportOptions(base)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := grpccall.Probe(ctx, topt, base.Host); err != nil {
		return nil, schemeHint(err, base)
	}
	return reflectionSource(p, base.Host, nil)
}

// schemeHint rephrases a probe's --insecure advice for a scenario, whose
// base URL's scheme chooses TLS.
func schemeHint(err error, base *url.URL) error {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "add --insecure (plaintext h2c, as ghz)", "write base: http://"+base.Host+" (h2c)")
	msg = strings.ReplaceAll(msg, "drop --insecure", "write base: https://"+base.Host)
	return errors.New(msg)
}

// config is the run's configuration as the Result stores it.
func (g *grpcRun) config(f *grpcFlags) map[string]any {
	p := g.plan
	meta := redactedHeaders(g.meta, false)
	return map[string]any{
		"url": redactedURL(p.URL, false), "call": g.method.Name(), "kind": g.method.Kind(), "schema": g.source.Describe(),
		"metadata": meta, "messages_per_call": g.messages, "payloads": len(p.Bodies), "templated": g.workload != nil,
		"connections": p.Connections, "streams_per_connection": p.StreamsPerConn(), "requests": p.Requests,
		"duration_seconds": p.Duration.Seconds(), "rate": p.Rate, "model": modelName(p, g.workload), "wait_ongoing": p.WaitOngoing,
		"timeout_seconds": p.Timeout.Seconds(), "connect_timeout_seconds": p.ConnectTimeout.Seconds(),
		"authority": p.Host, "insecure": f.insecure, "skip_tls": f.skipTLS, "http_version": "2", "engine": "h2",
	}
}
