package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"hail/internal/plan"
	"hail/internal/report"
	"hail/internal/run"
	"hail/internal/serve"
)

func newDemoCmd() *cobra.Command {
	var dur time.Duration = 3 * time.Second
	var conns = 32
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "start the built-in target in-process, load it for a few seconds, print the report",
		Long: `hail demo starts 'hail serve' on a free loopback port, then runs two short tests against it:
a closed-model run (as fast as -c connections go) and an open-model run at a fixed rate against
an endpoint with a 1 ms / 20 ms delay mix, whose latency is measured from intended send times.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			s := serve.New(serve.Config{Addr: "127.0.0.1:0"})
			a, err := s.Listen()
			if err != nil {
				return fmt.Errorf("demo: cannot start the built-in server: %v", err)
			}
			go s.Serve()
			defer s.Close()
			color := os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(os.Stdout.Fd()))
			base := "http://" + a.String()
			for i, step := range []struct {
				title string
				path  string
				rate  float64
			}{
				{fmt.Sprintf("closed model: %d connections, %s, GET /", conns, dur), "/", 0},
				{fmt.Sprintf("open model: 2000 req/s, %s, GET /?delay=1ms:95,20ms:5", dur), "/?delay=1ms:95,20ms:5", 2000},
			} {
				if i > 0 {
					fmt.Println()
				}
				fmt.Printf("== hail demo %d/2: %s against %s\n\n", i+1, step.title, base)
				u, _ := url.Parse(base + step.path)
				p := &plan.Plan{URL: u, Method: "GET", Connections: conns, Duration: dur, Rate: step.rate,
					KeepAlive: true, Compression: true, MaxRedirects: 10, ConnectTimeout: 5 * time.Second, Engine: "auto"}
				res, err := run.Run(context.Background(), p, run.Options{})
				if err != nil {
					return err
				}
				if err := report.WriteText(os.Stdout, res, report.TextOptions{Color: color}); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&dur, "duration", dur, "length of each demo run")
	cmd.Flags().IntVar(&conns, "connections", conns, "connections of each demo run")
	return cmd
}
