package report

// hail compare as text and Markdown: the sides, the warnings before any
// change, the settings that differ, the summary table (requests/s, p99,
// error rate, target RSS, and per stage), every metric, the steps and
// stages, the --fail-on checks and the notes.

import (
	"fmt"
	"io"
	"strings"
)

// ChangeCheck is one --fail-on rule judged for one side against the
// baseline.
type ChangeCheck struct {
	// Rule is the rule as written ("p99>+10%"); Side the side's label.
	Rule, Side string
	// Measured says what changed: "p99 1.20ms → 1.48ms (+23.5%)".
	Measured string
	// Fail is set when the change is a regression the rule names and is
	// significant (or, with one run per side and raw judging, at all).
	Fail bool
	// Why says how it was judged: outside or inside the runs' spread, or
	// on the raw change.
	Why string
}

// CompareOutput is what a rendering of a comparison adds to it: the
// --fail-on checks, if any.
type CompareOutput struct {
	Checks []ChangeCheck
}

var verdictWord = map[string]string{"better": "better", "worse": "worse", "noise": "noise", "same": "same", "": ""}

var verdictMark = map[string]string{"better": "✅ better", "worse": "❌ worse", "noise": "〰️ noise", "same": "same", "": "(not judged)"}

// sideHeader names side i as a column: its label, and "(baseline)".
func (c *Comparison) sideHeader(i int) string {
	if i == c.Baseline && len(c.Sides) > 1 {
		return c.Sides[i].Label + " (baseline)"
	}
	return c.Sides[i].Label
}

// sideLine introduces side i above the tables: its label, whether it is
// the baseline, its files and, for several, that its values are their
// median and range.
func (c *Comparison) sideLine(i int) string {
	s := c.Sides[i]
	line := c.sideHeader(i) + ": " + strings.Join(s.Names, ", ")
	if len(s.Names) > 1 {
		line += fmt.Sprintf(" (%d runs: their median, and min–max)", len(s.Names))
	}
	return line
}

// WriteCompareText writes the comparison as aligned text tables.
func WriteCompareText(w io.Writer, c *Comparison, o CompareOutput) error {
	b := &strings.Builder{}
	for i := range c.Sides {
		fmt.Fprintln(b, c.sideLine(i))
	}
	fmt.Fprintln(b)
	if len(c.Warnings) > 0 { // before any change is read
		fmt.Fprintf(b, "WARNING:\n")
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "  - %s\n", w)
		}
		fmt.Fprintln(b)
	}
	if len(c.Settings) > 0 {
		fmt.Fprintf(b, "Settings that differ:\n")
		rows := [][]string{append([]string{"field"}, c.labels()...)}
		for _, d := range c.Settings {
			rows = append(rows, append([]string{d.Field}, d.Values...))
		}
		writeAligned(b, rows, len(rows[0]))
		fmt.Fprintln(b)
	}
	table := func(rows []CompareRow) {
		head := []string{"metric"}
		for i := range c.Sides {
			head = append(head, c.sideHeader(i))
			if i != c.Baseline {
				head = append(head, "change")
			}
		}
		cells := [][]string{head}
		for _, r := range rows {
			line := []string{r.Metric}
			base := r.Cells[c.Baseline].Spread
			for i, cell := range r.Cells {
				line = append(line, cell.format(r.Unit))
				if i != c.Baseline {
					line = append(line, strings.TrimSpace(cell.changeText(base)+" "+verdictWord[cell.Verdict]))
				}
			}
			cells = append(cells, line)
		}
		writeAligned(b, cells, 1)
	}
	if h := c.Headline(); len(h) > 0 && (len(c.Sides) > 2 || len(c.Stages) > 0) {
		fmt.Fprintf(b, "Summary:\n")
		table(h)
		fmt.Fprintf(b, "\nEvery metric:\n")
	}
	table(c.Rows)
	for _, s := range c.Steps {
		fmt.Fprintf(b, "\nStep %s:\n", s.Name)
		table(s.Rows)
	}
	for _, s := range c.Stages {
		fmt.Fprintf(b, "\n%s (%s):\n", strings.ToUpper(s.Label[:1])+s.Label[1:], s.Load)
		table(s.Rows)
	}
	if len(o.Checks) > 0 {
		fmt.Fprintf(b, "\nFail on (--fail-on):\n")
		for _, k := range o.Checks {
			verdict := "pass"
			if k.Fail {
				verdict = "FAIL"
			}
			fmt.Fprintf(b, "  %s  %s  %s: %s; %s\n", verdict, k.Rule, k.Side, k.Measured, k.Why)
		}
	}
	fmt.Fprintln(b)
	fmt.Fprintf(b, "%s\n", c.noiseNote())
	for _, n := range c.Notes {
		fmt.Fprintf(b, "Note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// labels are the sides' labels, the baseline's marked.
func (c *Comparison) labels() []string {
	out := make([]string, len(c.Sides))
	for i := range c.Sides {
		out[i] = c.sideHeader(i)
	}
	return out
}

// noiseNote says how changes were told from noise.
func (c *Comparison) noiseNote() string {
	if c.OneRunEach() {
		return "One run per side: no spread to tell a change from noise. Give several runs per side (A1.json,A2.json,A3.json) for that."
	}
	return "A change is called noise when the min–max ranges of the runs overlap (a side of one run is a range of one value)."
}

// WriteCompareMarkdown writes the comparison as Markdown tables, sides as
// columns, for pasting into a review.
func WriteCompareMarkdown(w io.Writer, c *Comparison, o CompareOutput) error {
	b := &strings.Builder{}
	for i, s := range c.Sides {
		tag := ""
		if i == c.Baseline && len(c.Sides) > 1 {
			tag = " (baseline)"
		}
		runs := ""
		if len(s.Names) > 1 {
			runs = fmt.Sprintf(" (%d runs: their median, and min–max)", len(s.Names))
		}
		fmt.Fprintf(b, "**%s**%s: %s%s  \n", mdEscape(s.Label), tag, mdCode(s.Names), runs)
	}
	fmt.Fprintln(b)
	if len(c.Warnings) > 0 { // before any change is read
		fmt.Fprintf(b, "> **Warning**\n")
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "> - %s\n", mdEscape(w))
		}
		fmt.Fprintln(b)
	}
	header := func(first string) {
		fmt.Fprintf(b, "| %s |", first)
		for i := range c.Sides {
			fmt.Fprintf(b, " %s |", mdEscape(c.sideHeader(i)))
		}
		fmt.Fprintf(b, "\n| --- |%s\n", strings.Repeat(" ---: |", len(c.Sides)))
	}
	if len(c.Settings) > 0 {
		fmt.Fprintf(b, "**Settings that differ**\n\n")
		header("field")
		for _, d := range c.Settings {
			fmt.Fprintf(b, "| `%s` |", d.Field)
			for _, v := range d.Values {
				fmt.Fprintf(b, " %s |", mdEscape(v))
			}
			fmt.Fprintln(b)
		}
		fmt.Fprintln(b)
	}
	table := func(rows []CompareRow) {
		header("metric")
		for _, r := range rows {
			fmt.Fprintf(b, "| %s |", mdEscape(r.Metric))
			base := r.Cells[c.Baseline].Spread
			for i, cell := range r.Cells {
				v := cell.format(r.Unit)
				if i != c.Baseline && cell.N > 0 {
					v += " (" + cell.changeText(base) + " " + verdictMark[cell.Verdict] + ")"
				}
				fmt.Fprintf(b, " %s |", v)
			}
			fmt.Fprintln(b)
		}
	}
	if h := c.Headline(); len(h) > 0 && (len(c.Sides) > 2 || len(c.Stages) > 0) {
		table(h)
		fmt.Fprintf(b, "\n<details><summary>Every metric</summary>\n\n")
		table(c.Rows)
		fmt.Fprintf(b, "\n</details>\n")
	} else {
		table(c.Rows)
	}
	for _, s := range c.Steps {
		fmt.Fprintf(b, "\n**Step %s**\n\n", mdEscape(s.Name))
		table(s.Rows)
	}
	for _, s := range c.Stages {
		fmt.Fprintf(b, "\n**%s** (%s)\n\n", mdEscape(strings.ToUpper(s.Label[:1])+s.Label[1:]), mdEscape(s.Load))
		table(s.Rows)
	}
	if len(o.Checks) > 0 {
		fmt.Fprintf(b, "\n| --fail-on | side | measured | |\n| --- | --- | --- | --- |\n")
		for _, k := range o.Checks {
			mark := "✅ pass"
			if k.Fail {
				mark = "❌ FAIL"
			}
			fmt.Fprintf(b, "| `%s` | %s | %s; %s | %s |\n", k.Rule, mdEscape(k.Side), mdEscape(k.Measured), mdEscape(k.Why), mark)
		}
	}
	fmt.Fprintf(b, "\n_%s_\n", mdEscape(c.noiseNote()))
	for _, n := range c.Notes {
		fmt.Fprintf(b, "\n_Note: %s_\n", mdEscape(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCode(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + strings.ReplaceAll(n, "`", "'") + "`"
	}
	return strings.Join(out, ", ")
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(s)
}
