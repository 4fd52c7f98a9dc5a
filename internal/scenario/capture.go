package scenario

import (
	"regexp"
	"strconv"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/scenario/jsonpath"
	"github.com/hail-loadgen/hail/internal/scenario/values"
)

// A capture takes one value from a response into a pool (and into the
// virtual user's "last" slot of the same name): from the JSON body by a
// path, from a header, from the body by a regex, or the status code.
type capture struct {
	kind   captureKind
	name   string
	id     int // index among the scenario's capture names
	pool   *values.Pool
	path   jsonpath.Path
	re     *regexp.Regexp
	group  int
	header string // lower case
	// llmInput: an llm capture takes the input tokens, not the output's
	llmInput bool
}

type captureKind uint8

const (
	capJSON captureKind = iota
	capHeader
	capRegex
	capStatus
	capLLM // an llm step's input or output tokens (llmOutput)
)

// tokens is an llm capture's value: the stream's output tokens (or input
// tokens, llmInput), when it had some.
func (c *capture) tokens(scratch *[]byte, in, out int64, ok bool) ([]byte, bool) {
	n := out
	if c.llmInput {
		n = in
	}
	if !ok || n <= 0 {
		return nil, false
	}
	*scratch = strconv.AppendInt((*scratch)[:0], n, 10)
	return *scratch, true
}

// extract returns the captured value (valid until the next call with the
// same scratch) and whether there was one.
func (c *capture) extract(p *http1.Parser, scratch *[]byte) ([]byte, bool) {
	switch c.kind {
	case capStatus:
		*scratch = statusValue((*scratch)[:0], p.Status)
		return *scratch, true
	case capHeader:
		if c.header == "content-length" && p.ContentLength >= 0 {
			*scratch = strconv.AppendInt((*scratch)[:0], p.ContentLength, 10)
			return *scratch, true
		}
		for i, name := range p.WantHeaders {
			if name == c.header && i < len(p.HeaderValues) {
				return p.HeaderValues[i], len(p.HeaderValues[i]) > 0
			}
		}
		return nil, false
	case capRegex:
		m := c.re.FindSubmatchIndex(p.Body)
		if m == nil || m[2*c.group] < 0 {
			return nil, false
		}
		return p.Body[m[2*c.group]:m[2*c.group+1]], true
	}
	return c.path.Lookup(p.Body, scratch)
}
