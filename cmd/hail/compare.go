package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/report"
)

func newCompareCmd() *cobra.Command {
	var format, output string
	var labels []string
	format = "text"
	cmd := &cobra.Command{
		Use:   "compare [NAME=]A.json[,A2.json,...] [NAME=]B.json[,B2.json,...]",
		Short: "compare two runs (or two sets of runs): the before/after table for a review",
		Long: `hail compare prints side A against side B: requests/s, mean, p50, p90, p99, p99.9, max,
error rate, throughput, generator CPU and (when recorded with --target-pid) the target's RSS
and CPU, with the change in percent marked better or worse; scenario runs get a table per step.

Give several results per side, comma-separated, to see their spread: each side shows the
median and the min–max range, and a change whose ranges overlap is called noise. hail warns
when the runs are not comparable (different model, rate, connections, scenario, ...); a
different URL alone is noted, not warned about: comparing two implementations of a service
under the same load is what compare is for.

Name the sides with --label (twice: A, then B) or NAME=FILE; the table's columns carry the
names. Requests/s of a run made with -w counts its planned duration, not the time it then
waited for in-flight requests. Throughput (bytes/s) is shown, not judged better or worse.`,
		Example: `  hail compare before.json after.json
  hail compare --label "Python VMM" --label "Go VMM" py.json go.json
  hail compare "Python VMM=py1.json,py2.json,py3.json" "Go VMM=go1.json,go2.json,go3.json" --output-format markdown`,
		Args:          cobra.ExactArgs(2),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(labels) > 2 {
				return fmt.Errorf("--label: give at most two (side A, then side B), got %d", len(labels))
			}
			al, a, an, err := readSide(args[0])
			if err != nil {
				return err
			}
			bl, b, bn, err := readSide(args[1])
			if err != nil {
				return err
			}
			c := report.Compare(a, b, an, bn)
			for i, l := range []*string{&al, &bl} {
				if i < len(labels) {
					*l = labels[i]
				}
			}
			if al != "" {
				c.A.Label = al
			}
			if bl != "" {
				c.B.Label = bl
			}
			if c.A.Label == c.B.Label {
				return fmt.Errorf("--label: both sides are named %q: give them different names", c.A.Label)
			}
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
	fl.StringArrayVar(&labels, "label", nil, "name a side for the table's columns (give it twice: A, then B); NAME=FILE does the same")
	return cmd
}

// readSide reads the comma-separated results of one side, and its label
// when the argument is NAME=FILE[,FILE…] ("" when it has none; a file
// whose name holds "=" is taken as a file).
func readSide(arg string) (string, []*report.Result, []string, error) {
	label := ""
	if name, rest, ok := strings.Cut(arg, "="); ok && strings.TrimSpace(name) != "" {
		if _, err := os.Stat(strings.Split(arg, ",")[0]); err != nil {
			label, arg = strings.TrimSpace(name), rest
		}
	}
	var rs []*report.Result
	var names []string
	for _, p := range strings.Split(arg, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		r, err := readResult(p)
		if err != nil {
			return "", nil, nil, err
		}
		rs = append(rs, r)
		names = append(names, p)
	}
	if len(rs) == 0 {
		return "", nil, nil, fmt.Errorf("%q names no result file", arg)
	}
	return label, rs, names, nil
}
