package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hail-loadgen/hail/internal/barrier"
	"github.com/hail-loadgen/hail/internal/metrics"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/reqgen"
	"github.com/hail-loadgen/hail/internal/reqlog"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/target"
	"github.com/hail-loadgen/hail/result"
)

// reportFormats are the formats hail report renders a saved result in.
var reportFormats = []string{"text", "json", "csv", "csv-seconds", "markdown", "html", "vllm"}

func newReportCmd() *cobra.Command {
	var format, output, unit string
	var noColor bool
	format = "text"
	cmd := &cobra.Command{
		Use:   "report RESULT.json",
		Short: "re-render a saved result (text, json, csv, markdown, html, or vllm for hail llm)",
		Long: `hail report renders a result saved with -j/--output-format json again, in any format:
text (as the run printed it), json, csv (the per-second series; a saved result holds no
per-request data), markdown (a summary to paste into a review) or html (one self-contained
page with charts that opens offline). A hail llm --sweep result renders as text, json or html.`,
		Example: `  hail report result.json
  hail report result.json --output-format html -o report.html
  hail report merged.json --output-format markdown
  hail report sweep.json --output-format html -o sweep.html`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, sw, err := readReportable(args[0])
			if err != nil {
				return err
			}
			if sw != nil && !slices.Contains(sweepFormats, format) {
				return fmt.Errorf("%s is a hail llm --sweep result: it renders as text, json or html, not --output-format %s", args[0], format)
			}
			if format == "csv" {
				format = "csv-seconds"
			}
			out, err := openOutput(output, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer out.Discard()
			if sw != nil {
				err = writeSweep(out, format, sw)
			} else {
				color := !noColor && os.Getenv("NO_COLOR") == "" && output == "" && term.IsTerminal(int(os.Stdout.Fd()))
				err = writeReport(out, res, format, report.TextOptions{Unit: unit, Color: color})
			}
			if err != nil {
				return err
			}
			return out.Commit()
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.Var(choiceValue{&format, reportFormats}, "output-format", "text, json, csv (per second), markdown, html, or vllm (hail llm's results as a vLLM bench serve result file)")
	fl.StringVarP(&output, "output", "o", "", "write to this file (atomically) instead of stdout")
	fl.VarP(choiceValue{&unit, report.Units}, "time-unit", "u", "time unit of the text report (default: chosen from the slowest request)")
	fl.BoolVar(&noColor, "no-color", false, "no colors (also when NO_COLOR is set)")
	return cmd
}

// readReportable reads what hail report renders: a saved JSON result, or a
// sweep's (hail llm --sweep); errors name the file.
func readReportable(path string) (*result.Result, *sweepDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, unwrapPathErr(err))
	}
	if sw, ok, err := readSweep(b); ok {
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", path, err)
		}
		return nil, sw, nil
	}
	res, err := result.ReadJSON(bytes.NewReader(b))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	return res, nil, nil
}

// readResult reads a saved JSON result, with errors naming the file.
func readResult(path string) (*result.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, unwrapPathErr(err))
	}
	defer f.Close()
	res, err := result.ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return res, nil
}

// writeRendered writes res in one of the formats the results toolkit adds.
// It reports whether format was one of them.
func writeRendered(w io.Writer, res *result.Result, format string) (bool, error) {
	switch format {
	case "csv-seconds":
		return true, report.WriteCSV(w, res)
	case "markdown":
		return true, report.WriteMarkdown(w, res)
	case "html":
		return true, report.WriteHTML(w, res)
	}
	return false, nil
}

// afterRun is the report format to write after the run: nothing more for
// the per-request csv, whose rows were streamed while the run went on.
func afterRun(f string) string {
	if f == "csv" {
		return "quiet"
	}
	return f
}

// rowsOnStdout reports whether the per-request CSV rows stream to stdout,
// where no live view may draw over them.
func rowsOnStdout(format, output string) bool { return format == "csv" && output == "" }

// requestURLs names the URL of each request in the per-request log.
type requestURLs struct {
	gen  *reqgen.Gen // nil: the plan's URL (a scenario names steps instead)
	many bool        // the run sends to many URLs: every row names its own
	show bool        // --show-secrets: --redact's query parameters stay visible
}

// runURL is the run's URL in the log: the URL, or what the URLs are made
// from (a file of URLs, a regular expression).
func (u requestURLs) runURL(p *plan.Plan) string {
	if u.many {
		return u.gen.Pattern()
	}
	return redactedURL(p.URL, u.show)
}

// appendURL appends the URL of r's request, --redact's query parameters
// hidden.
func (u requestURLs) appendURL(dst []byte, r *stats.TraceRecord) []byte {
	start := len(dst)
	dst = u.gen.AppendURL(dst, r.Hit)
	if u.show || len(extraSecrets) == 0 {
		return dst
	}
	if base, q, ok := strings.Cut(string(dst[start:]), "?"); ok {
		dst = append(append(append(dst[:start], base...), '?'), redactQuery(q)...)
	}
	return dst
}

// resultsRun holds one run's request log, metrics server and the target
// the run samples.
type resultsRun struct {
	writer   *reqlog.Writer
	tracer   *stats.Tracer
	exporter *metrics.Exporter
	server   *metrics.Server
	gate     *barrier.Gate // --start-at barrier
	meta     reqlog.Meta
	spec     target.Spec // the processes the flags name (empty: none)
	pid      int         // the target's first process (0: none)
}

// targetPID is the target's first process, for the live view (0: none).
func (r *resultsRun) targetPID() int { return r.pid }

// spec is the target the results flags name (--target-pid, --target-cmd,
// --target-cgroup); ok is false when they name none.
func (r *resultFlags) spec() (target.Spec, bool) {
	s := target.Spec{PIDs: r.targetPIDs, Cmds: r.targetCmds, Cgroups: r.cgroups}
	return s, !s.Empty()
}

// prepareResults opens what the results flags ask for, before the run: a
// problem (an unwritable --db-url, a missing --target-pid, a busy
// --metrics-addr) stops hail before anything is sent. format is the
// --output-format (csv: the per-request rows go to out); w is the run's
// workload (nil: the plan's single request), whose step names the
// per-request log records; urls names each request's URL in the log.
func prepareResults(r *resultFlags, format string, p *plan.Plan, w *run.Workload, out io.Writer, urls requestURLs) (*resultsRun, error) {
	rr := &resultsRun{}
	rr.meta = reqlog.Meta{URL: urls.runURL(p), Method: p.Method, Model: modelName(p, w), Steps: []string{""}, Version: plan.Version}
	if w != nil && len(w.Steps) > 0 {
		rr.meta.Steps = w.Steps
		if len(w.Steps) > 1 || w.Steps[0] != "" {
			rr.meta.Method = "" // a scenario: each step has its own method
		}
	}
	if p.ShardCount > 1 {
		rr.meta.Shard = fmt.Sprintf("%d/%d", p.ShardIndex, p.ShardCount)
	}
	var sinks []reqlog.Sink
	if r.dbURL != "" {
		path, err := reqlog.DBPath(r.dbURL)
		if err != nil {
			return nil, err
		}
		db, err := reqlog.OpenSQLite(path)
		if err != nil {
			return nil, err
		}
		if urls.many {
			db.SetURLs(urls.appendURL)
		}
		sinks = append(sinks, db)
	}
	if format == "csv" {
		sinks = append(sinks, reqlog.NewCSV(out, rr.meta.Steps))
	}
	if spec, ok := r.spec(); ok {
		// Checked now: nothing is written for a process that is not there
		// (the run samples the target itself: run.Options.Target).
		s, err := target.NewSet(spec)
		if err != nil {
			for _, k := range sinks {
				k.Abort()
			}
			return nil, err
		}
		rr.spec, rr.pid = spec, s.FirstPID()
	}
	if r.metricsAddr != "" {
		labels := prometheus.Labels{}
		if rr.meta.Shard != "" {
			labels["shard"] = strconv.Itoa(p.ShardIndex)
		}
		rr.exporter = metrics.NewExporter(metrics.Info{URL: rr.meta.URL, Model: rr.meta.Model, Engine: string(p.Engine), Shard: rr.meta.Shard}, labels)
		srv, err := metrics.Serve(r.metricsAddr, rr.exporter)
		if err != nil {
			for _, k := range sinks {
				k.Abort()
			}
			return nil, err
		}
		rr.server = srv
		if _, port, err := net.SplitHostPort(r.metricsAddr); err == nil && (port == "0" || port == "") {
			// The system chose the port: say which, or nobody can scrape it.
			fmt.Fprintf(os.Stderr, "hail: metrics at http://%s/metrics\n", srv.Addr())
		}
		if r.barrier {
			rr.gate = barrier.New(rr.meta.Shard, stopSelf)
			rr.gate.RequireToken(os.Getenv(barrier.TokenEnv))
			h := rr.gate.Handler()
			for _, path := range barrier.Paths {
				srv.Handle(path, h)
			}
		}
	}
	if len(sinks) > 0 {
		rr.tracer = stats.NewTracer(0)
		rr.writer = reqlog.Start(rr.tracer, sinks...)
	}
	return rr, nil
}

// wire hooks the results features into the run's options.
func (rr *resultsRun) wire(o *run.Options) {
	o.Tracer = rr.tracer
	// The run samples the target's processes: those the flags name, or
	// those listening on the loopback targets' ports.
	o.Target, o.FindTarget = rr.spec, true
	if rr.exporter != nil {
		prev := o.Observe
		o.Observe = func(c *stats.Collector) {
			if prev != nil {
				prev(c)
			}
			rr.exporter.Observe(c)
		}
	}
	if rr.gate != nil {
		o.Gate = rr.gate.Wait
	}
}

// finish completes the results features after a run: every traced request
// is written and the SQLite file closed cleanly.
func (rr *resultsRun) finish(res *result.Result) error {
	if rr.writer != nil {
		m := rr.meta
		m.Start = res.Hail.Start
		m.Latency = latencySummary(res)
		if err := rr.writer.Finish(m); err != nil {
			return err
		}
		if n, want := rr.writer.Records(), res.Hail.Counts.Requests; n != want {
			// Every engine should trace every request; say so if one did not.
			fmt.Fprintf(os.Stderr, "hail: warning: the per-request log holds %d of the %d requests (engine %s)\n", n, want, res.Hail.Engine)
		}
	}
	return nil
}

// latencySummary is the request log's summary of res's latency: the
// responses' (oha's) and every sent request's.
func latencySummary(res *result.Result) []reqlog.Latency {
	ns := func(s float64, none bool) int64 {
		if none {
			return -1
		}
		return int64(math.Round(s * 1e9))
	}
	c, a, p := res.Hail.Counts, res.Hail.AllSent, res.LatencyPercentiles
	none := c.Responses == 0
	return []reqlog.Latency{
		{Scope: "responses", Requests: c.Responses, P50: ns(p.P50.Seconds(), none), P90: ns(p.P90.Seconds(), none), P99: ns(p.P99.Seconds(), none), Max: ns(res.Summary.Slowest.Seconds(), none),
			CutOff: a.CutOff, NotSent: a.NotSent},
		{Scope: "all_sent", Requests: a.Requests, Failed: a.Failed, CutOff: a.CutOff, NotSent: a.NotSent,
			P50: ns(a.P50.Seconds(), a.Requests == 0), P90: ns(a.P90.Seconds(), a.Requests == 0), P99: ns(a.P99.Seconds(), a.Requests == 0), Max: ns(a.Max.Seconds(), a.Requests == 0)},
	}
}

// abort releases everything after a run that could not start.
func (rr *resultsRun) abort() {
	if rr.writer != nil {
		rr.writer.Abort()
	}
	if rr.server != nil {
		rr.server.Close()
	}
}
