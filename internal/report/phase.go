package report

import (
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"strings"
)

// namedPhase is a setup or teardown with its name for headings.
type namedPhase struct {
	name string
	ph   *result.Phase
}

// phasesOf are r's setup and teardown, those it has.
func phasesOf(r *result.Result) []namedPhase {
	var out []namedPhase
	for _, x := range []namedPhase{{"Setup", r.Hail.Setup}, {"Teardown", r.Hail.Teardown}} {
		if x.ph != nil {
			out = append(out, x)
		}
	}
	return out
}

// phaseLine is one step of a phase in a line: requests, status codes,
// errors, and latency.
func phaseLine(s *result.StepResult, c colorer) string {
	line := fmt.Sprintf("%s ×%d  %s", s.Name, s.Counts.Requests, codeList(s.StatusCodeDistribution, c))
	if len(s.ErrorDistribution) > 0 {
		line += "  " + countList(s.ErrorDistribution)
	}
	if s.Counts.Responses > 0 {
		line += fmt.Sprintf("  p50 %s  max %s", fmtDur(s.Latency.P50.Seconds()), fmtDur(s.Latency.Max.Seconds()))
	}
	return line
}

// writePhasesText writes the setup and teardown of a scenario run.
func writePhasesText(b *strings.Builder, r *result.Result, c colorer) {
	for _, x := range phasesOf(r) {
		fmt.Fprintf(b, "\n%s (%.2fs, not in the numbers above):\n", x.name, x.ph.Duration.Seconds())
		for i := range x.ph.Steps {
			fmt.Fprintf(b, "  %s\n", phaseLine(&x.ph.Steps[i], c))
		}
		if x.ph.Failed != "" {
			fmt.Fprintf(b, "  %s\n", c.warn("stopped: "+x.ph.Failed))
		}
	}
}

// writePhasesMarkdown writes the setup and teardown as a table.
func writePhasesMarkdown(b *strings.Builder, r *result.Result) {
	for _, x := range phasesOf(r) {
		fmt.Fprintf(b, "| %s step | requests | statuses | errors | p50 | max |\n| --- | ---: | --- | --- | ---: | ---: |\n", strings.ToLower(x.name))
		for _, s := range x.ph.Steps {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s |\n", mdEscape(s.Name), s.Counts.Requests, codeList(s.StatusCodeDistribution, colorer{}),
				mdEscape(countList(s.ErrorDistribution)), durNA(s.Latency.P50.Seconds(), s.Counts.Responses == 0), durNA(s.Latency.Max.Seconds(), s.Counts.Responses == 0))
		}
		if x.ph.Failed != "" {
			fmt.Fprintf(b, "\n%s stopped: %s\n", x.name, mdEscape(x.ph.Failed))
		}
		fmt.Fprintln(b)
	}
}

// writePhasesHTML writes the setup and teardown as tables.
func writePhasesHTML(b *strings.Builder, r *result.Result) {
	for _, x := range phasesOf(r) {
		section(b, x.name, fmt.Sprintf("Run once on connections of its own, in %.2fs; not part of the numbers above.", x.ph.Duration.Seconds()))
		b.WriteString("<table class=\"num\"><tr><th>step</th><th>requests</th><th>status codes</th><th>errors</th><th>p50</th><th>max</th></tr>")
		for _, s := range x.ph.Steps {
			fmt.Fprintf(b, "<tr><th>%s</th><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", esc(s.Name), s.Counts.Requests,
				esc(codeList(s.StatusCodeDistribution, colorer{})), esc(countList(s.ErrorDistribution)), durNA(s.Latency.P50.Seconds(), s.Counts.Responses == 0),
				durNA(s.Latency.Max.Seconds(), s.Counts.Responses == 0))
		}
		b.WriteString("</table>\n")
		if x.ph.Failed != "" {
			fmt.Fprintf(b, "<p class=\"bad\">stopped: %s</p>\n", esc(x.ph.Failed))
		}
	}
}

// countList is "kind ×n, kind ×m", most frequent first.
func countList(m map[string]int64) string {
	var parts []string
	for _, k := range sortedByCount(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
