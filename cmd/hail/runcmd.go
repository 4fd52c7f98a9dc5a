package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/grpcload"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/scenario/runner"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/tui"
	"github.com/hail-loadgen/hail/result"
)

// runFlags are hail run's flags: a scenario file's values, overridden.
type runFlags struct {
	pacing      time.Duration
	c           int
	p           int
	z           time.Duration
	n           uint64
	q           float64
	timeout     time.Duration
	connTimeout time.Duration
	wait        bool
	engine      string
	base        string
	targets     []string
	vars        []string
	seed        uint64
	insecure    bool
	abortOnFail bool
	check       bool
	redact      []string
	outputFlags
	results resultFlags // report.go: --db-url, --metrics-addr, --target-pid, --shard, --start-at

	bodyFileLimit int64 // --body-file-limit (flags_request.go)

	// grpcSource finds a gRPC scenario's schema when the file gives none
	// (nil: the server's reflection, grpcload.ScenarioSource).
	grpcSource func(base *url.URL, insecure bool) (grpccall.Source, error)
}

// runFormatHelp describes hail run's --output-format values (loadFormats).
const runFormatHelp = "report format: text, json (oha's keys + hail, with hail.steps and hail.thresholds), csv (one row per request, with its step), csv-seconds (one row per second), markdown, html (a self-contained page with charts) or quiet"

func newRunCmd() *cobra.Command {
	cmd, _ := newRunCmdFlags()
	return cmd
}

// newRunCmdFlags is hail run and the flags it fills.
func newRunCmdFlags() (*cobra.Command, *runFlags) {
	f := &runFlags{engine: "auto", outputFlags: defaultOutputFlags()}
	cmd := &cobra.Command{
		Use:   "run FILE.yaml [flags]",
		Short: "run a scenario file: a weighted mix or flows of requests, captures, stages, thresholds",
		Long: `hail run loads a scenario (see docs/scenarios.md), checks all of it before sending anything,
runs it, and prints the report with one row per step and each threshold as PASS or FAIL.

Flags override the file: -c replaces connection stages with a constant number of connections,
-p sets the requests in flight on each connection of an HTTP/2 or gRPC target (streams:),
-q replaces any stages with a constant rate (open model), -z cuts the stages short or holds the
last target longer, -n bounds the number of requests. --base and --target NAME=URL point the
file's default target and its named targets elsewhere.

Steps may go to several servers (targets: in the file): REST and gRPC in one run, one engine and
connection pool per server under one schedule, the report with a row and a verdict per server.

The results flags are the load command's: --db-url and --output-format csv log every request with
its step, --metrics-addr serves live metrics, --target-pid, --target-cmd and --target-cgroup sample
the target's processes, and --shard I/N with --start-at runs one shard of a distributed run (hail
merge combines the shards).

Exit status: 0 when every threshold passed, 2 when one failed (or one with abort_on_fail stopped
the run; the report is written in full first), 1 for a bad file or flag (one line naming
FILE:LINE:COLUMN, what was expected and what was found; nothing sent).`,
		Example: `  hail run examples/vm-lifecycle.yaml
  hail run examples/vm-lifecycle-rest-vs-grpc.yaml --target rest=http://10.0.0.5:8080 --target grpc=grpc://10.0.0.5:9090
  hail run examples/vm-lifecycle.yaml --base http://127.0.0.1:9090 -z 10s -j -o result.json
  hail run scenario.yaml --var tenant=acme --check
  hail run scenario.yaml --db-url requests.db --output-format html -o report.html`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScenario(cmd, f, args)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.VarP(intValue{&f.c, "connections"}, "connections", "c", "connections (replaces the file's connections and connection stages)")
	fl.VarP(intValue{&f.p, "streams per connection"}, "http2-parallel", "p", "requests in flight on each connection of an HTTP/2 or gRPC target (replaces the file's streams; HTTP/1.1 targets carry one)")
	fl.VarP(durationValue{&f.z, zeroRun}, "duration", "z", "run for this long (cuts stages short, or holds the last target)")
	fl.VarP(countValue{&f.n}, "n-requests", "n", "stop after this many requests (10k, 2m accepted)")
	fl.VarP(rateValue{&f.q}, "query-per-second", "q", "open model at this constant rate (replaces the file's rate and stages; 0: no limit)")
	addPacingFlag(fl, &f.pacing)
	fl.VarP(zeroDurationValue{&f.timeout}, "timeout", "t", "per-request timeout (replaces the file's; 0 for none)")
	fl.Var(durationValue{&f.connTimeout, zeroConnectTimeout}, "connect-timeout", "timeout for DNS + connect + TLS handshake (default 5s)")
	fl.BoolVarP(&f.wait, "wait-ongoing-requests-after-deadline", "w", false, "let in-flight requests finish at the end instead of aborting them")
	fl.Var(choiceValue{&f.engine, []string{"auto", "net", "uring"}}, "engine", "engine: net, uring or auto (the file's engine unless given)")
	fl.StringVar(&f.base, "base", "", "base URL to send the steps to (replaces the file's base)")
	fl.StringArrayVar(&f.targets, "target", nil, "replace the URL of the file's target NAME: NAME=URL (repeatable)")
	fl.StringArrayVar(&f.vars, "var", nil, "set a variable NAME=VALUE (repeatable; replaces the file's)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed the random choices, for a repeatable run (0: the file's, else random)")
	fl.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification")
	fl.BoolVar(&f.abortOnFail, "abort-on-fail", false, "stop the run as soon as any threshold fails (after its abort_after, 1s by default)")
	fl.BoolVar(&f.check, "check", false, "check the file and print what would run, send nothing")
	fl.Var(sizeValue{&f.bodyFileLimit}, "body-file-limit", bodyFileHelp)
	fl.StringArrayVar(&f.redact, "redact", nil, "redact this query parameter in the steps' targets and the base URL in reports and logs (repeatable)")
	addOutputFlags(fl, &f.outputFlags, runFormatHelp)
	addResultFlags(fl, &f.results)
	return cmd, f
}

// loadScenario loads the file and applies the flags; it returns the
// scenario, its schedule and the plan the run goes by.
func loadScenario(cmd *cobra.Command, f *runFlags, args []string) (*scenario.Scenario, scenario.Schedule, *plan.Plan, error) {
	var none scenario.Schedule
	if len(args) != 1 {
		return nil, none, nil, fmt.Errorf("expected one scenario file: usage is hail run FILE.yaml [flags], got %d arguments", len(args))
	}
	changed := cmd.Flags().Changed
	targets := map[string]string{}
	for _, kv := range f.targets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
			return nil, none, nil, fmt.Errorf("--target %q: write it as NAME=URL, e.g. --target api=http://127.0.0.1:8080", kv)
		}
		targets[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	vars := map[string]string{}
	for _, kv := range f.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, none, nil, fmt.Errorf("--var %q: write it as NAME=VALUE", kv)
		}
		vars[strings.TrimSpace(k)] = v
	}
	sc, err := scenario.Load(args[0], scenario.LoadOptions{Vars: vars, Base: f.base, Targets: targets,
		LengthGiven: changed("duration") || changed("n-requests"), FileLimit: f.bodyFileLimit,
		GRPC: func(base *url.URL, insecure bool) (grpccall.Source, error) {
			if f.grpcSource != nil {
				return f.grpcSource(base, insecure || f.insecure)
			}
			return grpcload.ScenarioSource(setupContext(), base, insecure || f.insecure)
		}})
	if err != nil {
		return nil, none, nil, err
	}
	st := &sc.Settings
	if changed("connections") {
		st.Connections = f.c
		if st.StageKind == "connections" {
			st.Stages, st.StageKind = nil, ""
		}
	}
	if changed("http2-parallel") {
		if f.p < 1 || f.p > 100_000 {
			return nil, none, nil, fmt.Errorf("-p %d: expected streams per connection from 1 to 100000", f.p)
		}
		if err := sc.SetStreams(f.p); err != nil {
			return nil, none, nil, err
		}
	}
	if changed("query-per-second") {
		st.Rate, st.Stages, st.StageKind = f.q, nil, ""
	}
	if changed("duration") {
		st.Duration = f.z
	}
	if changed("n-requests") {
		st.Requests = f.n
	}
	if changed("timeout") {
		st.Timeout = f.timeout
	}
	if changed("connect-timeout") {
		st.ConnectTimeout = f.connTimeout
	}
	if changed("engine") {
		st.Engine = f.engine
	}
	if f.insecure {
		st.Insecure = true
	}
	if f.seed != 0 {
		sc.Reseed(f.seed)
	}
	if f.abortOnFail {
		for _, t := range sc.Thresholds {
			t.AbortOnFail = true
		}
	}
	sched := st.Schedule()
	p, err := sc.Plan(sched)
	if err != nil {
		return nil, none, nil, err
	}
	p.WaitOngoing, p.PacingGranularity = f.wait, pacing(f.pacing)
	return sc, sched, p, nil
}

// runScenario is hail run: the scenario's setup, its load, its teardown and
// the report. A run stopped early, or with failed thresholds, exits 2.
func runScenario(cmd *cobra.Command, f *runFlags, args []string) error {
	sc, sched, p, err := loadScenario(cmd, f, args)
	if err != nil {
		return err
	}
	extraSecrets = f.redact
	color, err := f.settle(&f.results, p)
	if err != nil {
		return err
	}
	sc.ShardFeeds(p.ShardIndex, p.ShardCount) // a shard takes its part of each unique feed
	if f.check {
		return printCheck(sc, sched, p)
	}
	announcePlan(cmd, p, false)
	out, err := openOutput(f.output, cmd.OutOrStdout())
	if err != nil {
		return err
	}
	defer out.Discard()
	// One dialer per target for the setup, the load and the teardown: the
	// TLS files are read and each target's name is looked up once.
	targets, err := runner.NewTargets(setupContext(), sc, p)
	if err != nil {
		return err
	}
	setup, err := runSetup(sc, targets)
	if err != nil {
		return err
	}
	workload := runner.Workload(sc, sched)
	dialer := targets.Route(workload)
	results, err := prepareResults(&f.results, f.format, p, workload, out, requestURLs{})
	if err != nil {
		return err
	}
	interrupt, stop, release := handleSignals(out) // a signal during the setup stops the load as it starts
	defer release()
	opts := run.Options{Interrupt: interrupt, SuccessBreakdown: f.successSplit, Config: scenarioConfig(sc, p, workload),
		Workload: workload, Dialer: dialer}
	res, err := execute(p, &f.outputFlags, stop, out, results, opts, liveScenario(sc))
	if err != nil {
		return err
	}
	sc.Annotate(res) // the pools as the load left them, before the teardown
	teardown := runTeardown(sc, targets)
	res.Hail.Setup, res.Hail.Teardown = setup, teardown
	failed := threshold.Evaluate(sc.Thresholds, res)
	if err := writeReport(out, res, afterRun(f.format), report.TextOptions{Unit: f.unit, Color: color}); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if teardown != nil && teardown.Failed != "" {
		fmt.Fprintf(os.Stderr, "hail: teardown stopped: %s\n", teardown.Failed)
	}
	if err := shardExit(&f.results, res); err != nil {
		return err
	}
	return scenarioExit(res, failed)
}

// runSetup runs the scenario's setup. When a setup step fails, the
// teardown cleans up what the setup made before the error is returned. A
// signal stops the setup (the run of its step in flight aborted): that is
// no error, the load then stops as it starts and the report shows the
// setup as interrupted (the signal table, signals.go).
func runSetup(sc *scenario.Scenario, t *runner.Targets) (*result.Phase, error) {
	ctx := setupContext()
	setup, err := runPhase(len(sc.Setup), func(o runner.PhaseOptions) (*result.Phase, error) {
		o.Interrupt = ctx.Done()
		return runner.Setup(ctx, sc, t, o)
	})
	if pe, failed := err.(*runner.PhaseError); failed && pe.Why == runner.Interrupted {
		return setup, nil
	}
	if err != nil {
		if _, failed := err.(*runner.PhaseError); failed && len(sc.Teardown) > 0 {
			interrupt, end := teardownSignals()
			td, _ := runPhase(len(sc.Teardown), func(o runner.PhaseOptions) (*result.Phase, error) {
				o.Interrupt = interrupt
				return runner.Teardown(context.Background(), sc, t, o)
			})
			end()
			if td != nil && td.Failed != "" {
				fmt.Fprintf(os.Stderr, "hail: teardown after the failed setup stopped: %s\n", td.Failed)
			}
		}
		return nil, err
	}
	return setup, nil
}

// runTeardown runs the scenario's teardown after the load, also when a
// signal stopped the load (or the setup); a signal during the teardown
// stops it, the run of its step in flight aborted, and the report is
// written (the signal table, signals.go). A teardown that could not run
// is said on stderr.
func runTeardown(sc *scenario.Scenario, t *runner.Targets) *result.Phase {
	interrupt, end := teardownSignals()
	defer end()
	teardown, err := runPhase(len(sc.Teardown), func(o runner.PhaseOptions) (*result.Phase, error) {
		o.Interrupt = interrupt
		return runner.Teardown(context.Background(), sc, t, o)
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "hail: teardown could not run: %v\n", err)
	}
	return teardown
}

// scenarioConfig is the configuration a scenario run's report records.
func scenarioConfig(sc *scenario.Scenario, p *plan.Plan, workload *run.Workload) map[string]any {
	cfg := map[string]any{"url": redactedURL(p.URL, false), "connections": p.Connections, "requests": p.Requests,
		"duration_seconds": p.Duration.Seconds(), "rate": p.Rate, "model": modelName(p, workload), "wait_ongoing": p.WaitOngoing,
		"engine": p.Engine, "keepalive": p.KeepAlive,
		"redirects": p.MaxRedirects, "timeout_seconds": p.Timeout.Seconds(), "scenario": redactScenarioConfig(sc.Config())}
	if p.HTTPVersion != "" {
		cfg["streams_per_connection"] = p.StreamsPerConn()
	}
	if len(sc.Origins) > 1 {
		var targets []map[string]any
		for k, o := range sc.Origins {
			targets = append(targets, map[string]any{"name": o.Name, "url": redactedURL(o.URL, false), "protocol": originProtocol(o), "share": o.Share,
				"streams_per_connection": max(sc.OriginStreams(k), 1)})
		}
		cfg["targets"] = targets
	}
	return cfg
}

// scenarioExit is how a reported scenario run ends: exit 3 when no
// request succeeded, 2 when it stopped early or when failed of its
// thresholds failed (each named with what it measured), else success.
func scenarioExit(res *result.Result, failed int) error {
	if err := noSuccess(res); err != nil {
		return err
	}
	switch {
	case res.Hail.StoppedBy != "":
		return &exitError{code: 2, msg: "stopped early: " + res.Hail.StoppedBy}
	case failed > 0:
		var names []string
		for _, t := range res.Hail.Thresholds {
			if !t.Pass {
				e := t.Expr
				if t.Step != "" {
					e += " (step " + t.Step + ")"
				}
				names = append(names, fmt.Sprintf("%s: measured %s", e, t.Measured))
			}
		}
		return &exitError{code: 2, msg: fmt.Sprintf("%d of %d thresholds failed: %s", failed, len(res.Hail.Thresholds), strings.Join(names, "; "))}
	}
	return nil
}

// liveScenario is what the live view shows of sc: its name, method mix,
// stage in progress and per-step capture misses and yields.
func liveScenario(sc *scenario.Scenario) *tui.Scenario {
	name := sc.Name
	if name == "" {
		name = sc.File
	}
	return &tui.Scenario{Name: name, Mix: sc.MethodMix(), Counters: sc.StepCounters, Targets: targetList(sc),
		Stage: func(el time.Duration) tui.Stage {
			i, of, now, target, unit := sc.StageAt(el)
			return tui.Stage{Index: i, Of: of, Now: now, Target: target, Unit: unit}
		}}
}

// targetList names the servers of a scenario whose load sends to several
// ("rest http://…, grpc h2c://…"), "" otherwise.
func targetList(sc *scenario.Scenario) string {
	ks := sc.LoadOrigins()
	if len(ks) < 2 {
		return ""
	}
	var parts []string
	for _, k := range ks {
		o := sc.Origins[k]
		parts = append(parts, o.Name+" "+redactedURL(o.URL, false)+" ("+originProtocol(o)+")")
	}
	return strings.Join(parts, ", ")
}

// originProtocol is what an origin's connections speak, as reports say it.
func originProtocol(o *scenario.Origin) string {
	switch {
	case o.HTTP2 && o.URL.Scheme == "https":
		return "h2"
	case o.HTTP2:
		return "h2c"
	}
	return "HTTP/1.1"
}

// runPhase runs a scenario's setup or teardown (f), showing its progress
// on stderr (phaseProgress).
func runPhase(steps int, f func(runner.PhaseOptions) (*result.Phase, error)) (*result.Phase, error) {
	if steps == 0 {
		return nil, nil
	}
	pp := newPhaseProgress(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
	ph, err := f(runner.PhaseOptions{Progress: pp.show})
	pp.done()
	return ph, err
}

// printCheck prints what a checked scenario would run.
func printCheck(sc *scenario.Scenario, sched scenario.Schedule, p *plan.Plan) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s: OK\n", sc.File)
	if len(sc.Origins) > 1 {
		for k, o := range sc.Origins {
			var names []string
			for _, i := range o.Steps() {
				names = append(names, sc.Steps[i].Name)
			}
			share := ""
			if o.Share > 0 {
				share = fmt.Sprintf(", %.1f%% of choices: %s", 100*o.Share, strings.Join(names, ", "))
			} else {
				share = ", setup and teardown only"
			}
			proto := originProtocol(o)
			if n := sc.OriginStreams(k); n > 1 {
				proto += fmt.Sprintf(" (%d streams per connection)", n)
			}
			fmt.Fprintf(b, "  target %-10s %s %s%s\n", o.Name, o.URL, proto, share)
		}
		fmt.Fprintf(b, "  engine %s for HTTP/1.1 targets; the run's connections are shared by the targets\n", p.Engine)
	} else {
		streams := ""
		if p.Streams > 1 {
			streams = fmt.Sprintf(", %d streams per connection", p.Streams)
		}
		fmt.Fprintf(b, "  target %s, engine %s%s\n", p.URL, p.Engine, streams)
	}
	var total float64
	for _, st := range sc.Steps {
		total += st.Weight
	}
	for _, f := range sc.Flows {
		total += f.Weight
	}
	for _, st := range sc.Steps {
		share := ""
		if st.Weight > 0 && total > 0 {
			share = fmt.Sprintf(" (%.1f%% of choices)", 100*st.Weight/total)
		}
		fmt.Fprintf(b, "  step %-16s %s %s%s\n", st.Name, st.Method, st.Target, share)
	}
	for _, f := range sc.Flows {
		fmt.Fprintf(b, "  flow %-16s weight %g\n", f.Name, f.Weight)
	}
	for _, line := range sc.CheckLines() {
		fmt.Fprintf(b, "  %s\n", line)
	}
	switch {
	case sched.ConnRamp != nil:
		fmt.Fprintf(b, "  closed model, connection stages up to %d, %s\n", sched.Connections, sched.Duration)
	case sched.Pacer != nil:
		fmt.Fprintf(b, "  open model, rate stages, %d connections, %s\n", sched.Connections, sched.Duration)
	case sched.Rate > 0:
		fmt.Fprintf(b, "  open model, %g requests/s, %d connections\n", sched.Rate, sched.Connections)
	default:
		fmt.Fprintf(b, "  closed model, %d connections\n", sched.Connections)
	}
	var at time.Duration
	for i, sg := range sched.Stages {
		fmt.Fprintf(b, "  %s\n", stageLine(i, sg, at, sc.Settings.StageKind))
		at += sg.Duration
	}
	if sched.Duration > 0 && sched.ConnRamp == nil && sched.Pacer == nil {
		fmt.Fprintf(b, "  duration %s\n", sched.Duration)
	}
	if sched.Requests > 0 {
		fmt.Fprintf(b, "  at most %d requests\n", sched.Requests)
	}
	for _, t := range sc.Thresholds {
		scope := ""
		switch {
		case t.Step != "":
			scope = " (step " + t.Step + ")"
		case t.Stage != "":
			scope = " (stage " + t.Stage + ")"
		}
		abort := ""
		if t.AbortOnFail {
			abort = ", abort on fail"
		}
		fmt.Fprintf(b, "  threshold %s%s%s\n", t.Expr, scope, abort)
	}
	_, err := os.Stdout.WriteString(b.String())
	return err
}

// stageLine describes stage i of a schedule for --check: when it runs, its
// target and ramp, its warmup and name.
func stageLine(i int, sg schedule.Stage, at time.Duration, kind string) string {
	unit := " connections"
	if kind == "rate" {
		unit = " requests/s"
	}
	ramp := "ramp to"
	if sg.Step {
		ramp = "step to"
	}
	line := fmt.Sprintf("stage %d: %s–%s, %s %g%s", i+1, at, at+sg.Duration, ramp, sg.Target, unit)
	if sg.Warmup > 0 {
		line += fmt.Sprintf(", warmup %s left out of its results", sg.Warmup)
	}
	if sg.Name != "" {
		line += " (" + sg.Name + ")"
	}
	return line
}
