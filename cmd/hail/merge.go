package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/result"
)

func newMergeCmd() *cobra.Command {
	var output, format string
	var failed []string
	var opt report.MergeOptions
	format = "json"
	cmd := &cobra.Command{
		Use:   "merge SHARD.json... -o TOTAL.json",
		Short: "merge the shards of a distributed run into one exact result",
		Long: `hail merge combines the results of the shards of one distributed run (--shard I/N) into
one result: histograms and counts add exactly, every summary and percentile is recomputed
from the sums, and the per-second series are aligned by wall clock. The shards' configurations
must agree (a mismatch is an error naming the field), and every shard must be there,
unless --failed or --partial allow it. A run with a shard failed, missing, started late
(after --start-at) or interrupted is merged and marked incomplete: hail merge names each
such shard on stderr and in the result, and exits 2 after writing it.
See docs/distributed.md.`,
		Example: `  hail merge results/shard-*.json -o total.json
  hail merge s0.json s1.json s2.json --output-format text
  hail merge s0.json s2.json --failed '1=OOMKilled (exit code 137)' -o total.json`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := expandPatterns(args)
			if err != nil {
				return err
			}
			var rs []*result.Result
			for _, p := range args {
				r, err := readResult(p)
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			if opt.Failed, err = parseFailed(failed); err != nil {
				return err
			}
			merged, err := report.MergeWith(rs, args, opt)
			if err != nil {
				return err
			}
			out, err := openOutput(output, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer out.Discard()
			if err := writeReport(out, merged, format, report.TextOptions{}); err != nil {
				return fmt.Errorf("writing the merged result: %v", err)
			}
			if err := out.Commit(); err != nil {
				return err
			}
			if output != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), mergeSummary(merged, output))
			}
			if bad := merged.Hail.Merged.Incomplete; len(bad) > 0 {
				for _, why := range bad {
					fmt.Fprintln(cmd.ErrOrStderr(), "hail merge: incomplete: "+why)
				}
				return &exitError{code: 2, msg: fmt.Sprintf("the merged run is incomplete (%d shard problem(s) above); the result is written and marked so", len(bad))}
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "", "write the merged result to this file (atomically) instead of stdout")
	fl.Var(choiceValue{&format, []string{"json", "text", "markdown", "html", "csv-seconds"}}, "output-format", "json (default: a result hail report and compare read), text, markdown, html or csv-seconds")
	fl.StringArrayVar(&failed, "failed", nil, "I=REASON: shard I failed (REASON as the scheduler says); merge the others, and its result if it wrote one as it was stopped, and mark the run incomplete (repeatable)")
	fl.BoolVar(&opt.Partial, "partial", false, "merge the shards there are: a missing shard marks the run incomplete instead of failing the merge")
	return cmd
}

// parseFailed parses the --failed I=REASON values.
func parseFailed(vals []string) (map[int]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[int]string{}
	for _, v := range vals {
		is, why, _ := strings.Cut(v, "=")
		i, err := strconv.Atoi(strings.TrimSpace(is))
		if err != nil || i < 0 {
			return nil, fmt.Errorf("--failed %q: write it as I=REASON, I the shard's index (from 0), e.g. --failed '2=OOMKilled'", v)
		}
		if why = strings.TrimSpace(why); why == "" {
			why = "no reason given"
		}
		out[i] = why
	}
	return out, nil
}

// mergeSummary is the line hail merge prints when it writes to a file, so
// a log (a Kubernetes merge Job's) shows what was merged.
func mergeSummary(r *result.Result, path string) string {
	m, c := r.Hail.Merged, r.Hail.Counts
	d := func(s float64) time.Duration { return time.Duration(s * 1e9).Round(time.Microsecond) }
	plural := "s"
	if m.Results == 1 {
		plural = ""
	}
	return fmt.Sprintf("hail merge: %d result%s (shards %v) -> %s: %d requests, %d errors, %.1f requests/s, p50 %s, p99 %s, max %s",
		m.Results, plural, m.Shards, path, c.Requests, c.Errors, r.Summary.RequestsPerSec,
		d(r.LatencyPercentiles.P50.Seconds()), d(r.LatencyPercentiles.P99.Seconds()), d(r.Summary.Slowest.Seconds()))
}

// expandPatterns expands arguments such as /results/shard-*.json that name
// no file themselves (a container image without a shell passes them as
// they are), in sorted order.
func expandPatterns(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if _, err := os.Stat(a); err == nil || !strings.ContainsAny(a, "*?[") {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", a, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no file matches", a)
		}
		out = append(out, m...)
	}
	return out, nil
}
