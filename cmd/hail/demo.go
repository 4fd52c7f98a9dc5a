package main

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/target"
)

func newDemoCmd() *cobra.Command {
	var dur time.Duration = 3 * time.Second
	var conns = 32
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "start the built-in target in-process, load it for a few seconds, print the report",
		Long: `hail demo starts 'hail serve' (as a child process) on a free loopback port, then runs two short tests against it:
a closed-model run (as fast as -c connections go) and an open-model run at a fixed rate against
an endpoint with a 1 ms / 20 ms delay mix, whose latency is measured from intended send times.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			addr, pid, stopServer, err := startServeChild()
			if err != nil {
				return fmt.Errorf("demo: cannot start the built-in server: %v", err)
			}
			defer stopServer()
			color := os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(os.Stdout.Fd()))
			base := "http://" + addr
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
					KeepAlive: true, Compression: true, MaxRedirects: 10, ConnectTimeout: plan.DefaultConnectTimeout, Engine: plan.EngineAuto}
				// Its own server is the target: its CPU is the target's, never "other processes".
				res, err := run.Run(context.Background(), p, run.Options{Target: target.Spec{PIDs: []int{pid}}, TargetSource: "hail demo"})
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

// startServeChild runs 'hail serve' on a free loopback port as a child
// process, so the demo's generator CPU figures are hail's alone, and
// returns its address and pid.
func startServeChild() (addr string, pid int, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", 0, nil, err
	}
	cmd := exec.Command(exe, "serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "hail serve: listening on "); ok {
				lines <- a
			}
		}
	}()
	select {
	case addr = <-lines:
		return addr, cmd.Process.Pid, stop, nil
	case <-time.After(10 * time.Second):
		stop()
		return "", 0, nil, fmt.Errorf("the server did not report its address within 10s")
	}
}
