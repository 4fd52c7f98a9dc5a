package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites a piece's text before it is split; first says the
// piece starts the text.
type normalizer interface {
	normalize(s string, first bool) string
}

type (
	prepend string
	replace struct {
		re       *regexp.Regexp
		old, new string
	}
	lowercase struct{}
	unicodeNF struct{ form norm.Form }
)

func (p prepend) normalize(s string, first bool) string {
	if first && s != "" {
		return string(p) + s
	}
	return s
}

func (r replace) normalize(s string, _ bool) string {
	if r.re != nil {
		return r.re.ReplaceAllLiteralString(s, r.new)
	}
	return strings.ReplaceAll(s, r.old, r.new)
}

func (lowercase) normalize(s string, _ bool) string { return strings.ToLower(s) }

func (u unicodeNF) normalize(s string, _ bool) string { return u.form.String(s) }

// pattern is a Split's or Replace's pattern: a string or a regular
// expression.
type pattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// parseNormalizer reads the "normalizer" part (null: none).
func parseNormalizer(raw json.RawMessage) ([]normalizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	typ, err := typeOf(raw)
	if err != nil {
		return nil, fmt.Errorf("its normalizer: %v", err)
	}
	switch typ {
	case "Sequence":
		var seq struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return nil, fmt.Errorf("its normalizer Sequence: %v", err)
		}
		var out []normalizer
		for _, n := range seq.Normalizers {
			ns, err := parseNormalizer(n)
			if err != nil {
				return nil, err
			}
			out = append(out, ns...)
		}
		return out, nil
	case "Prepend":
		var p struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("its normalizer Prepend: %v", err)
		}
		return []normalizer{prepend(p.Prepend)}, nil
	case "Replace":
		var r struct {
			Pattern pattern `json:"pattern"`
			Content string  `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("its normalizer Replace: %v", err)
		}
		switch {
		case r.Pattern.String != nil:
			return []normalizer{replace{old: *r.Pattern.String, new: r.Content}}, nil
		case r.Pattern.Regex != nil:
			re, err := regexp.Compile(*r.Pattern.Regex)
			if err != nil {
				return nil, fmt.Errorf("its normalizer Replace's pattern: %v", err)
			}
			return []normalizer{replace{re: re, new: r.Content}}, nil
		}
		return nil, fmt.Errorf("its normalizer Replace has no pattern")
	case "Lowercase":
		return []normalizer{lowercase{}}, nil
	case "NFC":
		return []normalizer{unicodeNF{norm.NFC}}, nil
	case "NFKC":
		return []normalizer{unicodeNF{norm.NFKC}}, nil
	}
	return nil, unsupported("normalizer", typ)
}
