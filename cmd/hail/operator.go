package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/kube"
	"github.com/hail-loadgen/hail/internal/plan"
)

func newOperatorCmd() *cobra.Command {
	var kubeconfig, kctx, namespaces, image, leaseNS, leaseName, identity, metricsAddr string
	var leaseDuration time.Duration
	cmd := &cobra.Command{
		Use:   "operator [flags]",
		Short: "run HailRun objects: distributed runs declared in Kubernetes",
		Long: `hail operator runs in the cluster (deploy/helm/hail-operator, or deploy/kubernetes/operator.yaml)
and runs every HailRun of its namespaces as hail kube run does: it checks the run's arguments with
hail's own parsing, makes the shards' Indexed Job (owned by the HailRun: deleting the HailRun stops
and deletes it), holds the shards at the start barrier, names how each ended, merges their results,
and writes the phase, the shards' states, the merged summary and verdict in the HailRun's status.
One replica leads (a Lease); another takes over when it goes, adopting the runs under way.
It serves its metrics on --metrics-addr (/metrics, Prometheus text) and /healthz. See docs/distributed.md.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if identity == "" {
				identity, _ = os.Hostname()
			}
			if leaseNS == "" {
				leaseNS = os.Getenv("POD_NAMESPACE")
			}
			cs, ns, err := kube.Connect(kubeconfig, kctx, leaseNS, "hail-operator/"+plan.Version)
			if err != nil {
				return err
			}
			o := &kube.Operator{Client: cs, Image: image, Validate: validateRunArgs, Identity: identity,
				LeaseNamespace: ns, LeaseName: leaseName, LeaseDuration: leaseDuration, Log: os.Stderr}
			for _, n := range strings.Split(namespaces, ",") {
				if n = strings.TrimSpace(n); n != "" {
					o.Namespaces = append(o.Namespaces, n)
				}
			}
			ln, err := net.Listen("tcp", metricsAddr)
			if err != nil {
				return fmt.Errorf("--metrics-addr %s: %v", metricsAddr, err)
			}
			mux := http.NewServeMux()
			mux.Handle("/metrics", o.MetricsHandler())
			mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
			go srv.Serve(ln)
			defer srv.Close()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := o.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig file (default: in the cluster, its service account; else $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&kctx, "context", "", "the kubeconfig context (default: its current one)")
	fl.StringVar(&namespaces, "namespaces", "", "run the HailRuns of these namespaces, comma-separated (default: every namespace)")
	fl.StringVar(&image, "image", "hail:local", "the shards' image when a HailRun names none")
	fl.StringVar(&leaseNS, "lease-namespace", "", "the leader Lease's namespace (default: $POD_NAMESPACE, else the kubeconfig context's)")
	fl.StringVar(&leaseName, "lease-name", "hail-operator", "the leader Lease's name")
	fl.StringVar(&identity, "identity", "", "this replica's name in the Lease (default: the host name, the pod's)")
	fl.DurationVar(&leaseDuration, "lease-duration", 15*time.Second, "how long a leader that stopped renewing holds the Lease")
	fl.StringVar(&metricsAddr, "metrics-addr", "0.0.0.0:8080", "serve /metrics and /healthz on `ADDR`")
	return cmd
}

// validateRunArgs checks a HailRun's hail arguments as hail kube run
// checks its own — the command they are for parses them, a scenario is
// loaded with its files — and returns the run's length when known.
func validateRunArgs(args []string) (time.Duration, error) {
	k, err := parseKubeArgs(args)
	if err != nil {
		return 0, err
	}
	return k.duration, nil
}
