package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/grpcload"
	"github.com/hail-loadgen/hail/internal/plan"
)

// grpcRun is a checked hail grpc invocation: the plan (an HTTP/2 POST
// per call, with its framed messages as the body) and the prepared load
// (the method, its schema, the workload when templates make every call's
// payload).
type grpcRun struct {
	plan *plan.Plan
	*grpcload.Load
	meta [][2]string
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
	rm, err := grpcMetadata(f.reflectMetadata, "", "--reflect-metadata", "", 0)
	if err != nil {
		return nil, err
	}
	data, err := grpcData(f)
	if err != nil {
		return nil, err
	}
	c := grpcload.Call{Method: f.call, Data: data, Metadata: g.meta, ReflectMetadata: rm, Protos: f.protos,
		ImportPaths: f.importPaths, Protoset: f.protoset, StreamCount: f.streamCount, FileLimit: f.bodyFileLimit,
		Names: grpcload.Names{Method: "--call", Data: dataFlag(f), Binary: "-B " + f.binFile, Metadata: "-m",
			StreamCount: "--stream-call-count", Protos: "--proto", Protoset: "--protoset", ImportPaths: "-i"}}
	if f.binFile != "" {
		if data != nil {
			return nil, fmt.Errorf("-d/-D and -B each give the request: use one")
		}
		// Mapped when large, with room for the message's 5-byte prefix
		// before it: one message is then framed where it is, not copied
		// (an empty file is still the room: an empty request, not none).
		if c.Binary, err = bodyfile.Map(f.binFile, f.bodyFileLimit, grpccall.PrefixLen); err != nil {
			return nil, fmt.Errorf("-B %v", err)
		}
		c.BinaryRoom = true
	}
	// A signal during the probe or the reflection ends them (signals.go).
	if g.Load, err = grpcload.Prepare(setupContext(), p, c); err != nil {
		return nil, err
	}
	return g, nil
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
	return grpcload.CheckMetadata(m, flag)
}

// config is the run's configuration as the Result stores it.
func (g *grpcRun) config(f *grpcFlags) map[string]any {
	p := g.plan
	meta := redactedHeaders(g.meta, false)
	return map[string]any{
		"url": redactedURL(p.URL, false), "call": g.Method.Name(), "kind": g.Method.Kind(), "schema": g.Source.Describe(),
		"metadata": meta, "messages_per_call": g.Messages, "payloads": len(p.Bodies), "templated": g.Workload != nil,
		"connections": p.Connections, "streams_per_connection": p.StreamsPerConn(), "requests": p.Requests,
		"duration_seconds": p.Duration.Seconds(), "rate": p.Rate, "model": modelName(p, g.Workload), "wait_ongoing": p.WaitOngoing,
		"timeout_seconds": p.Timeout.Seconds(), "connect_timeout_seconds": p.ConnectTimeout.Seconds(),
		"authority": p.Host, "insecure": f.insecure, "skip_tls": f.skipTLS, "http_version": "2", "engine": "h2",
	}
}
