// One step's checks (expect:): the statuses it expects, text its body must
// contain, values at JSON paths, and header values.

package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/scenario/jsonpath"
	"github.com/hail-loadgen/hail/internal/status"
)

var expectKeys = []string{"status", "body_contains", "json", "header"}

// stepExpect compiles the step's expect mapping (nil when it has none).
// Values may use {{var.NAME}} and {{env.NAME}}, folded at load.
func (l *loader) stepExpect(st *Step, n *yaml.Node) error {
	if n == nil {
		return nil
	}
	what := st.Name + ".expect"
	err := l.fields(n, what, expectKeys, func(key string, k, v *yaml.Node) error {
		switch key {
		case "status":
			c, err := l.expectStatus(v, what+".status")
			if err != nil {
				return err
			}
			st.checks = append(st.checks, c)
		case "body_contains":
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items, _ = l.list(v, what+".body_contains")
			}
			for _, it := range items {
				s, err := l.fixedString(it, what+".body_contains")
				if err != nil {
					return err
				}
				if s == "" {
					return l.errAt(it, "%s.body_contains: expected the text the body must contain, found an empty string", what)
				}
				st.checks = append(st.checks, &check{kind: checkBody, needle: []byte(s), desc: fmt.Sprintf("body contains %q", s)})
			}
		case "json":
			return l.fields(v, what+".json", nil, func(path string, k, v *yaml.Node) error {
				c, err := l.expectJSON(path, k, v, what+".json")
				if err == nil {
					st.checks = append(st.checks, c)
				}
				return err
			})
		case "header":
			return l.fields(v, what+".header", nil, func(name string, k, v *yaml.Node) error {
				if !isToken(name) {
					return l.errAt(k, "%s.header: expected a header name such as Content-Type, found %q", what, name)
				}
				if o := l.cur; o >= 0 && l.s.Origins[o].HTTP2 {
					why := "this file's gRPC steps make the whole run speak HTTP/2"
					if len(l.s.Origins) > 1 {
						why = "its target, " + l.s.Origins[o].Name + ", speaks HTTP/2"
					}
					return l.errAt(k, "%s.header: header checks need HTTP/1.1, but %s, whose engine keeps no response headers: check the body or the status instead", what, why)
				}
				val, err := l.fixedString(v, what+".header."+name)
				if err != nil {
					return err
				}
				st.checks = append(st.checks, &check{kind: checkHeader, header: strings.ToLower(name), value: []byte(strings.TrimSpace(val)),
					desc: fmt.Sprintf("header %s = %q", name, val)})
				return nil
			})
		}
		return nil
	})
	for _, c := range st.checks {
		st.checksStatus = st.checksStatus || c.kind == checkStatus
		st.checksBody = st.checksBody || c.kind == checkBody || c.kind == checkJSON
	}
	return err
}

// expectStatus reads the statuses a step expects: 201, [201, 202], "2xx",
// or for a gRPC step gRPC status names (OK, NotFound).
func (l *loader) expectStatus(v *yaml.Node, what string) (*check, error) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items, _ = l.list(v, what)
		if len(items) == 0 {
			return nil, l.errAt(v, "%s: expected at least one status, found an empty list", what)
		}
	}
	c := &check{kind: checkStatus}
	for _, it := range items {
		bad := l.errAt(it, "%s: expected status codes such as 201, [200, 204] or 2xx (gRPC: OK, NotFound, …), found %s", what, describe(it))
		if it.Kind != yaml.ScalarNode {
			return nil, bad
		}
		s := strings.ToLower(strings.TrimSpace(it.Value))
		if len(s) == 3 && strings.HasSuffix(s, "xx") && s[0] >= '1' && s[0] <= '5' {
			lo := int(s[0]-'0') * 100
			c.codes = append(c.codes, [2]int{lo, lo + 99})
			continue
		}
		if slot, ok := status.ByName(strings.TrimSpace(it.Value)); ok && status.IsGRPC(slot) {
			c.codes = append(c.codes, [2]int{slot, slot})
			continue
		}
		code, err := strconv.Atoi(s)
		if err != nil || code < 100 || code > 999 {
			return nil, bad
		}
		c.codes = append(c.codes, [2]int{code, code})
	}
	c.desc = "status " + statusDesc(c.codes)
	return c, nil
}

// expectJSON reads one json check: a path (as captures write it) and the
// value it must hold.
func (l *loader) expectJSON(path string, k, v *yaml.Node, what string) (*check, error) {
	segs, err := jsonpath.Parse(path)
	if err != nil {
		return nil, l.errAt(k, "%s: %v", what, err)
	}
	c := &check{kind: checkJSON, path: segs}
	if v.Kind != yaml.ScalarNode {
		return nil, l.errAt(v, "%s.%s: expected a string, number, true, false or null, found %s", what, path, describe(v))
	}
	switch v.Tag {
	case "!!null":
		c.want.kind = '0'
		c.desc = fmt.Sprintf("json %s = null", path)
		return c, nil
	case "!!bool":
		b, _ := l.boolean(v, what)
		c.want = jsonWant{kind: 'b', text: []byte(strconv.FormatBool(b))}
	case "!!int", "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
		if err != nil {
			return nil, l.errAt(v, "%s.%s: expected a number, found %s", what, path, describe(v))
		}
		c.want = jsonWant{kind: 'n', num: f, text: []byte(v.Value)}
	default:
		s, err := l.fixedString(v, what+"."+path)
		if err != nil {
			return nil, err
		}
		c.want = jsonWant{kind: 's', text: []byte(s)}
		c.desc = fmt.Sprintf("json %s = %q", path, s)
		return c, nil
	}
	c.desc = fmt.Sprintf("json %s = %s", path, c.want.text)
	return c, nil
}

// fixedString reads a string that may use variables and environment
// variables but nothing that varies per request.
func (l *loader) fixedString(n *yaml.Node, what string) (string, error) {
	s, err := l.str(n, what)
	if err != nil {
		return "", err
	}
	return l.fixedText(n, s, what, func(string, int) error {
		return l.errAt(n, "%s: expected a fixed value ({{var.NAME}} and {{env.NAME}} allowed), found %q, which varies per request", what, s)
	})
}
