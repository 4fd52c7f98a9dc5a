package dataset

// Counter counts the tokens of a text.
type Counter interface {
	Count(text []byte) int
}

// Words counts a text's whitespace-separated pieces: maximal runs of
// bytes other than space, tab, newline, vertical tab, form feed and
// carriage return (the mock server's count, and the count of hail's own
// prompts).
type Words struct{}

// Count implements Counter.
func (Words) Count(text []byte) int {
	n := 0
	in := false
	for _, c := range text {
		space := c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}
