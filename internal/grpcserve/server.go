// Package grpcserve is hail serve --grpc: a small gRPC target for demos,
// tests and benchmarks, on grpc-go. hail.v1.Target echoes with a chosen
// delay and status mix in all four streaming kinds, hail.v1.Items is a
// create/query/destroy resource API, grpc.health.v1.Health answers SERVING,
// and server reflection (v1 and v1alpha) describes them all. The services
// are built from hail.proto at start (no generated code): its messages are
// dynamic. The server counts calls and messages itself, so tests can hold
// a load generator's counts against the server's own.
package grpcserve

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	rv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
)

// DefaultAddr is the default listen address (loopback only).
const DefaultAddr = "127.0.0.1:9090"

// Config configures a Server. The zero value is usable.
type Config struct {
	// Addr is the listen address, default DefaultAddr; "unix:/path" is a
	// unix socket.
	Addr string
	// TLS, when set, serves TLS (ALPN h2) instead of plaintext h2c.
	TLS *tls.Config
	// NoReflection leaves the reflection service out (as many production
	// servers do), so clients need the .proto.
	NoReflection bool
}

// Server is the gRPC target. Create it with New, then Listen and Serve;
// Close stops it. Its counters are safe for concurrent use.
type Server struct {
	cfg   Config
	gs    *grpc.Server
	sch   *schema
	items itemStore

	mu sync.Mutex
	ln net.Listener

	counts counts
}

// New builds the server and its services.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	sch, err := loadSchema()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, sch: sch}
	s.items.init()
	opts := []grpc.ServerOption{grpc.StatsHandler(&s.counts)}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	s.gs = grpc.NewServer(opts...)
	s.gs.RegisterService(s.targetDesc(), s)
	s.gs.RegisterService(s.itemsDesc(), s)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("hail.v1.Target", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("hail.v1.Items", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s.gs, hs)
	if !cfg.NoReflection {
		ro := reflection.ServerOptions{Services: s.gs, DescriptorResolver: resolver{sch.files}}
		rv1.RegisterServerReflectionServer(s.gs, reflection.NewServerV1(ro))
		rv1alpha.RegisterServerReflectionServer(s.gs, reflection.NewServer(ro))
	}
	return s, nil
}

// Listen binds the address and returns it (with the port chosen for ":0");
// "unix:/path" listens on a unix socket.
func (s *Server) Listen() (net.Addr, error) {
	network, addr := "tcp", s.cfg.Addr
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, addr = "unix", path
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	return ln.Addr(), nil
}

// Serve serves until Close; it calls Listen first if needed.
func (s *Server) Serve() error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
		s.mu.Lock()
		ln = s.ln
		s.mu.Unlock()
	}
	err := s.gs.Serve(ln)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Close stops the server at once: calls in flight end.
func (s *Server) Close() { s.gs.Stop() }

// Calls is how many calls of method ("/hail.v1.Target/Echo") started.
func (s *Server) Calls(method string) int64 { return s.counts.calls(method) }

// TotalCalls is how many calls of any method started.
func (s *Server) TotalCalls() int64 { return s.counts.total.Load() }

// Messages are the request messages received and response messages sent.
func (s *Server) Messages() (received, sent int64) { return s.counts.recv.Load(), s.counts.sent.Load() }

// Metadata is how many calls carried each value of the metadata key.
func (s *Server) Metadata(key string) map[string]int64 { return s.counts.metadata(key) }

// Reset zeroes the counts.
func (s *Server) Reset() { s.counts.reset() }

// Methods are the methods called so far, sorted.
func (s *Server) Methods() []string {
	var out []string
	s.counts.byMethod.Range(func(k, _ any) bool {
		out = append(out, k.(string))
		return true
	})
	sort.Strings(out)
	return out
}

// reservedMetadata are headers every call has, not metadata a client chose.
func reservedMetadata(k string) bool {
	return strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") || k == "content-type" || k == "user-agent" || k == "te"
}

// Handler serves the same services through net/http (grpc-go's
// ServeHTTP), for an HTTP/2 server that routes gRPC beside other
// handlers on one port. It is slower than Serve's own transport.
func (s *Server) Handler() http.Handler { return s.gs }
