package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/reqgen"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// loadFlags are oha's flags (same names, meanings and defaults where
// sensible), one group per file: flags_load.go (how much load),
// flags_urls.go (which URLs), flags_request.go (what request),
// flags_transport.go (proxy, protocol, connections, TLS, engine),
// flags_output.go (the report, the live view, --debug) and
// flags_results.go (the request log, metrics, target, shards).
type loadFlags struct {
	model modelFlags
	urls  urlFlags
	req   requestFlags
	tr    transportFlags
	strm  streamFlags
	outputFlags
	dbg         debugFlags
	results     resultFlags
	completions string // oha's hidden --completions SHELL
}

func newRootCmd() *cobra.Command {
	f := &loadFlags{outputFlags: defaultOutputFlags()}
	cmd := &cobra.Command{
		Use:   "hail [flags] URL",
		Short: "hail is an HTTP load generator that measures latency truthfully",
		Long: `hail sends HTTP requests to URL and reports latency, throughput, status codes and errors.

Closed model (default): -c connections each send the next request when the previous one completes.
Open model (-q): requests are scheduled at fixed times and latency counts from each request's
intended send time, so a stalled server cannot hide (coordinated-omission correction, as wrk2).

Subcommands: 'hail serve' runs the built-in target; 'hail demo' loads it in the closed and
the open model and shows what each measured.`,
		Example: `  hail -n 10k -c 64 http://127.0.0.1:8080/
  hail -z 30s -q 5000 -c 200 --no-tui -j -o result.json http://127.0.0.1:8080/items
  hail demo`,
		Version:       plan.Version,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLoad(cmd, f, args)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.SuggestionsMinimumDistance = 2 // hail srve: did you mean serve (mistypedCommand)
	cmd.SetVersionTemplate("hail {{.Version}}\n")
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) { writeHelp(c.OutOrStdout(), c) })
	fl := cmd.Flags()
	fl.SortFlags = false
	addModelFlags(fl, &f.model)
	addURLFlags(fl, &f.urls)
	addRequestFlags(fl, &f.req)
	addStreamFlags(fl, &f.strm, true)
	addTransportFlags(fl, &f.tr)
	addOutputFlags(fl, &f.outputFlags, loadFormatHelp)
	addResultFlags(fl, &f.results)
	addDebugFlags(fl, &f.dbg)
	fl.BoolP("version", "V", false, "print the version")
	fl.StringVar(&f.completions, "completions", "", "print the shell completion script (bash, zsh, fish, powershell): as hail completion SHELL")
	_ = fl.MarkHidden("completions")
	return cmd
}

// buildPlan turns the flags and URL into a validated plan.
func buildPlan(cmd *cobra.Command, f *loadFlags, args []string) (*plan.Plan, *reqgen.SigV4, error) {
	if len(args) == 0 {
		return nil, nil, fmt.Errorf("no URL given: usage is hail [flags] URL, e.g. hail -n 1000 http://127.0.0.1:8080/ (or try 'hail demo')")
	}
	if err := mistypedCommand(cmd, args[0]); err != nil {
		return nil, nil, err
	}
	if len(args) > 1 {
		return nil, nil, fmt.Errorf("one URL expected, got %d arguments (%s): quote the URL if it contains spaces or &", len(args), strings.Join(args, " "))
	}
	raw, err := f.urls.load(cmd, args[0])
	if err != nil {
		return nil, nil, err
	}
	if !strings.Contains(raw, "://") {
		return nil, nil, fmt.Errorf("URL %q has no scheme: write http://%s or https://%s", raw, raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("URL %q is not valid: %v", raw, unwrapURLErr(err))
	}
	p := &plan.Plan{URL: u}
	if err := f.model.apply(cmd, p); err != nil {
		return nil, nil, err
	}
	sign, err := f.req.apply(cmd, p)
	if err != nil {
		return nil, nil, err
	}
	if err := f.tr.apply(cmd, p); err != nil {
		return nil, nil, err
	}
	f.strm.apply(p)
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	return p, sign, nil
}

// wordRE is a bare word: what a command looks like, and a URL does not.
var wordRE = regexp.MustCompile(`^[a-z][a-z-]*$`)

// mistypedCommand returns an error when arg, given where a URL goes, is a
// word close to one of hail's commands (hail srve, hail verison): "did you
// mean", where it was read as a URL without a scheme.
func mistypedCommand(cmd *cobra.Command, arg string) error {
	if !wordRE.MatchString(arg) {
		return nil
	}
	if arg == "version" {
		return fmt.Errorf("unknown command %q: did you mean 'hail --version' (-V)?", arg)
	}
	if s := cmd.Root().SuggestionsFor(arg); len(s) > 0 {
		return fmt.Errorf("unknown command %q: did you mean 'hail %s'? (a URL needs its scheme: http://%s)", arg, s[0], arg)
	}
	return nil
}

func unwrapURLErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func runLoad(cmd *cobra.Command, f *loadFlags, args []string) error {
	if f.completions != "" {
		return writeCompletions(cmd.Root(), f.completions)
	}
	p, sign, err := buildPlan(cmd, f, args)
	if err != nil {
		return err
	}
	gen := reqgen.New(p, f.urls.set, sign, rand.Uint64())
	if f.urls.dump > 0 {
		return gen.Dump(cmd.OutOrStdout(), f.urls.dump)
	}
	color, err := f.settle(&f.results, p)
	if err != nil {
		return err
	}
	if f.dbg.debug && p.HTTPVersion != "" {
		return fmt.Errorf("--debug speaks HTTP/1.1; drop --http2/--http-version %s to see one exchange", p.HTTPVersion)
	}
	extraSecrets = f.dbg.redact
	if f.dbg.debug {
		req, _, _, _ := gen.NewBuilder().Next(0)
		return debugExchange(cmd.Context(), p, req, cmd.OutOrStdout(), f.dbg.showSecrets)
	}
	announcePlan(cmd, p, true)
	out, err := openOutput(f.output, cmd.OutOrStdout())
	if err != nil {
		return err
	}
	defer out.Discard()
	var workload *run.Workload
	if !gen.Plain() {
		workload = gen.Workload()
	}
	urls := requestURLs{gen: gen, many: f.urls.set != nil, show: f.dbg.showSecrets}
	results, err := prepareResults(&f.results, f.format, p, workload, out, urls)
	if err != nil {
		return err
	}

	interrupt, stop, release := handleSignals(out)
	defer release()

	opts := run.Options{Interrupt: interrupt, SuccessBreakdown: f.successSplit, Config: redactedConfig(p, f, gen)}
	opts.Workload = workload
	res, err := execute(p, &f.outputFlags, stop, out, results, opts, nil)
	if err != nil {
		return err
	}
	release() // the output phase (signals.go)
	if err := writeReport(out, res, afterRun(f.format), report.TextOptions{Unit: f.unit, Color: color}); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	return runExit(&f.results, res)
}

// writeCompletions is oha's hidden --completions SHELL: the script hail
// completion SHELL prints.
func writeCompletions(root *cobra.Command, shell string) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(root.OutOrStdout(), true)
	case "zsh":
		return root.GenZshCompletion(root.OutOrStdout())
	case "fish":
		return root.GenFishCompletion(root.OutOrStdout(), true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(root.OutOrStdout())
	}
	return fmt.Errorf("--completions %q: hail completes bash, zsh, fish and powershell", shell)
}

func writeReport(w io.Writer, res *result.Result, format string, to report.TextOptions) error {
	if ok, err := writeRendered(w, res, format); ok {
		return err
	}
	switch format {
	case "json":
		return result.WriteJSON(w, res)
	case "vllm":
		return report.WriteVLLM(w, res)
	case "csv":
		return report.WriteCSV(w, res)
	case "quiet":
		return nil
	}
	return report.WriteText(w, res, to)
}

func printProgress(w io.Writer, s stats.Snapshot) {
	rate := 0.0
	if s.Last.Span > 0 {
		rate = float64(s.Last.Requests) / s.Last.Span.Seconds()
	}
	fmt.Fprintf(w, "\r\x1b[K%6.1fs  %d requests  %.0f req/s  %d errors  p99 %s",
		s.Elapsed.Seconds(), s.Requests, rate, s.Errors, time.Duration(s.P99).Round(time.Microsecond))
}
