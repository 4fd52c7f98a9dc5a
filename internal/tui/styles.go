// The view's colors: lipgloss styles for every element, the chart lines'
// palette, and cached escape codes for painting cells fast.

package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// styles are the view's colors; with colors off they render plain text.
type styles struct {
	on                        bool
	r                         *lipgloss.Renderer
	paints                    map[lipgloss.TerminalColor][2]string
	border, title, axis, dim  lipgloss.Style
	label, value, brand       lipgloss.Style
	good, warn, bad, alert    lipgloss.Style
	rps, errs                 lipgloss.Style
	p50, p90, p99, p999, pmax lipgloss.Style
	histBars                  lipgloss.Style
}

// The colors of the chart lines (terminal palette indices); the legends
// use the same.
const (
	colRPS  = lipgloss.Color("10")
	colErr  = lipgloss.Color("9")
	colP50  = lipgloss.Color("10")
	colP90  = lipgloss.Color("14")
	colP99  = lipgloss.Color("11")
	colP999 = lipgloss.Color("13")
	colMax  = lipgloss.Color("9")
)

// newStyles makes the styles on r; on says whether colors are on.
func newStyles(r *lipgloss.Renderer, on bool) styles {
	c := func(code string) lipgloss.Style { return r.NewStyle().Foreground(lipgloss.Color(code)) }
	return styles{
		on: on, r: r,
		border: c("8"), title: c("14").Bold(true), axis: c("8"), dim: c("8"),
		label: r.NewStyle(), value: r.NewStyle().Bold(true), brand: c("13").Bold(true),
		good: c("10"), warn: c("11"), bad: c("9"), alert: r.NewStyle().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("1")),
		rps: c(string(colRPS)), errs: c(string(colErr)),
		p50: c(string(colP50)), p90: c(string(colP90)), p99: c(string(colP99)), p999: c(string(colP999)), pmax: c(string(colMax)),
		histBars: c("12"),
	}
}

// paint returns the escape codes that color text c and reset it.
func (s *styles) paint(c lipgloss.TerminalColor) [2]string {
	if p, ok := s.paints[c]; ok {
		return p
	}
	if s.paints == nil {
		s.paints = map[lipgloss.TerminalColor][2]string{}
	}
	var p [2]string
	if pre, post, ok := strings.Cut(s.r.NewStyle().Foreground(c).Render("\x00"), "\x00"); ok {
		p = [2]string{pre, post}
	}
	s.paints[c] = p
	return p
}
