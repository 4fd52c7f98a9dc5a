package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"hail/internal/report"
)

func newCompareCmd() *cobra.Command {
	var format, output string
	format = "text"
	cmd := &cobra.Command{
		Use:   "compare A.json[,A2.json,...] B.json[,B2.json,...]",
		Short: "compare two runs (or two sets of runs): the before/after table for a review",
		Long: `hail compare prints side A against side B: requests/s, mean, p50, p90, p99, p99.9, max,
error rate, throughput, generator CPU and (when recorded with --target-pid) the target's RSS
and CPU, with the change in percent marked better or worse; scenario runs get a table per step.

Give several results per side, comma-separated, to see their spread: each side shows the
median and the min–max range, and a change whose ranges overlap is called noise. hail warns
when the runs are not comparable (different URL, model, rate, connections, ...).`,
		Example: `  hail compare before.json after.json
  hail compare a1.json,a2.json,a3.json b1.json,b2.json,b3.json --output-format markdown`,
		Args:          cobra.ExactArgs(2),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, an, err := readSide(args[0])
			if err != nil {
				return err
			}
			b, bn, err := readSide(args[1])
			if err != nil {
				return err
			}
			c := report.Compare(a, b, an, bn)
			out, err := openOutput(output)
			if err != nil {
				return err
			}
			defer out.Discard()
			if format == "markdown" {
				err = report.WriteCompareMarkdown(out, c)
			} else {
				err = report.WriteCompareText(out, c)
			}
			if err != nil {
				return err
			}
			return out.Commit()
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.Var(choiceValue{&format, []string{"text", "markdown"}}, "output-format", "text or markdown")
	fl.StringVarP(&output, "output", "o", "", "write to this file (atomically) instead of stdout")
	return cmd
}

// readSide reads the comma-separated results of one side.
func readSide(arg string) ([]*report.Result, []string, error) {
	var rs []*report.Result
	var names []string
	for _, p := range strings.Split(arg, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		r, err := readResult(p)
		if err != nil {
			return nil, nil, err
		}
		rs = append(rs, r)
		names = append(names, p)
	}
	if len(rs) == 0 {
		return nil, nil, fmt.Errorf("%q names no result file", arg)
	}
	return rs, names, nil
}
