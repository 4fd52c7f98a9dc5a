// Text layout for the view: cell widths (escape sequences excluded),
// truncating and padding to a width, flowing tokens and wrapping words onto
// lines, splitting a width into columns, joining blocks side by side, and
// framed boxes.

package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// fit truncates s to w cells, padding it to exactly w when pad is set.
func fit(s string, w int, pad bool) string {
	if w <= 0 {
		return ""
	}
	n := width(s)
	if n > w {
		s = ansi.Truncate(s, w, "")
		n = width(s)
	}
	if pad && n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// width is the cells s takes on screen, escape sequences excluded. The
// view's own glyphs (box drawing, blocks, braille, Latin, punctuation)
// are one cell each and counted fast; anything else is measured properly.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b { // CSI ... final byte
			i++
			if i < len(s) && s[i] == '[' {
				i++
				for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
					i++
				}
			}
			i++
			continue
		}
		if c < 0x80 {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x2e80 || r >= 0x0300 && r < 0x0370 || r >= 0x1100 && r < 0x1200 || r >= 0x200b && r < 0x2010 {
			return ansi.StringWidth(s)
		}
		n++
		i += size
	}
	return n
}

// flow lays tokens out on lines of at most w cells, two spaces apart.
func flow(tokens []string, w int) []string {
	var out []string
	cur, cw := "", 0
	for _, t := range tokens {
		tw := width(t)
		if cw > 0 && cw+2+tw > w {
			out = append(out, cur)
			cur, cw = "", 0
		}
		if cw > 0 {
			cur += "  "
			cw += 2
		}
		cur += t
		cw += tw
	}
	if cw > 0 {
		out = append(out, cur)
	}
	return out
}

// wrap word-wraps text to lines of at most w cells.
func wrap(text string, w int) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(text) {
		if cur != "" && width(cur)+1+width(word) > w {
			out = append(out, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// split divides w cells into n widths that add up to w.
func split(w, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = w / n
		if i < w%n {
			out[i]++
		}
	}
	return out
}

// hjoin puts equally tall blocks side by side.
func hjoin(blocks ...[]string) []string {
	if len(blocks) == 0 {
		return nil
	}
	out := make([]string, len(blocks[0]))
	for i := range out {
		var b strings.Builder
		for _, bl := range blocks {
			if i < len(bl) {
				b.WriteString(bl[i])
			}
		}
		out[i] = b.String()
	}
	return out
}

// box frames body in a w×h rounded border with a title.
func (m *Model) box(title string, w, h int, body []string) []string {
	if h <= 0 || w <= 0 {
		return nil
	}
	out := make([]string, 0, h)
	if w < 4 || h < 2 {
		for range h {
			out = append(out, strings.Repeat(" ", w))
		}
		return out
	}
	inner := w - 2
	t := fit(" "+title+" ", inner-1, false)
	top := m.st.border.Render("╭─") + m.st.title.Render(t) + m.st.border.Render(strings.Repeat("─", max(inner-1-width(t), 0))+"╮")
	out = append(out, top)
	side := m.st.border.Render("│")
	for i := range h - 2 {
		l := ""
		if i < len(body) {
			l = body[i]
		}
		out = append(out, side+fit(l, inner, true)+side)
	}
	return append(out, m.st.border.Render("╰"+strings.Repeat("─", inner)+"╯"))
}
