// body_json: a YAML value sent as a JSON body. Its structure is fixed at
// load; its strings are templates whose generated values are JSON-escaped,
// and a string that is one template alone becomes a JSON number when what
// it yields is a number.

package scenario

import (
	"strconv"

	"github.com/hail-loadgen/hail/internal/scenario/template"
	"gopkg.in/yaml.v3"
)

// bodyJSON compiles a body_json value (or a gRPC step's data written as
// YAML) into a template of JSON text. With guess, a string that is one
// template alone becomes a JSON number when what it yields is a number
// (body_json); without, strings stay strings (gRPC data: a proto string
// field takes no JSON number, and an integer field takes a string).
func (l *loader) bodyJSON(n *yaml.Node, what string, env *template.Env, guess bool) (*template.Template, error) {
	var parts []*template.Template
	add := func(s string) { parts = append(parts, template.Text(s)) }
	var walk func(n *yaml.Node, what string) error
	walk = func(n *yaml.Node, what string) error {
		n = resolve(n)
		switch n.Kind {
		case yaml.MappingNode:
			add("{")
			first := true
			if err := l.fields(n, what, nil, func(key string, k, v *yaml.Node) error {
				if !first {
					add(",")
				}
				first = false
				add(`"` + string(template.AppendJSONEscaped(nil, []byte(key))) + `":`)
				return walk(v, what+"."+key)
			}); err != nil {
				return err
			}
			add("}")
		case yaml.SequenceNode:
			add("[")
			for i, it := range n.Content {
				if i > 0 {
					add(",")
				}
				if err := walk(it, what+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
			add("]")
		case yaml.ScalarNode:
			t, err := l.jsonScalar(n, what, env, guess)
			if err != nil {
				return err
			}
			parts = append(parts, t)
		default:
			return l.errAt(n, "%s: expected a mapping, a list or a value, found %s", what, describe(n))
		}
		return nil
	}
	if err := walk(n, what); err != nil {
		return nil, err
	}
	return template.Concat(parts...), nil
}

// jsonScalar compiles one scalar of a body_json value; guess is
// bodyJSON's. Without guess, a timestamp (2024-05-01) is a string too.
func (l *loader) jsonScalar(n *yaml.Node, what string, env *template.Env, guess bool) (*template.Template, error) {
	tagged := n.Style&yaml.TaggedStyle != 0 || !guess && n.Tag == "!!timestamp"
	switch {
	case n.Tag == "!!null":
		return template.Text("null"), nil
	case n.Tag == "!!bool":
		b, err := l.boolean(n, what)
		return template.Text(strconv.FormatBool(b)), err
	case n.Tag == "!!int" || n.Tag == "!!float":
		if template.IsJSONNumber([]byte(n.Value)) {
			return template.Text(n.Value), nil
		}
		var f float64
		if err := n.Decode(&f); err != nil || f != f || f > 1e308 || f < -1e308 {
			return nil, l.errAt(n, "%s: expected a number JSON can hold, found %s", what, n.Value)
		}
		return template.Text(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case n.Tag != "!!str" && !tagged:
		return nil, l.errAt(n, "%s: expected a string, number, true, false or null, found %s", what, describe(n))
	}
	t, err := template.CompileJSON(n.Value, env, guess && !tagged)
	if err != nil {
		return nil, l.errIn(n, err, what)
	}
	return t, nil
}
