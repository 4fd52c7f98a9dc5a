// Package grpcload prepares a gRPC load, what hail grpc and package hail's
// Plan.GRPC send: the schema (compiled from .proto files, read from a
// protoset, or asked of the server by reflection after a probe that
// catches TLS mismatches), the method, and the request data checked
// against the method's input message and encoded once per payload (or,
// with templates, per call by a one-step scenario). Every call is then an
// HTTP/2 POST of framed messages on the h2 engine (docs/grpc.md).
//
// Its messages name the inputs as the caller does (Names): the command's
// flags, or the Go API's fields.
package grpcload

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
)

// Call is what to call and with what.
type Call struct {
	// Method is package.Service/Method (or package.Service.Method).
	Method string
	// Data is the request as JSON: an object, or an array of messages
	// (used in turn by unary and server-streaming calls, one stream's
	// messages for client and bidi streaming); templates allowed. Nil:
	// an empty message.
	Data []byte
	// Binary is the request as serialized protobuf: length-delimited
	// messages, or one message. At most one of Data and Binary.
	Binary []byte
	// BinaryRoom says Binary begins with grpccall.PrefixLen bytes of room
	// (bodyfile.Map's) before the serialized messages: one message sent
	// alone is then framed where it is, never copied (a -B file of
	// hundreds of MB costs its size once).
	BinaryRoom bool
	// Metadata is sent with every call (pairs from CheckMetadata);
	// ReflectMetadata with the reflection requests.
	Metadata        [][2]string
	ReflectMetadata [][2]string
	// Protos are .proto files that define the service, compiled with
	// ImportPaths; Protoset a compiled FileDescriptorSet. Neither: server
	// reflection.
	Protos, ImportPaths []string
	Protoset            string
	// StreamCount is the messages per client or bidi stream, cycling
	// through Data's (0: Data's count).
	StreamCount int
	// FileLimit bounds the protoset file read (≤ 0: bodyfile's default).
	FileLimit int64
	// Names name the inputs in messages.
	Names Names
}

// Names are how messages name a Call's inputs ("-d", "GRPC.Data").
type Names struct {
	Method, Data, Binary, Metadata, StreamCount, Protos, Protoset, ImportPaths string
}

// Load is a prepared gRPC load.
type Load struct {
	// Method is the method called, Source where its schema came from.
	Method *grpccall.Method
	Source grpccall.Source
	// Workload sends calls whose data or metadata has templates (nil:
	// the plan's Bodies are the calls' payloads).
	Workload *run.Workload
	// Messages is the request messages per call.
	Messages int
	// Listing, for a Call without a Method, is every method of Source
	// with its request and response types and streaming kind (what hail
	// grpc prints instead of a run); Method is then nil.
	Listing string
}

// Prepare checks everything before a call is sent: the schema, the
// method and the data against the method's input message. p is the
// run's plan (its URL the server and the method's path, HTTP/2, POST);
// Prepare sets its gRPC headers and bodies. Without a Method, it lists
// the source's methods instead (Load.Listing; .proto files and protosets
// without asking the server). Cancelling ctx stops the probe and the
// reflection. Each problem is one line.
func Prepare(ctx context.Context, p *plan.Plan, c Call) (*Load, error) {
	n := c.Names
	if _, _, err := grpccall.ParseCall(c.Method); err != nil && c.Method != "" {
		return nil, renamed(err, n)
	}
	if c.Data != nil && c.Binary != nil {
		return nil, fmt.Errorf("%s and %s each give the request: use one", n.Data, n.Binary)
	}
	g := &Load{}
	var err error
	// The schema: local files first, so that their problems need no server.
	switch {
	case c.Protoset != "" && len(c.Protos) > 0:
		return nil, fmt.Errorf("%s and %s each give the schema: use one", n.Protos, n.Protoset)
	case c.Protoset != "":
		g.Source, err = grpccall.FromProtoset(c.Protoset, c.FileLimit)
	case len(c.Protos) > 0:
		g.Source, err = grpccall.FromProto(c.Protos, c.ImportPaths)
	case len(c.ImportPaths) > 0:
		return nil, fmt.Errorf("%s gives the directories of %s's imports: add %s FILE", n.ImportPaths, n.Protos, n.Protos)
	}
	if err != nil {
		return nil, err
	}
	if g.Source != nil && c.Method != "" {
		if err := g.resolve(p, c); err != nil {
			return nil, err
		}
	}
	if g.Source != nil && c.Method == "" { // the files list their methods without the server
		return g, g.list()
	}
	target := p.URL.Host
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return nil, err
	}
	probe, cancel := context.WithTimeout(ctx, p.ConnectTimeout+5*time.Second)
	defer cancel()
	if err := grpccall.Probe(probe, topt, target); err != nil {
		return nil, err
	}
	if g.Source == nil {
		if g.Source, err = ReflectionSource(ctx, p, target, c.ReflectMetadata); err != nil {
			return nil, err
		}
	}
	if c.Method == "" {
		return g, g.list()
	}
	if g.Method == nil {
		if err := g.resolve(p, c); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// list fills g.Listing with every method of g's source (a Call without a
// Method).
func (g *Load) list() error {
	methods, err := grpccall.List(g.Source)
	if err != nil {
		return err
	}
	g.Listing = grpccall.ListText(g.Source, methods)
	return nil
}

// renamed phrases an error of grpccall, which names the method by the
// command's flag, with the caller's name for it.
func renamed(err error, n Names) error {
	if msg, ok := strings.CutPrefix(err.Error(), "--call "); ok && n.Method != "--call" {
		return fmt.Errorf("%s %s", n.Method, msg)
	}
	return err
}

// Headers are a call's HTTP/2 headers: gRPC's own, then the metadata.
func Headers(p *plan.Plan, meta [][2]string) [][2]string {
	h := [][2]string{{"Content-Type", "application/grpc"}, {"TE", "trailers"}}
	if p.Timeout > 0 {
		h = append(h, [2]string{"grpc-timeout", grpccall.Timeout(p.Timeout)})
	}
	return append(h, meta...)
}

// resolve finds the method in the source and encodes the data for it.
func (g *Load) resolve(p *plan.Plan, c Call) error {
	n := c.Names
	m, err := grpccall.Resolve(g.Source, c.Method)
	if err != nil {
		return renamed(err, n)
	}
	g.Method = m
	if c.StreamCount < 0 || c.StreamCount > 0 && !m.ClientStreams() {
		return fmt.Errorf("%s %d: %s is %s; the count applies to client and bidi streaming calls", n.StreamCount, c.StreamCount, m.Name(), m.Kind())
	}
	p.Headers = Headers(p, c.Metadata)
	if c.Binary != nil {
		b := c.Binary
		if c.BinaryRoom {
			b = b[grpccall.PrefixLen:]
		}
		msgs, err := grpccall.SplitBinary(m.Desc.Input(), b)
		if err != nil {
			return fmt.Errorf("%s: %v", n.Binary, err)
		}
		if c.BinaryRoom && len(msgs) == 1 && (!m.ClientStreams() || c.StreamCount <= 1) {
			p.Bodies, g.Messages = [][]byte{grpccall.FrameInPlace(c.Binary)}, 1
			return p.Validate()
		}
		p.Bodies, g.Messages = bodies(msgs, m.ClientStreams(), c.StreamCount)
		return p.Validate()
	}
	if strings.Contains(string(c.Data), "{{") || templated(c.Metadata) {
		w, msgs, err := templatedWorkload(p, g, c)
		if err != nil {
			return err
		}
		g.Workload, g.Messages = w, msgs
		return p.Validate()
	}
	msgs, err := grpccall.SplitData(c.Data)
	if err != nil {
		return fmt.Errorf("%s: %v", n.Data, err)
	}
	var encoded [][]byte
	for i, js := range msgs {
		b, err := grpccall.Encode(m.Desc.Input(), js)
		if err != nil {
			where := n.Data
			if len(msgs) > 1 {
				where += fmt.Sprintf(" [%d]", i)
			}
			return fmt.Errorf("%s: %v", where, err)
		}
		encoded = append(encoded, b)
	}
	p.Bodies, g.Messages = bodies(encoded, m.ClientStreams(), c.StreamCount)
	return p.Validate()
}

// bodies frames encoded messages into request bodies: one body per
// message (used in turn) for unary and server-streaming calls, one body
// holding the stream's messages for client and bidi streaming (count of
// them when count > 0, cycling).
func bodies(encoded [][]byte, clientStreams bool, count int) ([][]byte, int) {
	if !clientStreams {
		out := make([][]byte, len(encoded))
		for i, b := range encoded {
			out[i] = grpccall.AppendFrame(nil, b)
		}
		return out, 1
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

// CheckMetadata checks metadata (key: value) and returns it as headers in
// key order: keys become lower-case header names; values of keys ending
// in -bin are sent base64-encoded, as gRPC requires. what names the
// metadata in messages.
func CheckMetadata(m map[string]string, what string) ([][2]string, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][2]string
	for _, k := range keys {
		lk := strings.ToLower(k)
		if !isToken(lk) || strings.HasPrefix(lk, "grpc-") && lk != "grpc-trace-bin" || lk == "content-type" || lk == "te" {
			return nil, fmt.Errorf("%s: metadata key %q: expected a lower-case token that gRPC does not reserve (not grpc-*, content-type, te)", what, k)
		}
		v := m[k]
		if strings.HasSuffix(lk, "-bin") {
			v = base64.RawStdEncoding.EncodeToString([]byte(v))
		} else if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("%s: metadata %q: the value may not contain a line break", what, k)
		}
		out = append(out, [2]string{lk, v})
	}
	return out, nil
}

func templated(meta [][2]string) bool {
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
