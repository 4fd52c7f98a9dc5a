// One step's captures: a value from a JSON body, a header, a regex or the
// status, into a pool.

package scenario

import (
	"regexp"
	"strings"

	"github.com/hail-loadgen/hail/internal/scenario/jsonpath"
	"gopkg.in/yaml.v3"
)

func (l *loader) capture(what string, n *yaml.Node) (*capture, error) {
	c := &capture{}
	found := 0
	var first *yaml.Node
	err := l.fields(n, what, captureKeys, func(key string, k, v *yaml.Node) error {
		found++
		if found > 1 {
			return l.errAt(k, "%s: expected one of json, header, regex, status or llm, found several", what)
		}
		first = k
		switch key {
		case "json":
			p, err := l.str(v, what+".json")
			if err != nil {
				return err
			}
			c.kind = capJSON
			if c.path, err = jsonpath.Parse(p); err != nil {
				return l.errAt(v, "%s.json: %v", what, err)
			}
		case "header":
			h, err := l.str(v, what+".header")
			if err != nil {
				return err
			}
			c.kind, c.header = capHeader, strings.ToLower(strings.TrimSpace(h))
			if c.header == "" || strings.ContainsAny(c.header, " \t:\r\n") {
				return l.errAt(v, "%s.header: expected a header name such as Location or X-Request-Id, found %q", what, h)
			}
		case "regex":
			p, err := l.str(v, what+".regex")
			if err != nil {
				return err
			}
			re, err := regexp.Compile(p)
			if err != nil {
				return l.errAt(v, "%s.regex: expected a regular expression, found %q (%s)", what, p, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			c.kind, c.re = capRegex, re
			if re.NumSubexp() > 0 {
				c.group = 1
			}
		case "llm":
			f, err := l.str(v, what+".llm")
			if err != nil {
				return err
			}
			if f != "output_tokens" && f != "input_tokens" {
				return l.errAt(v, "%s.llm: expected output_tokens or input_tokens (of an llm step's stream), found %q", what, f)
			}
			c.kind, c.llmInput = capLLM, f == "input_tokens"
		case "status":
			b, err := l.boolean(v, what+".status")
			if err != nil {
				return err
			}
			if !b {
				return l.errAt(v, "%s.status: expected true (capture the status code), found false", what)
			}
			c.kind = capStatus
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if first == nil {
		return nil, l.errAt(n, "%s: expected one of json, header, regex, status or llm, found none", what)
	}
	return c, nil
}
