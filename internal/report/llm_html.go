package report

// The HTML report's chart of hail llm's output tokens per second.

import (
	"fmt"
	"math"

	"github.com/hail-loadgen/hail/internal/stats"
)

// tokensChart draws the output tokens that arrived in each second (as
// hail.series[].tokens counts them: by their arrival, a failed or cut
// stream's taken back when it ended).
func tokensChart(id string, series []stats.Second) string {
	series = chartSeries(series)
	xs, xa := timeAxis(series)
	tok := make([]float64, len(series))
	tips := make([]string, len(series))
	top := 0.0
	for i, s := range series {
		if s.Span > 0 {
			tok[i] = float64(s.Tokens) / s.Span.Seconds()
		}
		top = math.Max(top, tok[i])
		tips[i] = fmt.Sprintf("second %d: %.0f output tokens/s, %d requests in flight", s.Index+1, tok[i], s.InFlight)
	}
	c := newChart(id, "Output tokens/s", xa, linearAxis(math.Max(top*1.05, 1), compactNum), "time into the run", "tokens per second")
	if len(series) == 0 {
		c.empty("no whole second in this run")
	}
	l := line{name: "output tokens/s", color: palette.blue, ys: tok}
	c.polyline(xs, l)
	c.hoverColumns(xs, tips)
	return c.done()
}
