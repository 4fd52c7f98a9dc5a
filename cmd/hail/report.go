package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"hail/internal/metrics"
	"hail/internal/plan"
	"hail/internal/report"
	"hail/internal/reqlog"
	"hail/internal/run"
	"hail/internal/stats"
	"hail/internal/target"
)

// reportFormats are the formats hail report renders a saved result in.
var reportFormats = []string{"text", "json", "csv", "csv-seconds", "markdown", "html"}

func newReportCmd() *cobra.Command {
	var format, output, unit string
	var noColor bool
	format = "text"
	cmd := &cobra.Command{
		Use:   "report RESULT.json",
		Short: "re-render a saved result (text, json, csv, markdown or html)",
		Long: `hail report renders a result saved with -j/--output-format json again, in any format:
text (as the run printed it), json, csv (the per-second series; a saved result holds no
per-request data), markdown (a summary to paste into a review) or html (one self-contained
page with charts that opens offline).`,
		Example: `  hail report result.json
  hail report result.json --output-format html -o report.html
  hail report merged.json --output-format markdown`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := readResult(args[0])
			if err != nil {
				return err
			}
			if format == "csv" {
				format = "csv-seconds"
			}
			out, err := openOutput(output)
			if err != nil {
				return err
			}
			defer out.Discard()
			color := !noColor && os.Getenv("NO_COLOR") == "" && output == "" && term.IsTerminal(int(os.Stdout.Fd()))
			if err := writeReport(out, res, format, report.TextOptions{Unit: unit, Color: color}); err != nil {
				return err
			}
			return out.Commit()
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.Var(choiceValue{&format, reportFormats}, "output-format", "text, json, csv (per second), markdown or html")
	fl.StringVarP(&output, "output", "o", "", "write to this file (atomically) instead of stdout")
	fl.VarP(choiceValue{&unit, report.Units}, "time-unit", "u", "time unit of the text report (default: chosen from the average)")
	fl.BoolVar(&noColor, "no-color", false, "no colors (also when NO_COLOR is set)")
	return cmd
}

// readResult reads a saved JSON result, with errors naming the file.
func readResult(path string) (*report.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, unwrapPathErr(err))
	}
	defer f.Close()
	res, err := report.ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return res, nil
}

// writeRendered writes res in one of the formats the results toolkit adds.
// It reports whether format was one of them.
func writeRendered(w io.Writer, res *report.Result, format string) (bool, error) {
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

// ---- the results flags of the load and run commands ----

// resultFlags are the results toolkit's flags, shared by the load command
// and hail run.
type resultFlags struct {
	dbURL       string
	metricsAddr string
	targetPID   int
	shard       string
	startAt     string
}

// loadFormats are the --output-format values of the load command and hail run.
var loadFormats = []string{"text", "json", "csv", "csv-seconds", "markdown", "html", "quiet"}

const loadFormatHelp = "report format: text, json (oha's keys + hail), csv (one row per request, as oha), csv-seconds (one row per second), markdown, html (a self-contained page with charts) or quiet"

func addResultFlags(fl *pflag.FlagSet, r *resultFlags) {
	fl.StringVar(&r.dbURL, "db-url", "", "write every request (intended and actual start, latency, status, bytes, error, step, connection) to this SQLite file")
	fl.StringVar(&r.metricsAddr, "metrics-addr", "", "serve live Prometheus/OpenMetrics metrics at http://ADDR/metrics during the run, e.g. 127.0.0.1:9090")
	fl.Var(intValue{&r.targetPID, "process id"}, "target-pid", "sample this local process's RSS and CPU every second (from /proc) into the report")
	fl.StringVar(&r.shard, "shard", "", "be shard I of N of a distributed run (I from 0, e.g. --shard $JOB_COMPLETION_INDEX/4): do 1/N of -n, -q, -c and stages")
	fl.StringVar(&r.startAt, "start-at", "", "start at this wall-clock time (RFC 3339, or Unix seconds), so every shard starts together")
}

// parseShard parses --shard I/N (I from 0).
func parseShard(s string) (int, int, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("--shard %q: write it as I/N, e.g. --shard 0/4 (I counts from 0, as Kubernetes' JOB_COMPLETION_INDEX)", s)
	case n < 1 || n > 100_000:
		return 0, 0, fmt.Errorf("--shard %q: N must be from 1 to 100000", s)
	case i < 0 || i >= n:
		return 0, 0, fmt.Errorf("--shard %q: I counts from 0 and must be below N (0 to %d)", s, n-1)
	}
	return i, n, nil
}

// parseStartAt parses --start-at: RFC 3339 or Unix seconds (fractions allowed).
func parseStartAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e11 {
		sec, frac := int64(f), f-float64(int64(f))
		return time.Unix(sec, int64(frac*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("--start-at %q: give an RFC 3339 time (2026-01-02T15:04:05Z) or Unix seconds ($(date -d '+30 sec' +%%s))", s)
}

// applyResultFlags puts --shard and --start-at into the plan and checks
// --target-pid.
func applyResultFlags(r *resultFlags, p *plan.Plan) error {
	if r.shard != "" {
		i, n, err := parseShard(r.shard)
		if err != nil {
			return err
		}
		if p.Requests > 0 && p.Duration == 0 && p.Requests < uint64(n) {
			return fmt.Errorf("--shard %s: -n %d is fewer requests than shards; give -n of at least %d", r.shard, p.Requests, n)
		}
		p.ShardIndex, p.ShardCount = i, n
	}
	if r.startAt != "" {
		t, err := parseStartAt(r.startAt)
		if err != nil {
			return err
		}
		now := time.Now()
		if err := run.CheckStartAt(t, now, p.ShardCount > 1); err != nil {
			return err
		}
		if late := now.Sub(t); late > report.LateStart && p.ShardCount > 1 {
			fmt.Fprintf(os.Stderr, "hail: warning: --start-at %s passed %s ago: shard %d/%d starts now, late; its result records by how much, and hail merge marks the run incomplete\n",
				t.UTC().Format(time.RFC3339), late.Round(time.Millisecond), p.ShardIndex, p.ShardCount)
		}
		p.StartAt = t
	}
	if r.targetPID < 0 {
		return fmt.Errorf("--target-pid %d: give the process id of the target", r.targetPID)
	}
	return nil
}

// rowsOnStdout reports whether the per-request CSV rows stream to stdout,
// where no live view may draw over them.
func rowsOnStdout(format, output string) bool { return format == "csv" && output == "" }

// resultsRun holds one run's request log, metrics server and target sampler.
type resultsRun struct {
	writer   *reqlog.Writer
	tracer   *stats.Tracer
	sampler  *target.Sampler
	exporter *metrics.Exporter
	server   *metrics.Server
	meta     reqlog.Meta
}

// prepareResults opens what the results flags ask for, before the run: a
// problem (an unwritable --db-url, a missing --target-pid, a busy
// --metrics-addr) stops hail before anything is sent. format is the
// --output-format (csv: the per-request rows go to out); w is the run's
// workload (nil: the plan's single request), whose step names the
// per-request log records; show is --show-secrets (the URL's --redact parameters stay visible).
func prepareResults(r *resultFlags, format string, p *plan.Plan, w *run.Workload, out io.Writer, show bool) (*resultsRun, error) {
	rr := &resultsRun{}
	model := "closed"
	if p.Open() {
		model = "open"
	}
	rr.meta = reqlog.Meta{URL: redactedURL(p.URL, show), Method: p.Method, Model: model, Steps: []string{""}, Version: plan.Version}
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
		sinks = append(sinks, db)
	}
	if format == "csv" {
		sinks = append(sinks, reqlog.NewCSV(out, rr.meta.Steps))
	}
	if r.targetPID != 0 {
		s, err := target.New(r.targetPID)
		if err != nil {
			for _, k := range sinks {
				k.Abort()
			}
			return nil, err
		}
		rr.sampler = s
	}
	if r.metricsAddr != "" {
		labels := prometheus.Labels{}
		if rr.meta.Shard != "" {
			labels["shard"] = strconv.Itoa(p.ShardIndex)
		}
		rr.exporter = metrics.NewExporter(metrics.Info{URL: rr.meta.URL, Model: model, Engine: p.Engine, Shard: rr.meta.Shard}, labels)
		srv, err := metrics.Serve(r.metricsAddr, rr.exporter)
		if err != nil {
			for _, k := range sinks {
				k.Abort()
			}
			return nil, err
		}
		rr.server = srv
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
	if rr.sampler != nil {
		o.OnSecond = rr.sampler.Fill
	}
	if rr.exporter != nil {
		prev := o.Observe
		o.Observe = func(c *stats.Collector) {
			if prev != nil {
				prev(c)
			}
			rr.exporter.Observe(c)
		}
	}
}

// finish completes the results features after a run: every traced request
// is written and the SQLite file closed cleanly, and the target's summary
// goes into the Result.
func (rr *resultsRun) finish(res *report.Result) error {
	if rr.sampler != nil {
		res.Hail.Target = rr.sampler.Summary(time.Duration(res.Summary.Total * 1e9))
	}
	if rr.writer != nil {
		m := rr.meta
		m.Start = time.Unix(0, res.Hail.StartUnixNano)
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

// abort releases everything after a run that could not start.
func (rr *resultsRun) abort() {
	if rr.writer != nil {
		rr.writer.Abort()
	}
	if rr.server != nil {
		rr.server.Close()
	}
}
