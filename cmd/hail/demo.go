package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/target"
	"github.com/hail-loadgen/hail/result"
)

// hail demo is the showcase: the same stalling target loaded twice, once
// in the closed model and once in the open one, each with the live view
// (or a progress line), then one screen saying what the two runs showed —
// coordinated omission made visible — and what to try next.

// demoConfig is what hail demo's flags set.
type demoConfig struct {
	dur   time.Duration // each run's length
	conns int           // each run's connections
	rate  float64       // the open-model run's requests per second
}

// stall is the target's stall: a third of a run, a third into it.
func (c demoConfig) stall() time.Duration { return (c.dur / 3).Round(time.Millisecond) }

// path is the URL path and query both runs load: 1 ms responses, held
// during the stall.
func (c demoConfig) path() string {
	s := c.stall()
	return fmt.Sprintf("/?delay=1ms&stall=%v@%v", s, s)
}

// demoRun is one of the demo's runs and what it measured.
type demoRun struct {
	name string  // "closed model"
	flag string  // what the run adds to -c: "" or "-q 1000"
	rate float64 // 0 for the closed model
	res  *result.Result
	slow int64 // sent requests slower than half the stall
}

// demoNext are the commands the summary suggests, in order; the
// docs-commands test checks that each is accepted as written.
var demoNext = [][2]string{
	{"hail serve &", "the built-in target on 127.0.0.1:8080, for the next two"},
	{"hail -z 10s -q 1000 'http://127.0.0.1:8080/?delay=1ms&stall=1s@3s'", "the open run, its live view and full report"},
	{"hail -z 10s -q 1000 --output-format html -o report.html 'http://127.0.0.1:8080/?delay=20ms'", "a report with charts, in one file"},
}

func newDemoCmd() *cobra.Command {
	c := demoConfig{dur: 3 * time.Second, conns: 32, rate: 1000}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "load the built-in target in the closed and the open model and show what each measured",
		Long: `hail demo starts 'hail serve' (a child process) on a free loopback port for each of two runs
against GET /?delay=1ms&stall=…: responses take 1 ms, except that a third of the way into the run the
server holds every response for a third of the run. The first run is the closed model (-c
connections, each sending its next request when the previous one is answered), the second the
open model (-q requests per second on a fixed schedule, latency counted from each request's
intended send time). The live view shows while each runs (a progress line when stdout is not a
terminal); then one screen compares the two: how many requests saw the stall, p50/p99/max, the
verdict, and the next commands to try.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case c.dur < time.Second:
				return fmt.Errorf("--duration %v: give 1s or more (the stall is a third of it)", c.dur)
			case c.conns < 1:
				return fmt.Errorf("--connections %d: give 1 or more", c.conns)
			case c.rate <= 0:
				return fmt.Errorf("--rate %v: give requests per second above 0", c.rate)
			}
			return runDemo(c)
		},
	}
	cmd.Flags().DurationVar(&c.dur, "duration", c.dur, "length of each run (1s or more)")
	cmd.Flags().IntVar(&c.conns, "connections", c.conns, "connections of each run")
	cmd.Flags().Float64Var(&c.rate, "rate", c.rate, "requests per second of the open-model run")
	return cmd
}

// runDemo runs the two runs and prints the summary. A signal (or q in the
// live view) stops the run in progress and skips the next; the summary
// covers what ran. A further signal exits at once (signals.go).
func runDemo(c demoConfig) error {
	out := &output{} // stdout; the demo writes no file
	interrupt, stop, release := handleSignals(out)
	defer release()
	runs := []*demoRun{
		{name: "closed model"},
		{name: "open model", flag: fmt.Sprintf("-q %g", c.rate), rate: c.rate},
	}
	tty := term.IsTerminal(int(os.Stdout.Fd()))
	for i, r := range runs {
		select {
		case <-interrupt:
			continue
		default:
		}
		res, err := demoOne(c, r, i, len(runs), tty, interrupt, stop, out)
		if err != nil {
			return err
		}
		r.res = res
		r.slow = slowerThan(res, c.stall()/2)
	}
	release()
	writeDemoSummary(os.Stdout, c, runs, termWidth())
	return nil
}

// demoOne runs r against a server of its own (its stall starts with the
// run's first request), with the live view on a terminal, else a line
// saying what runs and a progress line on a terminal stderr.
func demoOne(c demoConfig, r *demoRun, i, n int, tty bool, interrupt chan struct{}, stop func(), out *output) (*result.Result, error) {
	addr, pid, stopServer, err := startServeChild()
	if err != nil {
		return nil, fmt.Errorf("demo: cannot start the built-in server: %v", err)
	}
	defer stopServer()
	u, err := url.Parse("http://" + addr + c.path())
	if err != nil {
		return nil, err
	}
	p := &plan.Plan{URL: u, Method: "GET", Connections: c.conns, Duration: c.dur, Rate: r.rate,
		KeepAlive: true, Compression: true, ConnectTimeout: plan.DefaultConnectTimeout, Engine: plan.EngineAuto}
	// Its own server is the target: its CPU is the target's, never "other processes".
	opts := run.Options{Interrupt: interrupt, Target: target.Spec{PIDs: []int{pid}}, TargetSource: "hail demo"}
	title := fmt.Sprintf("hail demo %d/%d: %s, -c %d %s for %v: GET %s", i+1, n, r.name, c.conns, r.flag, c.dur, u)
	title = strings.Join(strings.Fields(title), " ")
	var live *liveView
	if tty {
		f := defaultOutputFlags()
		live = startLiveView(p, r.rate > 0, &f, stop, out, nil, nil, pid, liveExtras{})
	}
	progress := live == nil && term.IsTerminal(int(os.Stderr.Fd()))
	if live != nil {
		opts.Observe = live.observe
	} else {
		fmt.Println(title)
	}
	if progress {
		opts.Progress = func(s stats.Snapshot) { printProgress(os.Stderr, s) }
	}
	res, err := run.Run(context.Background(), p, opts)
	if live != nil {
		live.close()
	}
	if progress {
		fmt.Fprint(os.Stderr, "\r\x1b[K")
	}
	return res, err
}

// slowerThan counts the sent requests of res that took d or longer,
// responses and failures alike, from the run's HdrHistograms.
func slowerThan(res *result.Result, d time.Duration) int64 {
	var n int64
	h := res.Hail.Histograms
	for _, enc := range []string{h.LatencyOK, h.LatencyBad, h.Failed} {
		hist, err := report.DecodeHist(enc)
		if err != nil {
			continue
		}
		for _, b := range hist.Distribution() {
			if b.From >= d.Nanoseconds() {
				n += b.Count
			}
		}
	}
	return n
}

// writeDemoSummary is the demo's one screen: the two runs side by side,
// what they showed, each verdict's first line and the next commands.
func writeDemoSummary(w io.Writer, c demoConfig, runs []*demoRun, width int) {
	stall, slow := c.stall(), c.stall()/2
	para := func(s string) {
		for _, l := range wrap(s, width) {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintln(w)
	para(fmt.Sprintf("hail demo: one target, two load models. The target (hail serve) answers in 1 ms, but "+
		"from %v into each run it holds every response for %v (GET %s). Each run: %v, %d connections.",
		stall, stall, c.path(), c.dur, c.conns))
	fmt.Fprintln(w)
	head := fmt.Sprintf("%-22s", "")
	for _, r := range runs {
		head += fmt.Sprintf("%28s", r.name+" "+strings.TrimSpace("(-c "+fmt.Sprint(c.conns)+" "+r.flag)+")")
	}
	fmt.Fprintln(w, strings.TrimRight(head, " "))
	row := func(label string, cell func(r *demoRun) string) {
		line := fmt.Sprintf("  %-20s", label)
		for _, r := range runs {
			v := "not run"
			if r.res != nil {
				v = cell(r)
			}
			line += fmt.Sprintf("%28s", v)
		}
		fmt.Fprintln(w, line)
	}
	row("requests sent", func(r *demoRun) string { return groupDigits(r.res.Hail.Counts.Sent) })
	row("requests/s", func(r *demoRun) string { return groupDigits(int64(r.res.Summary.RequestsPerSec + 0.5)) })
	row("latency p50", func(r *demoRun) string { return demoDur(r.res.Hail.AllSent.P50.Seconds()) })
	row("latency p99", func(r *demoRun) string { return demoDur(r.res.Hail.AllSent.P99.Seconds()) })
	row("latency max", func(r *demoRun) string { return demoDur(r.res.Hail.AllSent.Max.Seconds()) })
	row(fmt.Sprintf("slower than %v", slow), func(r *demoRun) string {
		return fmt.Sprintf("%s (%.1f%%)", groupDigits(r.slow), 100*float64(r.slow)/float64(max(r.res.Hail.AllSent.Requests, 1)))
	})
	row("bottleneck", func(r *demoRun) string { return r.res.Hail.Verdict.Bottleneck })
	fmt.Fprintln(w)
	closed, open := runs[0], runs[1]
	if closed.res != nil && open.res != nil {
		para(demoReading(c, closed, open))
		fmt.Fprintln(w)
	}
	for _, r := range runs {
		if r.res == nil {
			continue
		}
		v := r.res.Hail.Verdict
		line, _ := report.Headline(v)
		if len(v.Reasons) > 0 {
			line += " " + v.Reasons[0]
		}
		para("Verdict, " + r.name + ": " + line)
	}
	if closed.res == nil || open.res == nil {
		para("Stopped before both runs ended: the table holds what ran.")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Try next:")
	for _, n := range demoNext {
		fmt.Fprintf(w, "  %s\n      # %s\n", n[0], n[1])
	}
}

// demoReading says what the two runs showed, from their numbers: the
// closed model's few slow requests against the open model's many is
// coordinated omission made visible.
func demoReading(c demoConfig, closed, open *demoRun) string {
	co, ca := closed.res.Hail.AllSent, open.res.Hail.AllSent
	if open.slow <= closed.slow || ca.P99 <= co.P99 {
		return fmt.Sprintf("This time the two runs did not differ as they should (%s and %s requests slower than %v; "+
			"p99 %s and %s): the machine was probably too busy to keep either schedule. Run it again on a quieter one.",
			groupDigits(closed.slow), groupDigits(open.slow), c.stall()/2, demoDur(co.P99.Seconds()), demoDur(ca.P99.Seconds()))
	}
	return fmt.Sprintf("Both runs met the same %v stall. The closed model's %d connections waited it out with the "+
		"server and sent nothing meanwhile, so only %s requests saw it and its p99 says %s: coordinated omission — "+
		"the generator slowed down with the target and left out the requests users would have sent. The open model "+
		"kept its schedule of %g requests a second: those due during the stall count from their intended send "+
		"time (%s waited over %v), and its p99 says %s, what users arriving at that rate saw. Measure latency with -q.",
		c.stall(), c.conns, groupDigits(closed.slow), demoDur(co.P99.Seconds()), open.rate, groupDigits(open.slow), c.stall()/2, demoDur(ca.P99.Seconds()))
}

// demoDur formats seconds for the summary's table, to about three
// significant digits: 1.05ms, 970.98ms, 1s.
func demoDur(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(100 * time.Nanosecond).String()
}

// termWidth is stdout's width when it is a terminal (at most 100), else 100.
func termWidth() int {
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 20 && w < 100 {
		return w
	}
	return 100
}

// startServeChild runs 'hail serve' on a free loopback port as a child
// process, so the demo's generator CPU figures are hail's alone, and
// returns its address and pid. The child is killed with hail even when
// hail exits at once (a second signal): it is started from a thread that
// stays until it ends, with that thread's death as its kill signal (on
// Linux; elsewhere stop kills it).
func startServeChild() (addr string, pid int, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", 0, nil, err
	}
	cmd := exec.Command(exe, "serve", "--addr", "127.0.0.1:0")
	cmd.SysProcAttr = childDiesWithHail()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", 0, nil, err
	}
	started, exited := make(chan error, 1), make(chan struct{})
	go func() {
		runtime.LockOSThread() // Pdeathsig follows this thread: it lives until the child ends
		defer close(exited)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return "", 0, nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); <-exited }
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
