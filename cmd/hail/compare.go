package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"github.com/hail-loadgen/hail/result"
)

func newCompareCmd() *cobra.Command {
	var format, output, baseline string
	var labels, failOn []string
	var raw bool
	format = "text"
	cmd := &cobra.Command{
		Use:   "compare [NAME=]A.json[,A2.json,...] [NAME=]B.json[,B2.json,...] [[NAME=]C.json ...]",
		Short: "compare runs side by side (one or several each): the table for a review, a gate for CI",
		Long: `hail compare prints two or more sides against a baseline (the first, or --baseline): requests/s,
successful/s, mean, p50, p90, p99, p99.9, max, p99 and max of every sent request, error rate,
throughput, generator CPU and (when recorded with --target-pid) the target's RSS and CPU, each
side's value with its change against the baseline, marked better or worse; scenario runs get a
table per step, runs with stages a table per stage. With three or more sides, or stages, a summary
table comes first: requests/s, p99 of every sent request, error rate and the target's peak RSS,
for the run and for each stage — sides as columns.

Give several results per side, comma-separated, to see their spread: each side shows the
median and the min–max range, and a change whose ranges overlap is called noise. hail warns
first when the runs are unlike (another offered rate, connection count, scenario, stages, a
side the generator limited), and lists the settings that differ field by field; a different
URL alone is noted, not warned about: comparing implementations of a service under the same
load is what compare is for.

--fail-on makes compare a gate: rules in the thresholds' grammar on a metric's change against
the baseline, e.g. 'p99>+10%,rps<-5%' (p99 of every sent request rose by more than 10%, or
requests/s fell by more than 5%); 'p99_ok>+2ms' (responses only, absolute); 'error_rate>+0.5pp'
(percentage points); 'rss>+20%' (the target's peak RSS); 'stage=2:p99>+10%' or
'step=query:rps<-5%' for one stage or step. A rule fails a side when its change is that
regression and is significant — the sides' min–max ranges do not overlap — and compare then
exits 2 after writing the comparison. Noise cannot be judged from one run per side: there
--fail-on is refused (exit 1) unless --fail-on-raw says to decide on the raw change.

Name the sides with --label (once per side, in order) or NAME=FILE. Throughput (bytes/s) and
open connections are shown, not judged better or worse.`,
		Example: `  hail compare before.json after.json
  hail compare --label "Python REST" --label "Go REST" --label "Go gRPC" py.json go.json grpc.json --output-format markdown
  hail compare "Python REST=py1.json,py2.json,py3.json" "Go REST=go1.json,go2.json,go3.json" "Go gRPC=g1.json,g2.json,g3.json"
  hail compare main=m1.json,m2.json,m3.json pr=p1.json,p2.json,p3.json --fail-on 'p99>+10%,rps<-5%'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("expected two or more sides to compare (A.json B.json …), got %d", len(args))
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(labels) > len(args) {
				return fmt.Errorf("--label: give at most one per side (%d sides), got %d", len(args), len(labels))
			}
			rules, err := threshold.ParseChanges(failOn)
			if err != nil {
				return err
			}
			if raw && len(rules) == 0 {
				return fmt.Errorf("--fail-on-raw: it decides --fail-on's rules on the raw change: give --fail-on too")
			}
			var sides [][]*result.Result
			var names [][]string
			sideLabels := make([]string, len(args))
			for i, arg := range args {
				l, rs, ns, err := readSide(arg)
				if err != nil {
					return err
				}
				sides, names, sideLabels[i] = append(sides, rs), append(names, ns), l
			}
			copy(sideLabels, labels) // --label wins over NAME=FILE
			base, err := baselineIndex(baseline, sideLabels)
			if err != nil {
				return err
			}
			c := report.Compare(sides, names, sideLabels, base)
			seen := map[string]int{}
			for i := range c.Sides {
				if j, ok := seen[c.Sides[i].Label]; ok {
					return fmt.Errorf("--label: sides %d and %d are both named %q: give them different names", j+1, i+1, c.Sides[i].Label)
				}
				seen[c.Sides[i].Label] = i
			}
			var o report.CompareOutput
			if len(rules) > 0 {
				if err := judgeable(c, sides, raw); err != nil {
					return err
				}
				var ls []string
				for _, s := range c.Sides {
					ls = append(ls, s.Label)
				}
				o.Checks = threshold.Judge(rules, sides, ls, base, raw)
			}
			out, err := openOutput(output, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer out.Discard()
			switch format {
			case "markdown":
				err = report.WriteCompareMarkdown(out, c, o)
			case "html":
				err = report.WriteCompareHTML(out, c, o, plan.Version)
			default:
				err = report.WriteCompareText(out, c, o)
			}
			if err != nil {
				return err
			}
			if err := out.Commit(); err != nil {
				return err
			}
			return failedChecks(o.Checks)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.Var(choiceValue{&format, []string{"text", "markdown", "html"}}, "output-format", "text, markdown or html (one self-contained page)")
	fl.StringVarP(&output, "output", "o", "", "write to this file (atomically) instead of stdout")
	fl.StringArrayVar(&labels, "label", nil, "name a side for the table's columns (once per side, in order); NAME=FILE does the same")
	fl.StringVar(&baseline, "baseline", "", "the side the others are compared with: its label or its position from 1 (default: the first)")
	fl.StringArrayVar(&failOn, "fail-on", nil, "exit 2 when a side regresses significantly against the baseline: rules such as 'p99>+10%,rps<-5%' (repeatable)")
	fl.BoolVar(&raw, "fail-on-raw", false, "decide --fail-on on the raw change when a side and the baseline have one run each (noise cannot be judged)")
	return cmd
}

// baselineIndex is the side --baseline names (a label or a position from
// 1); the first when it is empty.
func baselineIndex(ref string, labels []string) (int, error) {
	if ref == "" {
		return 0, nil
	}
	for i, l := range labels {
		if l != "" && l == ref {
			return i, nil
		}
	}
	if k, err := strconv.Atoi(ref); err == nil && k >= 1 && k <= len(labels) {
		return k - 1, nil
	}
	return 0, fmt.Errorf("--baseline %q: names no side: give a side's label or its position (1 to %d)", ref, len(labels))
}

// judgeable refuses --fail-on where a side and the baseline have one run
// each, unless raw: one run per side has no spread to tell a regression
// from noise.
func judgeable(c *report.Comparison, sides [][]*result.Result, raw bool) error {
	if raw {
		return nil
	}
	var single []string
	for i, runs := range sides {
		if i != c.Baseline && len(runs) == 1 && len(sides[c.Baseline]) == 1 {
			single = append(single, c.Sides[i].Label)
		}
	}
	if len(single) == 0 {
		return nil
	}
	return fmt.Errorf("--fail-on: %s and the baseline %s have one run each: noise cannot be judged from one run per side; give several runs per side (%s=a1.json,a2.json,a3.json) or add --fail-on-raw to decide on the raw change",
		strings.Join(single, ", "), c.Sides[c.Baseline].Label, c.Sides[c.Baseline].Label)
}

// failedChecks is exit status 2 naming the failed --fail-on checks, or nil.
func failedChecks(checks []report.ChangeCheck) error {
	var failed []string
	for _, k := range checks {
		if k.Fail {
			failed = append(failed, fmt.Sprintf("%s: %s (%s)", k.Side, k.Rule, k.Measured))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &exitError{code: 2, msg: fmt.Sprintf("%d of %d --fail-on checks failed: %s", len(failed), len(checks), strings.Join(failed, "; "))}
}

// readSide reads the comma-separated results of one side, and its label
// when the argument is NAME=FILE[,FILE…] ("" when it has none; a file
// whose name holds "=" is taken as a file).
func readSide(arg string) (string, []*result.Result, []string, error) {
	label := ""
	if name, rest, ok := strings.Cut(arg, "="); ok && strings.TrimSpace(name) != "" {
		if _, err := os.Stat(strings.Split(arg, ",")[0]); err != nil {
			label, arg = strings.TrimSpace(name), rest
		}
	}
	var rs []*result.Result
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
