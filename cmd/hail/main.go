// Command hail is an HTTP load generator that tells the truth about latency.
//
// Subcommands live in one file each: load.go (the default command, oha's
// flags), serve.go (the built-in target), demo.go, runcmd.go (hail run, a
// scenario file), kube.go (hail kube, distributed runs on Kubernetes).
// main.go maps errors to exit codes: 0 when the run completed, 1 for bad
// input or a run that could not start (one line on stderr, nothing
// written), 2 when a scenario's threshold failed, a merged run is
// incomplete, or hail compare's --fail-on found a significant regression,
// 3 when no request succeeded (for these, the report is written in full
// first; an exitError carries the code), 4 when a shard was interrupted
// (its result written), 130 when a further signal ended the process at
// once or one stopped a setup the run cannot start without (the signal
// table: signals.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/result"
)

// exitError carries an exit code other than 1.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitNoSuccess is the exit code of a run in which no request succeeded:
// a deliberate difference from oha, which exits 0 (a pipeline must not
// read "Requests/sec" of a target that was never there as a result).
const exitNoSuccess = 3

// noSuccess is the exit error of a finished run in which no request
// succeeded (its report is written already), or nil.
func noSuccess(res *result.Result) error {
	if f := report.Failure(res); f != "" {
		return &exitError{code: exitNoSuccess, msg: "no request succeeded: " + f}
	}
	return nil
}

// gcBallast is live for the process's life (a package variable is a root
// of the collector): see main.
//
//lint:ignore U1000 it is held for its size, never read
var gcBallast []byte

func main() {
	if os.Getenv("GOGC") == "" {
		// The hot path allocates nothing, so collections are rare and cheap;
		// a tight target keeps the connection-setup garbage of a large -c
		// from doubling the resident set. A ballast, never touched (no
		// resident memory), sets the heap the 10% counts from: without it
		// the first collection comes at 400 kB, and the megabytes of a
		// run's histograms and connection slots, and its report's, cost
		// dozens of collections — `hail -n 3` spent 110 ms of CPU where it
		// spends 51 ms with it, a streaming run a tenth of the CPU it
		// spends outside its events. It lets at most 6.4 MB more garbage
		// live (10% of it) before a collection: a large body's HTTP/2
		// frames stay within the memory rule (TestBodyMemory).
		debug.SetGCPercent(10)
		gcBallast = make([]byte, 64<<20)
	}
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr, true))
}

// argsKey is the context key of the command line's arguments (flagError
// reads the first).
type argsKey struct{}

// cli runs hail's command line args, with cobra's output (help, usage),
// the commands' that take it from their command (--dump-urls, --debug,
// completions, notes) and the final error line going to stdout and
// stderr, and returns the exit code. Runs and their reports still write
// to the process's own stdout and stderr. With catch, a load or scenario
// run catches SIGINT/SIGTERM from the start (signals.go): main's; the
// tests' in-process calls, which check bad input, do not.
func cli(args []string, stdout, stderr io.Writer, catch bool) int {
	root := newCommandTree()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		// A load or scenario run catches SIGINT/SIGTERM from the start
		// (signals.go); the one-request and checking modes keep the default.
		quick := cmd.Flags().Changed("debug") || cmd.Flags().Changed("dump-urls") || cmd.Flags().Changed("check")
		if catch && (cmd == root || cmd.Parent() == root && (cmd.Name() == "run" || cmd.Name() == "grpc" || cmd.Name() == "llm")) && !quick {
			catchSignals()
		}
	}
	root.AddCommand(newKubeCmd(), newOperatorCmd())
	err := root.ExecuteContext(context.WithValue(context.Background(), argsKey{}, args))
	if err == nil {
		return 0
	}
	var early *run.StartInterruptedError
	switch {
	case errors.As(err, &early): // the signal table's setup phase: the wait for --start-at
		fmt.Fprintln(stderr, "hail: "+early.Error())
		return 130
	case setupInterrupted(): // the signal stopped what the run could not start without
		restoreTerminal()
		fmt.Fprintln(stderr, "hail: interrupted during setup: nothing was sent")
		return 130
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "hail: "+ee.msg)
		}
		return ee.code
	}
	msg := err.Error()
	var fe *plan.FieldError
	if errors.As(err, &fe) { // the plan's fields named by their flags
		msg = strings.Replace(msg, fe.Error(), fe.Message(plan.FlagName), 1)
	}
	fmt.Fprintln(stderr, "hail: "+oneLine(msg))
	return 1
}

// newCommandTree is hail's commands: the load command (the root) and the
// subcommands a run can be sharded with or that work on results. hail kube
// parses a distributed run's arguments with a fresh tree.
func newCommandTree() *cobra.Command {
	root := newRootCmd()
	root.AddCommand(newServeCmd(), newDemoCmd(), newRunCmd(), newGRPCCmd(), newLLMCmd())
	root.AddCommand(newReportCmd(), newCompareCmd(), newMergeCmd())
	return root
}

// markFiles marks flags that name a file (shell completion completes file
// names; hail kube ships the file to its shards).
func markFiles(fl *pflag.FlagSet, names ...string) {
	for _, n := range names {
		_ = cobra.MarkFlagFilename(fl, n)
	}
}

// markDirs marks flags that name a directory (completion, and hail kube
// ships the directory's files).
func markDirs(fl *pflag.FlagSet, names ...string) {
	for _, n := range names {
		_ = cobra.MarkFlagDirname(fl, n)
	}
}

// oneLine keeps an error message to a single line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// flagError rewrites pflag's messages into hail's one-line form.
func flagError(cmd *cobra.Command, err error) error {
	var args []string
	if ctx := cmd.Context(); ctx != nil { // nil: hail kube parsing a run's arguments (kubeargs.go)
		args, _ = ctx.Value(argsKey{}).([]string)
	}
	if cmd == cmd.Root() && len(args) > 0 { // hail sevre --addr …: the command was mistyped, not the flag
		if e := mistypedCommand(cmd, args[0]); e != nil {
			return e
		}
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown flag: "), strings.HasPrefix(msg, "unknown shorthand flag: "):
		return fmt.Errorf("%s (see '%s --help')", msg, cmd.CommandPath())
	case strings.HasPrefix(msg, "invalid argument "):
		// invalid argument "x" for "-n, --n-requests" flag: <reason>
		if i := strings.Index(msg, " flag: "); i >= 0 {
			head := msg[len("invalid argument "):i]
			if j := strings.Index(head, " for "); j >= 0 {
				val, name := head[:j], strings.Trim(head[j+5:], `"`)
				return fmt.Errorf("%s %s: %s", name, val, msg[i+7:])
			}
		}
	}
	return err
}
