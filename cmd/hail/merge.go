package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"hail/internal/report"
)

func newMergeCmd() *cobra.Command {
	var output, format string
	format = "json"
	cmd := &cobra.Command{
		Use:   "merge SHARD.json... -o TOTAL.json",
		Short: "merge the shards of a distributed run into one exact result",
		Long: `hail merge combines the results of the shards of one distributed run (--shard I/N) into
one result: histograms and counts add exactly, every summary and percentile is recomputed
from the sums, and the per-second series are aligned by wall clock. The shards' configurations
must agree (a mismatch is an error naming the field), and every shard must be there.
See docs/distributed.md.`,
		Example: `  hail merge results/shard-*.json -o total.json
  hail merge s0.json s1.json s2.json --output-format text`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := expandPatterns(args)
			if err != nil {
				return err
			}
			var rs []*report.Result
			for _, p := range args {
				r, err := readResult(p)
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			merged, err := report.Merge(rs, args)
			if err != nil {
				return err
			}
			out, err := openOutput(output)
			if err != nil {
				return err
			}
			defer out.Discard()
			if err := writeReport(out, merged, format, report.TextOptions{}); err != nil {
				return fmt.Errorf("writing the merged result: %v", err)
			}
			return out.Commit()
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "", "write the merged result to this file (atomically) instead of stdout")
	fl.Var(choiceValue{&format, []string{"json", "text", "markdown", "html", "csv-seconds"}}, "output-format", "json (default: a result hail report and compare read), text, markdown, html or csv-seconds")
	return cmd
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
