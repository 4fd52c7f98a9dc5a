package report

// hail compare as one self-contained HTML page: the same tables as the
// text and Markdown, sides as columns, each change coloured by its
// verdict.

import (
	"fmt"
	"io"
	"strings"
)

// WriteCompareHTML writes the comparison as an HTML page.
func WriteCompareHTML(w io.Writer, c *Comparison, o CompareOutput, version string) error {
	b := &strings.Builder{}
	var labels []string
	for _, s := range c.Sides {
		labels = append(labels, s.Label)
	}
	title := "hail compare — " + strings.Join(labels, " vs ")
	fmt.Fprintf(b, htmlHead, esc(version), esc(title), htmlCSS+compareCSS)
	fmt.Fprintf(b, "<header><h1>hail compare</h1><div class=\"sub\">%s</div></header>\n<main>\n", esc(strings.Join(labels, " · ")))
	b.WriteString("<table class=\"kv\">")
	for i, s := range c.Sides {
		runs := ""
		if len(s.Names) > 1 {
			runs = fmt.Sprintf(" (%d runs: their median, and min–max)", len(s.Names))
		}
		fmt.Fprintf(b, "<tr><th>%s</th><td>%s%s</td></tr>", esc(c.sideHeader(i)), esc(strings.Join(s.Names, ", ")), esc(runs))
	}
	b.WriteString("</table>\n")
	if len(c.Warnings) > 0 {
		b.WriteString("<div class=\"verdict warn\"><strong>Warning</strong><ul>")
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "<li>%s</li>", esc(w))
		}
		b.WriteString("</ul></div>\n")
	}
	head := func(class, first string) {
		fmt.Fprintf(b, "<table class=\"%s\"><tr><th>%s</th>", class, esc(first))
		for i := range c.Sides {
			fmt.Fprintf(b, "<th>%s</th>", esc(c.sideHeader(i)))
		}
		b.WriteString("</tr>")
	}
	if len(c.Settings) > 0 {
		section(b, "Settings that differ", "Each run's configuration, field by field, where the runs differ.")
		head("cmp", "field")
		for _, d := range c.Settings {
			fmt.Fprintf(b, "<tr><th><code>%s</code></th>", esc(d.Field))
			for _, v := range d.Values {
				fmt.Fprintf(b, "<td>%s</td>", esc(v))
			}
			b.WriteString("</tr>")
		}
		b.WriteString("</table>\n")
	}
	table := func(rows []CompareRow) {
		head("num cmp", "metric")
		for _, r := range rows {
			fmt.Fprintf(b, "<tr><th>%s</th>", esc(r.Metric))
			base := r.Cells[c.Baseline].Spread
			for i, cell := range r.Cells {
				if i == c.Baseline || cell.N == 0 {
					fmt.Fprintf(b, "<td>%s</td>", esc(cell.format(r.Unit)))
					continue
				}
				word := verdictWord[cell.Verdict]
				if word == "" {
					word = "(not judged)"
				}
				fmt.Fprintf(b, "<td class=\"%s\">%s<br><span class=\"chg\">%s %s</span></td>", verdictClass(cell.Verdict), esc(cell.format(r.Unit)),
					esc(cell.changeText(base)), esc(word))
			}
			b.WriteString("</tr>")
		}
		b.WriteString("</table>\n")
	}
	if h := c.Headline(); len(h) > 0 {
		section(b, "Summary", "Requests/s, p99 of every sent request (a failure at its elapsed time), error rate and the target's peak RSS, for the run and for each stage.")
		table(h)
	}
	section(b, "Every metric", "")
	table(c.Rows)
	for _, s := range c.Steps {
		fmt.Fprintf(b, "<h3>Step %s</h3>\n", esc(s.Name))
		table(s.Rows)
	}
	for _, s := range c.Stages {
		fmt.Fprintf(b, "<h3>%s (%s)</h3>\n", esc(strings.ToUpper(s.Label[:1])+s.Label[1:]), esc(s.Load))
		table(s.Rows)
	}
	if len(o.Checks) > 0 {
		section(b, "Fail on (--fail-on)", "")
		b.WriteString("<table class=\"kv\">")
		for _, k := range o.Checks {
			cls, word := "ok", "pass"
			if k.Fail {
				cls, word = "bad", "FAIL"
			}
			fmt.Fprintf(b, "<tr><th><code>%s</code> · %s</th><td class=\"%s\">%s</td><td>%s; %s</td></tr>", esc(k.Rule), esc(k.Side), cls, word, esc(k.Measured), esc(k.Why))
		}
		b.WriteString("</table>\n")
	}
	fmt.Fprintf(b, "<p class=\"note\">%s</p>\n", esc(c.noiseNote()))
	for _, n := range c.Notes {
		fmt.Fprintf(b, "<p class=\"note\">Note: %s</p>\n", esc(n))
	}
	fmt.Fprintf(b, "</main>\n<footer>hail %s · compare</footer>\n", esc(version))
	b.WriteString(htmlTail)
	_, err := io.WriteString(w, b.String())
	return err
}

// verdictClass is a change's cell class.
func verdictClass(v string) string {
	switch v {
	case "better":
		return "better"
	case "worse":
		return "worse"
	case "noise":
		return "noise"
	}
	return "plain"
}

// compareCSS styles the comparison's tables.
const compareCSS = `
table.cmp td{white-space:nowrap}
table.cmp td code,table.cmp th code{font-size:12px}
table.cmp .chg{font-size:12px}
table.cmp td.better .chg{color:#15803d;font-weight:600}
table.cmp td.worse .chg{color:#b91c1c;font-weight:600}
table.cmp td.noise .chg,table.cmp td.plain .chg{color:var(--muted)}
`
