// Values: the scalar readers (string, integer, number, boolean, duration,
// size, list), each naming its key and what it expected; the variables
// section; the base URL; files named relative to the scenario.

package scenario

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/scenario/template"
	"gopkg.in/yaml.v3"
)

// Scalar readers: each names the key and says what it expected.

func (l *loader) str(n *yaml.Node, what string) (string, error) {
	if err := l.bareTemplate(n, what); err != nil {
		return "", err
	}
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", l.errAt(n, "%s: expected a string, found %s", what, describe(n))
	}
	return n.Value, nil
}

func (l *loader) integer(n *yaml.Node, what string, lo, hi int64) (int64, error) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return 0, l.errAt(n, "%s: expected a whole number, found %s", what, describe(n))
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 64)
	if err != nil {
		return 0, l.errAt(n, "%s: expected a whole number, found %s", what, describe(n))
	}
	if v < lo || v > hi {
		return 0, l.errAt(n, "%s: expected a whole number from %d to %d, found %d", what, lo, hi, v)
	}
	return v, nil
}

func (l *loader) number(n *yaml.Node, what string) (float64, error) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return 0, l.errAt(n, "%s: expected a number, found %s", what, describe(n))
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, l.errAt(n, "%s: expected a number, found %s", what, describe(n))
	}
	if v < 0 {
		return 0, l.errAt(n, "%s: expected a number ≥ 0, found %s", what, n.Value)
	}
	return v, nil
}

func (l *loader) boolean(n *yaml.Node, what string) (bool, error) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, l.errAt(n, "%s: expected true or false, found %s", what, describe(n))
	}
	return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", nil
}

func (l *loader) duration(n *yaml.Node, what string) (time.Duration, error) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return 0, l.errAt(n, "%s: expected a duration such as 30s, 2m or 250ms, found %s", what, describe(n))
	}
	d, err := durationText(n.Value, n.Tag != "!!str")
	if err == errNotDuration {
		return 0, l.errAt(n, "%s: expected a duration such as 30s, 2m or 250ms, found %s", what, describe(n))
	}
	if err != nil {
		return 0, l.errAt(n, "%s: %v", what, err)
	}
	return d, nil
}

// errNotDuration is durationText's error for text that is no duration.
var errNotDuration = errors.New("not a duration")

// durationText parses a duration's text: a number of seconds (when
// seconds is set: the value was not a quoted string) or Go's form (250ms,
// 1m30s). Text that is no duration is errNotDuration; a duration below 0
// (or a number of seconds above 1e9) is an error saying what was expected.
func durationText(s string, seconds bool) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && seconds {
		if f < 0 || f > 1e9 || math.IsNaN(f) {
			return 0, fmt.Errorf("expected a duration ≥ 0 such as 30s, found %s", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, errNotDuration
	}
	if d < 0 {
		return 0, fmt.Errorf("expected a duration ≥ 0, found %s", s)
	}
	return d, nil
}

// size reads a byte count: 65536, 64k, 1m (k = 1024).
func (l *loader) size(n *yaml.Node, what string, lo, hi int64) (int64, error) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return 0, l.errAt(n, "%s: expected a size such as 65536, 64k or 1m, found %s", what, describe(n))
	}
	t := strings.ToLower(strings.TrimSpace(n.Value))
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1<<10, t[:len(t)-1]
	case strings.HasSuffix(t, "m"):
		mult, t = 1<<20, t[:len(t)-1]
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > math.MaxInt64/mult {
		return 0, l.errAt(n, "%s: expected a size such as 65536, 64k or 1m, found %s", what, describe(n))
	}
	v *= mult
	if v < lo || v > hi {
		return 0, l.errAt(n, "%s: expected a size from %d to %d bytes, found %d", what, lo, hi, v)
	}
	return v, nil
}

func (l *loader) list(n *yaml.Node, what string) ([]*yaml.Node, error) {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, l.errAt(n, "%s: expected a list (lines starting with -), found %s", what, describe(n))
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = resolve(c)
	}
	return out, nil
}

func (l *loader) variables() error {
	if v, ok := l.nodes["variables"]; ok {
		if err := l.fields(v, "variables", nil, func(key string, k, v *yaml.Node) error {
			if !nameRE.MatchString(key) {
				return l.errAt(k, "variables: name %q: expected letters, digits, _ . or -", key)
			}
			switch v.Kind {
			case yaml.ScalarNode:
				if v.Tag == "!!null" {
					return l.errAt(v, "variables.%s: expected a value (string, number or list), found nothing", key)
				}
				l.env.Vars[key] = template.Value{Text: v.Value}
			case yaml.SequenceNode:
				items, _ := l.list(v, "variables."+key)
				vals := []string{}
				for _, it := range items {
					if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
						return l.errAt(it, "variables.%s: expected a list of strings or numbers, found %s", key, describe(it))
					}
					vals = append(vals, it.Value)
				}
				l.env.Vars[key] = template.Value{List: vals}
			default:
				return l.errAt(v, "variables.%s: expected a string, a number or a list, found %s", key, describe(v))
			}
			return nil
		}); err != nil {
			return err
		}
	}
	for k, v := range l.o.Vars {
		l.env.Vars[k] = template.Value{Text: v}
	}
	return l.resolveVars()
}

// base reads the base URL (or --base).
func (l *loader) base() error {
	raw, n := "", l.nodes["base"]
	if n != nil {
		var err error
		if raw, err = l.str(n, "base"); err != nil {
			return err
		}
	}
	what := "base"
	if l.o.Base != "" {
		raw, what = l.o.Base, "--base"
	}
	if raw == "" {
		return nil
	}
	if u, ok := l.targetURL[raw]; ok && what == "base" { // base: a target's name
		l.baseTarget, l.s.Base = raw, u
		return nil
	}
	u, err := parseOrigin(raw)
	if err != nil {
		if what == "--base" {
			return fmt.Errorf("--base %s: %v", raw, err)
		}
		return l.errAt(n, "base: %v", err)
	}
	l.s.Base = u
	return nil
}

// parseOrigin parses a base URL: http(s)://host[:port][/path prefix].
func parseOrigin(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("expected a URL such as http://127.0.0.1:8080, found %q (no scheme)", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return nil, fmt.Errorf("expected a URL such as http://127.0.0.1:8080, found %q (%v)", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("expected an http:// or https:// URL, found scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("expected a URL with a host such as http://127.0.0.1:8080, found %q", raw)
	}
	if port := u.Port(); port != "" {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("expected a port from 1 to 65535, found %q", port)
		}
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("expected scheme, host, port and an optional path prefix only, found %q (put queries in the steps' paths)", raw)
	}
	return u, nil
}

// path resolves a path the file names against the file's directory, and
// records it in Scenario.Files.
func (l *loader) path(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.dir, p)
	}
	if !slices.Contains(l.s.Files, p) {
		l.s.Files = append(l.s.Files, p)
	}
	return p
}

// thinkTime reads a think time: a duration (100ms, or a number of
// seconds) or a uniform range lo..hi (50ms..150ms).
func (l *loader) thinkTime(n *yaml.Node, what string) (thinkTime, error) {
	bad := func() (thinkTime, error) {
		return thinkTime{}, l.errAt(n, "%s: expected a duration such as 100ms, or a range such as 50ms..150ms, found %s", what, describe(n))
	}
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return bad()
	}
	lo, hi, isRange := strings.Cut(n.Value, "..")
	if !isRange {
		d, err := durationText(n.Value, n.Tag != "!!str")
		if err == errNotDuration {
			return bad()
		}
		if err != nil {
			return thinkTime{}, l.errAt(n, "%s: %v", what, err)
		}
		return thinkTime{lo: d, hi: d, set: true}, nil
	}
	parse := func(s string) (time.Duration, bool) {
		d, err := durationText(strings.TrimSpace(s), true)
		return d, err == nil
	}
	a, ok1 := parse(lo)
	b, ok2 := parse(hi)
	if !ok1 || !ok2 {
		return bad()
	}
	if b < a {
		return thinkTime{}, l.errAt(n, "%s: expected a range from low to high such as 50ms..150ms, found %s > %s", what, a, b)
	}
	return thinkTime{lo: a, hi: b, set: true}, nil
}
