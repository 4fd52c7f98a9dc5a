// YAML nodes and positions: parsing, aliases, FILE:LINE:COL errors (also
// inside block scalars), describing what was found, and walking a mapping
// with unknown-key suggestions.

package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hail-loadgen/hail/internal/scenario/template"
	"gopkg.in/yaml.v3"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (l *loader) unmarshal(data []byte, doc *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{l.file, 1, 1, fmt.Sprintf("invalid YAML: %v", r)}
		}
	}()
	if err := yaml.Unmarshal(data, doc); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			if strings.Contains(m[2], "did not find expected ','") {
				if e := l.quoteHint(line); e != nil {
					return e
				}
			}
			return &Error{l.file, line, l.firstCol(line), "invalid YAML: " + m[2]}
		}
		return &Error{l.file, 1, 1, "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	return l.aliasBudget(doc)
}

// minAliasBudget is the number of values a document may expand to however
// few it writes itself: aliases may always repeat this much.
const minAliasBudget = 250_000

// aliasBudget refuses a document whose aliases expand to more than ten
// times the values it writes (at least minAliasBudget): an alias bomb
// (ten aliases of ten aliases of …) would otherwise make every walk of the
// file take hours. It counts each anchored value's expanded size once, so
// the check itself is linear in the file.
func (l *loader) aliasBudget(doc *yaml.Node) error {
	own := 0
	var count func(n *yaml.Node)
	count = func(n *yaml.Node) {
		own++
		for _, c := range n.Content {
			count(c)
		}
	}
	count(doc)
	budget := max(10*own, minAliasBudget)
	sizes := map[*yaml.Node]int{} // expanded size of an anchored value; -1 while it is being counted
	total := 0
	var over *yaml.Node
	var size func(n *yaml.Node) int
	size = func(n *yaml.Node) int {
		if over != nil {
			return 0
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			s, ok := sizes[n.Alias]
			if !ok || s < 0 { // an alias inside its own anchor (yaml.v3 refuses it): the alias alone
				s = 1
			}
			total += s
			if total > budget && over == nil {
				over = n
			}
			return s
		}
		if n.Anchor != "" {
			sizes[n] = -1
		}
		before := total
		total++
		for _, c := range n.Content {
			size(c)
		}
		s := total - before
		if n.Anchor != "" {
			sizes[n] = s
		}
		if total > budget && over == nil {
			over = n
		}
		return s
	}
	size(doc)
	if over != nil {
		return l.errAt(over, "YAML aliases expand the file to more than %d values (%d written): an alias bomb? Write the values out, or alias less", budget, own)
	}
	return nil
}

// quoteHint looks for the usual cause of a { … } flow mapping that does
// not parse: a {{ … }} template in an unquoted value (YAML reads { as the
// start of a mapping there). It searches the lines around line (yaml.v3
// names the line where the mapping starts, counted from 0 or 1) and returns
// an error at the first unquoted {{ with the value quoted, or nil.
func (l *loader) quoteHint(line int) *Error {
	for ln := max(line, 1); ln <= min(line+10, len(l.src)); ln++ {
		text := l.src[ln-1]
		at := unquotedIndex(text, "{{")
		if at < 0 {
			continue
		}
		start := strings.LastIndex(text[:at], ": ")
		if start < 0 {
			start = at
		} else {
			start += 2
		}
		end := at + 2
		if e := strings.Index(text[end:], "}}"); e >= 0 {
			end += e + 2
		}
		for end < len(text) && text[end] != ',' && text[end] != '}' {
			end++
		}
		val := strings.TrimSpace(text[start:end])
		return &Error{l.file, ln, at + 1, fmt.Sprintf("invalid YAML: a {{ … }} template in a { … } mapping must be quoted: write '%s'", strings.ReplaceAll(val, "'", "''"))}
	}
	return nil
}

// unquotedIndex is the index of the first sub in s outside quotes, or -1.
func unquotedIndex(s, sub string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return -1
		case strings.HasPrefix(s[i:], sub):
			return i
		}
	}
	return -1
}

// bareTemplate returns an error when n is what YAML makes of an unquoted
// value that starts with {{ (a mapping whose key is a mapping), saying to
// quote it; nil otherwise.
func (l *loader) bareTemplate(n *yaml.Node, what string) error {
	if n == nil || n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle == 0 || len(n.Content) != 2 {
		return nil
	}
	k := n.Content[0]
	if k.Kind != yaml.MappingNode || k.Style&yaml.FlowStyle == 0 || len(k.Content) != 2 {
		return nil
	}
	return l.errAt(n, "%s: found an unquoted {{ … }}, which YAML reads as a mapping: quote the value, as '{{%s}}'", what, k.Content[0].Value)
}

// firstCol is the column of the first non-blank character of a line.
func (l *loader) firstCol(line int) int {
	if line < 1 || line > len(l.src) {
		return 1
	}
	s := l.src[line-1]
	return len(s) - len(strings.TrimLeft(s, " \t")) + 1
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func (l *loader) errAt(n *yaml.Node, format string, a ...any) error {
	line, col := 1, 1
	if n != nil {
		line, col = n.Line, n.Column
	}
	return &Error{l.file, line, col, fmt.Sprintf(format, a...)}
}

// errIn positions a template error at its offset inside the scalar n.
func (l *loader) errIn(n *yaml.Node, err error, what string) error {
	te, ok := err.(*template.Error)
	if !ok {
		return l.errAt(n, "%s: %v", what, err)
	}
	line, col := n.Line, n.Column
	v := n.Value
	off := min(te.Offset, len(v))
	if nl := strings.LastIndexByte(v[:off], '\n'); nl >= 0 || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		line += strings.Count(v[:off], "\n")
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			line++
		}
		col = l.firstCol(line) + off - (nl + 1)
	} else {
		col += off
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
			col++
		}
	}
	return &Error{l.file, line, col, what + ": " + te.Msg}
}

// describe names what a node holds, for "found …".
func describe(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing (null)"
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return n.Value
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		return fmt.Sprintf("%q", v)
	}
	return "something else"
}

// fields walks a mapping, rejecting unknown and duplicate keys.
func (l *loader) fields(n *yaml.Node, what string, allowed []string, f func(key string, k, v *yaml.Node) error) error {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return l.errAt(n, "%s: expected a mapping (key: value lines), found %s", what, describe(n))
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return l.errAt(k, "%s: expected a key name, found %s", what, describe(k))
		}
		key := k.Value
		if k.Tag == "!!merge" {
			return l.errAt(k, "%s: YAML merge keys (<<) are not supported: expected the keys themselves", what)
		}
		if prev, dup := seen[key]; dup {
			return l.errAt(k, "%s: duplicate key %q (first at line %d)", what, key, prev.Line)
		}
		seen[key] = k
		if allowed != nil && !contains(allowed, key) {
			msg := fmt.Sprintf("%s: unknown key %q: expected one of %s", what, key, strings.Join(allowed, ", "))
			if s := suggest(key, allowed); s != "" {
				msg = fmt.Sprintf("%s: unknown key %q: did you mean %q? (expected one of %s)", what, key, s, strings.Join(allowed, ", "))
			}
			return l.errAt(k, "%s", msg)
		}
		if err := f(key, k, resolve(v)); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns the allowed key closest to key, if it is close.
func suggest(key string, allowed []string) string {
	best, bd := "", 3
	for _, a := range allowed {
		if d := editDistance(strings.ToLower(key), a); d < bd {
			best, bd = a, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
