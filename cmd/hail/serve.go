package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"hail/internal/serve"
)

func newServeCmd() *cobra.Command {
	var addr string
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
  /stats                     request counts as JSON`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !strings.HasPrefix(addr, "unix:") {
				if _, _, err := net.SplitHostPort(addr); err != nil {
					return fmt.Errorf("--addr %s: write it as host:port, e.g. 127.0.0.1:8080, or unix:/path", addr)
				}
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
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			go func() { <-sigs; s.Close() }()
			if err := s.Serve(); err != nil {
				return err
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address (host:port, or unix:/path)")
	return cmd
}
