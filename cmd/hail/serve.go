package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/grpcserve"
	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/llmserve"
	"github.com/hail-loadgen/hail/internal/serve"
)

func newServeCmd() *cobra.Command {
	var addr, h3addr, grpcAddr string
	var openai *openaiFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "run the built-in target server (fault injection via query parameters)",
		Long: `hail serve runs a fast HTTP/1.1 target for calibration, demos and tests.

  GET /                      200 "hello world\n"
  ?delay=5ms | 2ms:90,50ms:10   fixed or distributed delay
  ?status=503:10             10% of responses get 503
  ?size=1k                   body size
  ?stall=2s@4s               hold every response for 2s, 4s after the first such request
  ?close=5                   close 5% of connections after the response
  ?chunked=1                 chunked body
  /echo                      echo the request body (?headers=1: the request head)
  POST /items, GET|DELETE /items/{id}   a small JSON resource API
  /stats                     request counts as JSON

With --grpc ADDR it also serves gRPC (plaintext h2c) with server reflection: hail.v1.Target
(Echo, Collect, Expand, Chat: delay, status mix, size, count in the request), hail.v1.Items
(Create, Get, Delete) and grpc.health.v1.Health. See docs/grpc.md.
` + openaiHelp,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOpenAIFlags(cmd, openai); err != nil {
				return err
			}
			if !strings.HasPrefix(addr, "unix:") {
				if _, _, err := net.SplitHostPort(addr); err != nil {
					return fmt.Errorf("--addr %s: write it as host:port, e.g. 127.0.0.1:8080, or unix:/path", addr)
				}
			}
			if openai.on {
				if !cmd.Flags().Changed("addr") {
					addr = llmserve.DefaultAddr
				}
				return runOpenAI(openai, addr, grpcAddr, h3addr)
			}
			if !serve.IsLoopback(addr) {
				fmt.Fprintf(os.Stderr, "hail: warning: --addr %s is reachable from other machines; use 127.0.0.1 unless you mean it\n", addr)
			}
			s := serve.New(serve.Config{Addr: addr})
			a, err := s.Listen()
			if err != nil {
				return fmt.Errorf("--addr %s: %v", addr, err)
			}
			fmt.Fprintf(os.Stderr, "hail serve: listening on %s\n", a)
			return serveUntilSignal(s, grpcAddr, h3addr)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address (host:port, or unix:/path)")
	cmd.Flags().StringVar(&grpcAddr, "grpc", "", "also serve gRPC (h2c, with reflection) on this TCP address, e.g. 127.0.0.1:9090")
	cmd.Flags().StringVar(&h3addr, "h3", "", "also serve HTTP/3 (QUIC) on this UDP address, e.g. 127.0.0.1:8443, with a self-signed certificate")
	openai = addOpenAIFlags(cmd.Flags())
	return cmd
}

// serveUntilSignal starts the --grpc and --h3 targets beside s (bound
// already), closing s if one cannot start, then serves s until INT or TERM
// closes it and returns Serve's error; the other targets stop when it
// returns.
func serveUntilSignal(s interface {
	Serve() error
	Close() error
}, grpcAddr, h3addr string) error {
	for _, o := range []struct {
		addr  string
		start func(addr string) (stop func(), err error)
	}{{grpcAddr, startGRPC}, {h3addr, startH3}} {
		if o.addr == "" {
			continue
		}
		stop, err := o.start(o.addr)
		if err != nil {
			s.Close()
			return err
		}
		defer stop()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() { <-sigs; s.Close() }()
	return s.Serve()
}

// startH3 serves HTTP/3 on the UDP address addr (the h3serve target: GET /
// is "hello world\n", with ?delay, ?status, ?size and /echo) and writes its
// self-signed certificate where hail's --cacert can read it. stop ends the
// server and removes the certificate file.
func startH3(addr string) (stop func(), err error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--h3 %s: write it as host:port, e.g. 127.0.0.1:8443", addr)
	}
	if !serve.IsLoopback(addr) {
		fmt.Fprintf(os.Stderr, "hail: warning: --h3 %s is reachable from other machines; use 127.0.0.1 unless you mean it\n", addr)
	}
	h3 := h3serve.New(h3serve.Config{Addr: addr})
	a, err := h3.Listen()
	if err != nil {
		return nil, fmt.Errorf("--h3 %s: %v", addr, err)
	}
	go h3.Serve()
	ca := filepath.Join(os.TempDir(), "hail-h3-"+strings.ReplaceAll(a.String(), ":", "_")+".pem")
	if err := os.WriteFile(ca, h3.CertPEM(), 0o644); err != nil {
		h3.Close()
		return nil, fmt.Errorf("--h3: writing the certificate: %v", err)
	}
	fmt.Fprintf(os.Stderr, "hail serve: HTTP/3 on udp %s (self-signed: hail --http-version 3 --cacert %s https://%s/)\n", a, ca, a)
	return func() { h3.Close(); os.Remove(ca) }, nil
}

// startGRPC serves the gRPC target (grpcserve) on addr. stop ends it.
func startGRPC(addr string) (stop func(), err error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--grpc %s: write it as host:port, e.g. 127.0.0.1:9090", addr)
	}
	if !serve.IsLoopback(addr) {
		fmt.Fprintf(os.Stderr, "hail: warning: --grpc %s is reachable from other machines; use 127.0.0.1 unless you mean it\n", addr)
	}
	g, err := grpcserve.New(grpcserve.Config{Addr: addr})
	if err != nil {
		return nil, fmt.Errorf("--grpc: %v", err)
	}
	a, err := g.Listen()
	if err != nil {
		return nil, fmt.Errorf("--grpc %s: %v", addr, err)
	}
	go g.Serve()
	fmt.Fprintf(os.Stderr, "hail serve: gRPC on %s (h2c, reflection: hail grpc --insecure --call hail.v1.Target/Echo %s)\n", a, a)
	return g.Close, nil
}
