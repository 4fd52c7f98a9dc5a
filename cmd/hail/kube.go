package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"sigs.k8s.io/yaml"

	"github.com/hail-loadgen/hail/internal/kube"
	"github.com/hail-loadgen/hail/internal/plan"
)

// kubeFlags are the flags hail kube's commands share: which cluster and
// namespace, and where results go.
type kubeFlags struct {
	kubeconfig, context, namespace, out string
}

func addKubeFlags(cmd *cobra.Command, f *kubeFlags) {
	fl := cmd.Flags()
	fl.StringVarP(&f.namespace, "namespace", "n", "", "the namespace (default: the kubeconfig context's)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fl.StringVar(&f.context, "context", "", "the kubeconfig context (default: its current one)")
	fl.StringVar(&f.out, "out", ".", "write the run's results in `DIR`/RUN/")
}

// runner connects to the cluster and makes a Runner writing to the
// terminal, Ctrl-C wired in.
func (f *kubeFlags) runner() (*kube.Runner, string, error) {
	cs, ns, err := kube.Connect(f.kubeconfig, f.context, f.namespace, "hail/"+plan.Version)
	if err != nil {
		return nil, "", err
	}
	r := kube.NewRunner(cs)
	r.Out = f.out
	r.Terminal = term.IsTerminal(int(os.Stderr.Fd()))
	ints := make(chan struct{}, 4)
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		for range sig {
			ints <- struct{}{}
		}
	}()
	r.Interrupts = ints
	if term.IsTerminal(int(os.Stdin.Fd())) {
		in := bufio.NewReader(os.Stdin)
		r.Ask = func(q string) (string, error) {
			fmt.Fprint(os.Stderr, q)
			return in.ReadString('\n')
		}
	}
	return r, ns, nil
}

func newKubeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "run one load over N pods of a Kubernetes cluster, started together, merged exactly",
		Long: `hail kube runs a distributed run on Kubernetes with the cluster's own API (client-go; no kubectl):
the shards are an Indexed Job, held at a start barrier until every one is ready, followed while
they run, and their results merged into one exact result. A shard that cannot start fails the run
within seconds, with the cause; a shard deleted, evicted, OOM-killed or crashed is named, and what
it wrote is merged. See docs/distributed.md.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(newKubeRunCmd(), newKubeCollectCmd(), newKubeStopCmd(), newKubeFilesCmd())
	return cmd
}

func newKubeRunCmd() *cobra.Command {
	var kf kubeFlags
	var results, image, cpu, cpuLimit, memory, name, operator string
	var shards int
	var readyTimeout, keepFor time.Duration
	var keep, detach, dryRun bool
	cmd := &cobra.Command{
		Use:   "run --shards N [flags] -- HAIL-ARGS...",
		Short: "start a distributed run, follow it, merge its shards' results",
		Long: `hail kube run starts N shards of one hail run as an Indexed Job (no shard re-runs: a failed
shard's share would start late), holds them at a start barrier until every one is ready, and starts
them together at a time published through the API server. It shows their progress, and when they end
merges their results into RUN/total.json and RUN/report.html under --out, printing the text report.

HAIL-ARGS are hail's, for the whole run (each shard takes its 1/N): load flags and a URL, a scenario
file (hail run's arguments), or hail grpc's. The files they name — bodies, scenario data, .proto
files, certificates — are shipped to the shards at the same paths (a ConfigMap up to 900 KiB,
beyond that the --results volume).

Ctrl-C asks (on a terminal) whether to stop the run — the shards stop and what they did is merged —
or detach from it (hail kube collect RUN later); without a terminal it stops it.

Exit status: 0 complete; 2 incomplete (a shard failed or was interrupted: the result is written,
marked so) or a scenario threshold failed; 3 no request succeeded; 1 the run could not start (the
cause on one line; everything made in the cluster is deleted again).`,
		Example: `  hail kube run --shards 4 --image registry.example/hail:v1 -n load -- -z 60s -q 20000 -c 400 http://svc.ns:8080/
  hail kube run --shards 3 --results pvc:hail-results -- scenario.yaml -z 2m
  hail kube run --shards 2 -- grpc --insecure --call hail.v1.Target/Echo -z 30s -q 2000 10.0.0.7:9090`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return fmt.Errorf("give hail's arguments after --: hail kube run --shards %d -- %s", shards, strings.Join(args, " "))
			}
			k, err := parseKubeArgs(args)
			if err != nil {
				return err
			}
			claim := ""
			switch {
			case results == "logs":
			case strings.HasPrefix(results, "pvc:") && len(results) > 4:
				claim = results[4:]
			default:
				return fmt.Errorf("--results %q: give logs or pvc:CLAIM (a ReadWriteMany claim writable by uid 65532)", results)
			}
			files, data, err := kube.Ship(append(k.files, k.dirs...), claim)
			if err != nil {
				return err
			}
			if name == "" {
				name = kube.DefaultName(time.Now())
			}
			if !cmd.Flags().Changed("keep-for") && claim != "" {
				keepFor = time.Hour // finished pods would hold the claim
			}
			spec := &kube.Spec{Name: name, Token: kube.NewToken(), Shards: shards, Image: image, CPU: cpu, CPULimit: cpuLimit, Memory: memory, Claim: claim,
				Args: k.args, Files: files, Duration: k.duration, ReadyTimeout: readyTimeout, KeepFor: keepFor, Created: time.Now().UTC()}
			if operator != "auto" && operator != "always" && operator != "never" {
				return fmt.Errorf("--operator %q: give auto, always or never", operator)
			}
			if dryRun {
				spec.Namespace = kf.namespace
				if err := spec.Check(); err != nil {
					return err
				}
				if operator == "always" {
					return printHailRun(spec, data)
				}
				return printObjects(spec, data)
			}
			r, ns, err := kf.runner()
			if err != nil {
				return err
			}
			spec.Namespace = ns
			r.Keep, r.Detach = keep, detach
			ctx := context.Background()
			scenario := len(k.args) > 0 && k.args[0] == "run"
			if operator == "always" && scenario {
				return fmt.Errorf("--operator always: a scenario runs as a HailRun from a ConfigMap (spec.scenario, docs/distributed.md): make that HailRun, or give --operator never")
			}
			if operator == "always" || (operator == "auto" && !scenario && !onVolume(files) && kube.ServesHailRuns(ctx, r.Client, ns)) {
				if keep {
					spec.KeepFor = -1 // the HailRun's cleanup: Keep
				}
				code, err := r.Submit(ctx, spec, data)
				if !errors.Is(err, kube.ErrNoOperator) || operator == "always" {
					return exitStatus(code, err)
				}
				fmt.Fprintf(os.Stderr, "hail kube: %v: running it directly (--operator never skips the HailRun)\n", err)
			}
			return exitStatus(r.Run(ctx, spec, data))
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	addKubeFlags(cmd, &kf)
	fl := cmd.Flags()
	fl.IntVar(&shards, "shards", 2, "how many shards (pods) share the run")
	fl.StringVar(&results, "results", "logs", "how results come back: logs (the pods' logs) or pvc:CLAIM (a shared volume, ReadWriteMany, writable by uid 65532)")
	fl.StringVar(&image, "image", "hail:local", "the image with hail (build deploy/Dockerfile; push it where the cluster pulls)")
	fl.StringVar(&cpu, "cpu", "500m", "CPU request per shard: the scheduler must fit every shard at once")
	fl.StringVar(&cpuLimit, "cpu-limit", "", "CPU limit per shard (default none: a limit throttles the generator)")
	fl.StringVar(&memory, "memory", "256Mi", "memory request and limit per shard (hail's GOMEMLIMIT follows it)")
	fl.StringVar(&name, "run", "", "the run's name, a DNS label (default hail-YYYYmmdd-HHMMSS)")
	fl.DurationVar(&readyTimeout, "ready-timeout", 3*time.Minute, "how long every shard may take to be ready (scheduled, image pulled, started); nothing is sent before")
	fl.DurationVar(&keepFor, "keep-for", 24*time.Hour, "how long Kubernetes keeps a finished run's Job and pods (their logs) when hail kube does not delete them (detached; 1h with a volume)")
	fl.BoolVar(&keep, "keep", false, "keep the run's Job, pods and ConfigMap after collecting it (else deleted: the results are here)")
	fl.BoolVar(&detach, "detach", false, "return once the shards have started; collect the run later with hail kube collect RUN")
	fl.StringVar(&operator, "operator", "auto", "auto: run it as a HailRun, for hail operator, when the cluster serves HailRuns (the operator's chart is installed), it is not a scenario and no file goes on the volume; always; never (a Job of hail kube's own)")
	fl.BoolVar(&dryRun, "dry-run", false, "print the objects the run would create, as YAML, and exit (nothing is sent to a cluster)")
	return cmd
}

// exitStatus is a run's or a collect's end as hail's error: its status,
// or the error that kept it from one.
func exitStatus(code int, err error) error {
	switch {
	case err != nil:
		return err
	case code != 0:
		return &exitError{code: code}
	}
	return nil
}

// onVolume reports whether a file goes on the results volume.
func onVolume(files []kube.File) bool {
	for _, f := range files {
		if f.OnVolume {
			return true
		}
	}
	return false
}

// printHailRun prints the HailRun of a run (and its files' ConfigMap) as YAML.
func printHailRun(s *kube.Spec, data map[string][]byte) error {
	objs := []any{s.HailRun()}
	if len(s.Files) > 0 {
		cm := s.ConfigMap(data)
		cm.Name += "-files"
		delete(cm.Data, "run.json")
		objs = append(objs, cm)
	}
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Println("---")
		}
		os.Stdout.Write(b)
	}
	return nil
}

// printObjects prints a run's ConfigMap and Job as YAML.
func printObjects(s *kube.Spec, data map[string][]byte) error {
	for i, o := range []any{s.ConfigMap(data), s.Job()} {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Println("---")
		}
		os.Stdout.Write(b)
	}
	return nil
}

// isHailRun reports whether run name is a HailRun (one hail kube run
// submitted to hail operator).
func isHailRun(r *kube.Runner, ns, name string) bool {
	var hr kube.HailRun
	return r.Client.Get(context.Background(), kube.HailRuns, ns, name, &hr) == nil
}

func newKubeCollectCmd() *cobra.Command {
	var kf kubeFlags
	var keep bool
	cmd := &cobra.Command{
		Use:   "collect RUN",
		Short: "wait for a detached run to end, then merge its shards' results",
		Long: `hail kube collect waits for the run (started with hail kube run, and detached) to end, then
collects and merges its shards' results as hail kube run does, into --out/RUN/. Ctrl-C while it waits
leaves the run going. Exit status as hail kube run's.`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ns, err := kf.runner()
			if err != nil {
				return err
			}
			r.Keep = keep
			if isHailRun(r, ns, args[0]) {
				return exitStatus(r.CollectHailRun(context.Background(), ns, args[0]))
			}
			s, err := r.LoadSpec(context.Background(), ns, args[0])
			if err != nil {
				return err
			}
			return exitStatus(r.Collect(context.Background(), s))
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	addKubeFlags(cmd, &kf)
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the run's Job, pods and ConfigMap after collecting it")
	return cmd
}

func newKubeStopCmd() *cobra.Command {
	var kf kubeFlags
	cmd := &cobra.Command{
		Use:   "stop RUN",
		Short: "stop a detached run: its shards stop and write what they did",
		Long: `hail kube stop tells every running shard of the run to stop, as SIGTERM does: each writes the
result of what it did (marked interrupted). The pods stay: hail kube collect RUN merges them.`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ns, err := kf.runner()
			if err != nil {
				return err
			}
			if isHailRun(r, ns, args[0]) {
				if err := r.StopHailRun(context.Background(), ns, args[0], "hail kube stop"); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "hail kube: HailRun %s: hail operator stops its shards and merges what they did; hail kube collect %s -n %s writes it here\n", args[0], args[0], ns)
				return nil
			}
			s, err := r.LoadSpec(context.Background(), ns, args[0])
			if err != nil {
				return err
			}
			return r.Stop(context.Background(), s)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	addKubeFlags(cmd, &kf)
	return cmd
}

// newKubeFilesCmd is the volume helper hail kube runs in a pod (FilesPod):
// it serves a run's files on its results volume through the pod proxy.
func newKubeFilesCmd() *cobra.Command {
	var dir, prefix, addr string
	cmd := &cobra.Command{
		Use:    "files --dir DIR --prefix RUN. --addr ADDR",
		Short:  "serve a run's files on its results volume (hail kube runs it in a pod)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %v", addr, err)
			}
			s := &kube.FilesServer{Dir: dir, Prefix: prefix, Token: os.Getenv(kube.TokenEnv)}
			return s.Serve(ln)
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.Flags().StringVar(&dir, "dir", "/results", "the volume's directory")
	cmd.Flags().StringVar(&prefix, "prefix", "", "serve only names starting with this (the run's name and a dot)")
	cmd.Flags().StringVar(&addr, "addr", "0.0.0.0:8080", "listen address")
	return cmd
}
