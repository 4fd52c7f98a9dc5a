package hail

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/grpcload"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/transport"
)

// GRPCCall is a gRPC load, what hail grpc sends: Method called with Data
// (or Binary) on the server at Plan.URL, Plan.Streams calls in flight on
// each of Plan.Connections connections, in the closed or the open model.
// The schema comes from Protos, Protoset, or the server's reflection. A
// call is one request whatever its streaming kind; Result's
// StatusCodeDistribution holds gRPC status names ("OK", "Unavailable"),
// and Result.Hail.GRPC counts calls and messages (docs/grpc.md).
type GRPCCall struct {
	// Method is package.Service/Method (or package.Service.Method).
	Method string
	// Data is the request as JSON: an object, or an array of messages
	// (used in turn by unary and server-streaming calls; one stream's
	// messages for client and bidi streaming). Templates as in scenarios
	// ({{counter}}, {{uuid}}, {{int 1 9}}, …) make each call's payload.
	// "": an empty message.
	Data string
	// Binary is the request as serialized protobuf instead: length-
	// delimited messages, or one message.
	Binary []byte
	// Metadata is sent with every call (templates allowed; keys ending in
	// -bin are sent base64-encoded); ReflectMetadata with the reflection
	// requests.
	Metadata        map[string]string
	ReflectMetadata map[string]string
	// Protos are .proto files that define the service (compiled in the
	// process), ImportPaths the directories of their imports; Protoset a
	// compiled FileDescriptorSet instead. Neither: server reflection.
	Protos      []string
	ImportPaths []string
	Protoset    string
	// StreamCount is the messages per client or bidi stream, cycling
	// through Data's (0: Data's count).
	StreamCount int
}

// grpcNames name a GRPCCall's fields in messages.
var grpcNames = grpcload.Names{Method: "GRPC.Method", Data: "GRPC.Data", Binary: "GRPC.Binary", Metadata: "GRPC.Metadata",
	StreamCount: "GRPC.StreamCount", Protos: "GRPC.Protos", Protoset: "GRPC.Protoset", ImportPaths: "GRPC.ImportPaths"}

// prepare makes j's plan a gRPC load of g: HTTP/2 POSTs to the method's
// path. With connect it finds the schema (asking the server when it must),
// resolves the method and encodes the data; without, it checks what it
// can alone.
func (g *GRPCCall) prepare(ctx context.Context, j *job, p Plan, connect bool) error {
	ip := j.plan
	switch {
	case p.Method != "" && p.Method != "POST":
		return &FieldError{Field: "Method", Value: `"` + p.Method + `"`, Problem: "a gRPC call is a POST: leave Method empty"}
	case len(p.Header) > 0:
		return &FieldError{Field: "Header", Problem: "a gRPC call's headers are its metadata: give GRPC.Metadata"}
	case len(p.Body) > 0:
		return &FieldError{Field: "Body", Problem: "a gRPC call's request is GRPC.Data (or GRPC.Binary)"}
	case p.HTTPVersion != "" && p.HTTPVersion != "2":
		return &FieldError{Field: "HTTPVersion", Value: `"` + p.HTTPVersion + `"`, Problem: "gRPC speaks HTTP/2: leave HTTPVersion empty"}
	case p.DisableKeepAlive:
		return &FieldError{Field: "DisableKeepAlive", Problem: "gRPC calls share their HTTP/2 connections: leave it false"}
	case ip.URL.Path != "" && ip.URL.Path != "/" || ip.URL.RawQuery != "":
		return &FieldError{Field: "URL", Value: `"` + p.URL + `"`, Problem: "a gRPC server's URL has no path: write http://HOST:PORT (plaintext h2c) or https://HOST:PORT (TLS)"}
	case g.Data != "" && g.Binary != nil:
		return &FieldError{Field: "GRPC.Binary", Problem: "GRPC.Data and GRPC.Binary each give the request: give one"}
	}
	svc, m, err := grpccall.ParseCall(g.Method)
	if err != nil {
		return grpcError(err)
	}
	ip.URL.Path = "/" + svc + "/" + m
	ip.Method, ip.HTTPVersion, ip.KeepAlive = "POST", plan.HTTP2, true
	meta, err := grpcload.CheckMetadata(g.Metadata, grpcNames.Metadata)
	if err != nil {
		return grpcError(err)
	}
	rmeta, err := grpcload.CheckMetadata(g.ReflectMetadata, "GRPC.ReflectMetadata")
	if err != nil {
		return grpcError(err)
	}
	ip.Headers = grpcload.Headers(ip, meta)
	if !connect {
		return nil
	}
	c := grpcload.Call{Method: g.Method, Binary: g.Binary, Metadata: meta, ReflectMetadata: rmeta, Protos: g.Protos,
		ImportPaths: g.ImportPaths, Protoset: g.Protoset, StreamCount: g.StreamCount, Names: grpcNames}
	if g.Data != "" {
		c.Data = []byte(g.Data)
	}
	load, err := grpcload.Prepare(ctx, ip, c)
	if err != nil {
		if unreachable(err) {
			return &UnreachableError{Addr: ip.URL.Host, Reason: apiWords(err).Error()}
		}
		return grpcError(grpcload.SchemeHint(err, "Plan.URL as ", ip.URL))
	}
	j.workload, j.grpcName = load.Workload, load.Method.Name()
	j.grpcKind = load.Method.Kind()
	return nil
}

// unreachable reports whether err is a connection that could not be made
// or a name that did not resolve.
func unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var timeout *transport.ConnectTimeoutError
	return errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial" || errors.As(err, &timeout)
}

// grpcError is a preparation error as the Go API says it: a *FieldError
// when it names a GRPC field, the command's flags in the Plan's words
// otherwise.
func grpcError(err error) error {
	return fieldError(grpcWords.Replace(apiWords(err).Error()), "GRPC.")
}

// fieldError is msg as a *FieldError when it begins with a field name
// that has one of the prefixes ("GRPC.", "LLM.", "URL"): "Field Value:
// Problem", "Field: Problem" or "Field problem…"; else a plain error.
func fieldError(msg string, prefixes ...string) error {
	named := false
	for _, p := range prefixes {
		named = named || strings.HasPrefix(msg, p)
	}
	if !named {
		return errors.New(msg)
	}
	field := msg
	if i := strings.IndexAny(msg, " :"); i >= 0 {
		field = msg[:i]
	}
	rest := msg[len(field):]
	fe := &FieldError{Field: field, Problem: strings.TrimPrefix(rest, ": ")}
	if v, problem, ok := strings.Cut(strings.TrimPrefix(rest, " "), ": "); ok && strings.HasPrefix(rest, " ") && !strings.Contains(v, " ") {
		fe.Value, fe.Problem = v, problem
	} else if strings.HasPrefix(rest, " ") {
		fe.Problem = msg
	}
	return fe
}

// apiWords says an internal error in the Go API's words: the command's
// flags become the Plan's fields.
func apiWords(err error) error {
	msg := err.Error()
	out := flagWords.Replace(msg)
	if out == msg {
		return err
	}
	return errors.New(out)
}

var flagWords = strings.NewReplacer(
	"trust its CA with --cacert FILE, or skip verification with --skipTLS", "trust its CA with Plan.CACert, or skip verification with Plan.Insecure",
	"(and trust its CA with --cacert FILE, or use --skipTLS)", "(and trust its CA with Plan.CACert, or set Plan.Insecure)",
	"--cacert", "Plan.CACert", "--cert", "Plan.Cert", "--key", "Plan.Key", "--unix-socket", "Plan.UnixSocket",
	"--connect-to", "Plan.ConnectTo", "--engine", "Plan.Engine", "--proxy", "Plan.Proxy",
	"--target-pid", "WithTargetPID", "--target-cmd", "WithTargetCmd", "--target-cgroup", "WithTargetCgroup")

// grpcWords are the gRPC flags in GRPCCall's words.
var grpcWords = strings.NewReplacer("--call ", grpcNames.Method+" ", "(add the directories of imported files with -i)",
	"(add the directories of imported files to "+grpcNames.ImportPaths+")", "--protoset", grpcNames.Protoset, "--proto", grpcNames.Protos)
