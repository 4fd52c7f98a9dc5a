package scenario

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"hail/internal/bodyfile"
	"hail/internal/http1"
	"hail/internal/plan"
)

// Error is a problem in a scenario file, at a line and column (1-based).
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg) }

// LoadOptions are command-line values that change how a file compiles.
type LoadOptions struct {
	// Vars override (or add) variables: --var NAME=VALUE.
	Vars map[string]string
	// Base overrides the file's base URL (--base).
	Base string
	// Env looks up environment variables (default os.LookupEnv).
	Env func(string) (string, bool)
	// LengthGiven says the command line bounds the run (-z or -n), so the
	// file need not.
	LengthGiven bool
	// FileLimit bounds the files read into memory: the scenario, body_file,
	// body_lines and pool files (--body-file-limit; 0: bodyfile.DefaultLimit).
	FileLimit int64
}

// Limits of the format.
const (
	maxActivities    = 256
	defaultBodyLimit = 64 << 10
	maxBodyLimit     = 64 << 20
	maxConnections   = 1_000_000
)

var (
	topKeys = []string{"name", "base", "headers", "variables", "pools", "steps", "flows", "stages", "thresholds",
		"connections", "rate", "duration", "requests", "timeout", "connect_timeout", "keepalive", "redirects",
		"engine", "insecure", "seed", "max_repeat", "body_limit"}
	stepKeys      = []string{"name", "weight", "method", "url", "path", "headers", "body", "body_file", "body_lines", "capture"}
	flowKeys      = []string{"name", "weight", "steps"}
	stageKeys     = []string{"duration", "connections", "rate", "ramp"}
	captureKeys   = []string{"json", "header", "regex", "status"}
	poolKeys      = []string{"max", "values", "file"}
	thresholdKeys = []string{"expr", "step", "abort_on_fail", "abort_after"}
	nameRE        = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
)

// Load reads and compiles the scenario file at path.
func Load(path string, o LoadOptions) (*Scenario, error) {
	data, err := bodyfile.Read(path, o.FileLimit)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, o)
}

type loader struct {
	file  string
	dir   string
	src   []string // the file's lines, for positions inside block scalars
	o     LoadOptions
	s     *Scenario
	env   *tmplEnv
	nodes map[string]*yaml.Node // top-level values by key
	keys  map[string]*yaml.Node // top-level keys by key
	root  *yaml.Node

	poolIdx    map[string]int
	poolUsed   []bool
	seeded     []bool
	capIdx     map[string]int
	stepIdx    map[string]int
	stepNodes  []*yaml.Node
	weightSet  []bool
	stepInFlow []bool
	firstNeeds []bool // the step needs a captured value before it can run
}

// Parse compiles a scenario from data; file names it in messages and
// anchors relative paths.
func Parse(file string, data []byte, o LoadOptions) (*Scenario, error) {
	if o.Env == nil {
		o.Env = os.LookupEnv
	}
	l := &loader{file: file, dir: filepath.Dir(file), o: o, src: strings.Split(string(data), "\n"),
		s: &Scenario{File: file}, nodes: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{},
		poolIdx: map[string]int{}, capIdx: map[string]int{}, stepIdx: map[string]int{}}
	var doc yaml.Node
	if err := l.unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{file, 1, 1, "empty scenario: expected a mapping with at least a steps list"}
	}
	l.root = resolve(doc.Content[0])
	if err := l.load(); err != nil {
		return nil, err
	}
	return l.s, nil
}

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
			return &Error{l.file, line, l.firstCol(line), "invalid YAML: " + m[2]}
		}
		return &Error{l.file, 1, 1, "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	return nil
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
	te, ok := err.(*tmplError)
	if !ok {
		return l.errAt(n, "%s: %v", what, err)
	}
	line, col := n.Line, n.Column
	v := n.Value
	off := min(te.off, len(v))
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
	return &Error{l.file, line, col, what + ": " + te.msg}
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

// Scalar readers: each names the key and says what it expected.

func (l *loader) str(n *yaml.Node, what string) (string, error) {
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
	if f, err := strconv.ParseFloat(n.Value, 64); err == nil && n.Tag != "!!str" {
		if f < 0 || f > 1e9 || math.IsNaN(f) {
			return 0, l.errAt(n, "%s: expected a duration ≥ 0 such as 30s, found %s", what, n.Value)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil {
		return 0, l.errAt(n, "%s: expected a duration such as 30s, 2m or 250ms, found %s", what, describe(n))
	}
	if d < 0 {
		return 0, l.errAt(n, "%s: expected a duration ≥ 0, found %s", what, n.Value)
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

// load compiles the whole file.
func (l *loader) load() error {
	s := l.s
	if err := l.fields(l.root, "scenario", topKeys, func(key string, k, v *yaml.Node) error {
		l.nodes[key], l.keys[key] = v, k
		return nil
	}); err != nil {
		return err
	}
	st := &s.Settings
	st.KeepAlive, st.Engine, st.BodyLimit, st.Connections = true, "auto", defaultBodyLimit, 50
	maxRepeat := DefaultMaxRepeat
	connSet := false
	for _, key := range topKeys {
		v, ok := l.nodes[key]
		if !ok {
			continue
		}
		var err error
		switch key {
		case "name":
			s.Name, err = l.str(v, "name")
		case "connections":
			var n int64
			n, err = l.integer(v, "connections", 1, maxConnections)
			st.Connections, connSet = int(n), true
		case "rate":
			st.Rate, err = l.number(v, "rate")
			if err == nil && st.Rate == 0 {
				err = l.errAt(v, "rate: expected requests per second > 0, found 0 (leave rate out for the closed model)")
			}
		case "duration":
			st.Duration, err = l.duration(v, "duration")
			if err == nil && st.Duration == 0 {
				err = l.errAt(v, "duration: expected a duration > 0 such as 30s, found %s", v.Value)
			}
		case "requests":
			var n int64
			n, err = l.integer(v, "requests", 1, math.MaxInt64)
			st.Requests = uint64(n)
		case "timeout":
			st.Timeout, err = l.duration(v, "timeout")
		case "connect_timeout":
			st.ConnectTimeout, err = l.duration(v, "connect_timeout")
		case "keepalive":
			st.KeepAlive, err = l.boolean(v, "keepalive")
		case "redirects":
			var n int64
			n, err = l.integer(v, "redirects", 0, 100)
			st.Redirects = int(n)
		case "engine":
			st.Engine, err = l.str(v, "engine")
			if err == nil && st.Engine != "net" && st.Engine != "uring" && st.Engine != "auto" {
				err = l.errAt(v, "engine: expected net, uring or auto, found %s", describe(v))
			}
		case "insecure":
			st.Insecure, err = l.boolean(v, "insecure")
		case "seed":
			var n int64
			n, err = l.integer(v, "seed", 0, math.MaxInt64)
			st.Seed = uint64(n)
		case "max_repeat":
			var n int64
			n, err = l.integer(v, "max_repeat", 0, 1000)
			maxRepeat = int(n)
		case "body_limit":
			var n int64
			n, err = l.size(v, "body_limit", 1, maxBodyLimit)
			st.BodyLimit = int(n)
		}
		if err != nil {
			return err
		}
	}
	if st.Rate > 0 && st.Requests == 0 && st.Duration == 0 && !l.o.LengthGiven && l.nodes["stages"] == nil {
		return l.errAt(l.nodes["rate"], "rate: an open-model run needs a length: expected duration, requests or stages")
	}

	l.env = &tmplEnv{vars: map[string]value{}, env: l.o.Env, counters: map[string]*atomic.Uint64{}, maxRepeat: maxRepeat,
		pools: l.poolIdx, captures: l.capIdx}
	if err := l.variables(); err != nil {
		return err
	}
	if err := l.base(); err != nil {
		return err
	}
	if err := l.prescanSteps(); err != nil {
		return err
	}
	if err := l.pools(); err != nil {
		return err
	}
	if err := l.steps(); err != nil {
		return err
	}
	if err := l.flows(); err != nil {
		return err
	}
	if err := l.stages(connSet); err != nil {
		return err
	}
	if err := l.thresholds(); err != nil {
		return err
	}
	return l.finish()
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
				l.env.vars[key] = value{s: v.Value}
			case yaml.SequenceNode:
				items, _ := l.list(v, "variables."+key)
				vals := []string{}
				for _, it := range items {
					if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
						return l.errAt(it, "variables.%s: expected a list of strings or numbers, found %s", key, describe(it))
					}
					vals = append(vals, it.Value)
				}
				l.env.vars[key] = value{list: vals}
			default:
				return l.errAt(v, "variables.%s: expected a string, a number or a list, found %s", key, describe(v))
			}
			return nil
		}); err != nil {
			return err
		}
	}
	for k, v := range l.o.Vars {
		l.env.vars[k] = value{s: v}
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

// prescanSteps learns step names and capture names, which templates,
// flows and thresholds refer to.
func (l *loader) prescanSteps() error {
	n, ok := l.nodes["steps"]
	if !ok {
		return l.errAt(l.root, "scenario: expected a steps list (each step is one kind of request), found none")
	}
	items, err := l.list(n, "steps")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return l.errAt(n, "steps: expected at least one step, found an empty list")
	}
	for i, it := range items {
		what := fmt.Sprintf("steps[%d]", i)
		var name *yaml.Node
		var capNode *yaml.Node
		if err := l.fields(it, what, stepKeys, func(key string, k, v *yaml.Node) error {
			switch key {
			case "name":
				name = v
			case "capture":
				capNode = v
			}
			return nil
		}); err != nil {
			return err
		}
		if name == nil {
			return l.errAt(it, "%s: expected a name (name: create), found none", what)
		}
		nm, err := l.str(name, what+".name")
		if err != nil {
			return err
		}
		if !nameRE.MatchString(nm) {
			return l.errAt(name, "%s.name: expected letters, digits, _ . or - (no spaces), found %q", what, nm)
		}
		if prev, dup := l.stepIdx[nm]; dup {
			return l.errAt(name, "%s.name: duplicate step name %q (first at line %d)", what, nm, l.stepNodes[prev].Line)
		}
		l.stepIdx[nm] = i
		l.stepNodes = append(l.stepNodes, it)
		if capNode != nil {
			if err := l.fields(capNode, nm+".capture", nil, func(key string, k, v *yaml.Node) error {
				if !nameRE.MatchString(key) {
					return l.errAt(k, "%s.capture: pool name %q: expected letters, digits, _ . or -", nm, key)
				}
				if _, ok := l.capIdx[key]; !ok {
					l.capIdx[key] = len(l.s.captures)
					l.s.captures = append(l.s.captures, key)
				}
				l.addPool(key)
				return nil
			}); err != nil {
				return err
			}
		}
	}
	if len(items) > maxActivities {
		return l.errAt(n, "steps: expected at most %d steps, found %d", maxActivities, len(items))
	}
	return nil
}

func (l *loader) addPool(name string) int {
	if i, ok := l.poolIdx[name]; ok {
		return i
	}
	l.poolIdx[name] = len(l.s.Pools)
	l.s.Pools = append(l.s.Pools, NewPool(name, 0))
	l.poolUsed = append(l.poolUsed, false)
	l.seeded = append(l.seeded, false)
	return len(l.s.Pools) - 1
}

// pools reads pool declarations: capacity and seed values.
func (l *loader) pools() error {
	n, ok := l.nodes["pools"]
	if !ok {
		return nil
	}
	return l.fields(n, "pools", nil, func(name string, k, v *yaml.Node) error {
		if !nameRE.MatchString(name) {
			return l.errAt(k, "pools: name %q: expected letters, digits, _ . or -", name)
		}
		_, captured := l.poolIdx[name]
		max := 0
		var vals []string
		what := "pools." + name
		if err := l.fields(v, what, poolKeys, func(key string, k, v *yaml.Node) error {
			switch key {
			case "max":
				n, err := l.integer(v, what+".max", 1, 100_000_000)
				max = int(n)
				return err
			case "values":
				items, err := l.list(v, what+".values")
				if err != nil {
					return err
				}
				for _, it := range items {
					s, err := l.str(it, what+".values")
					if err != nil {
						return err
					}
					vals = append(vals, s)
				}
			case "file":
				p, err := l.str(v, what+".file")
				if err != nil {
					return err
				}
				lines, err := bodyfile.Lines(l.path(p), l.o.FileLimit)
				if err != nil {
					return l.errAt(v, "%s.file: %v", what, err)
				}
				for _, line := range lines {
					if s := strings.TrimSpace(string(line)); s != "" {
						vals = append(vals, s)
					}
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if !captured && len(vals) == 0 {
			return l.errAt(k, "pools.%s: nothing fills this pool: expected values or a file, or a step that captures into %s", name, name)
		}
		i := l.addPool(name)
		l.s.Pools[i] = NewPool(name, max)
		for j, s := range vals {
			l.s.Pools[i].Put(s, j)
		}
		l.seeded[i] = len(vals) > 0
		return nil
	})
}

func (l *loader) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}

// steps compiles every step.
func (l *loader) steps() error {
	for i, it := range l.stepNodes {
		st, err := l.step(i, it)
		if err != nil {
			return err
		}
		l.s.Steps = append(l.s.Steps, st)
	}
	return nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

type headerNode struct {
	name   string
	k, v   *yaml.Node
	global bool
}

func (l *loader) headerNodes(n *yaml.Node, what string, global bool) ([]headerNode, error) {
	var out []headerNode
	err := l.fields(n, what, nil, func(key string, k, v *yaml.Node) error {
		if !isToken(key) {
			return l.errAt(k, "%s: header name %q: expected a token (letters, digits and !#$%%&'*+-.^_`|~)", what, key)
		}
		lk := strings.ToLower(key)
		if lk == "content-length" || lk == "transfer-encoding" {
			return l.errAt(k, "%s: %s is set by hail from the body: expected other headers", what, key)
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return l.errAt(v, "%s.%s: expected a string value, found %s", what, key, describe(v))
		}
		if strings.ContainsAny(v.Value, "\r\n") {
			return l.errAt(v, "%s.%s: expected a single-line value, found a line break", what, key)
		}
		out = append(out, headerNode{key, k, v, global})
		return nil
	})
	return out, err
}

func (l *loader) step(i int, it *yaml.Node) (*Step, error) {
	s := l.s
	st := &Step{Weight: 1, Method: "GET"}
	var nodes = map[string]*yaml.Node{}
	var keys = map[string]*yaml.Node{}
	_ = l.fields(it, "step", stepKeys, func(key string, k, v *yaml.Node) error {
		nodes[key], keys[key] = v, k
		return nil
	})
	st.Name = nodes["name"].Value
	what := st.Name
	if v, ok := nodes["weight"]; ok {
		w, err := l.number(v, what+".weight")
		if err != nil {
			return nil, err
		}
		st.Weight = w
		l.weightSet = append(l.weightSet, true)
	} else {
		l.weightSet = append(l.weightSet, false)
	}
	if v, ok := nodes["method"]; ok {
		m, err := l.str(v, what+".method")
		if err != nil {
			return nil, err
		}
		m = strings.ToUpper(strings.TrimSpace(m))
		if !isToken(m) {
			return nil, l.errAt(v, "%s.method: expected a method such as GET, POST or DELETE, found %q", what, m)
		}
		st.Method = m
	}
	st.sendsCL = st.Method == "POST" || st.Method == "PUT" || st.Method == "PATCH"
	st.isHead = st.Method == "HEAD"
	st.close = !s.Settings.KeepAlive

	env := *l.env
	env.refs, env.lasts = &st.refs, &st.lasts
	env.where = "step " + what

	// The request target: a path under base, or a URL of the same origin.
	urlN, pathN := nodes["url"], nodes["path"]
	var target *Template
	var targetNode *yaml.Node
	host := ""
	switch {
	case urlN != nil && pathN != nil:
		return nil, l.errAt(keys["path"], "%s: give url or path, not both", what)
	case urlN == nil && pathN == nil:
		return nil, l.errAt(it, "%s: expected a path (under base) or a url, found neither", what)
	case pathN != nil:
		p, err := l.str(pathN, what+".path")
		if err != nil {
			return nil, err
		}
		if s.Base == nil {
			return nil, l.errAt(pathN, "%s.path: a path needs a base URL: expected base: http://HOST:PORT at the top of the file (or --base), or a full url", what)
		}
		if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "{{") {
			return nil, l.errAt(pathN, "%s.path: expected a path starting with /, found %q", what, p)
		}
		t, err := compileTemplate(p, &env, escTarget)
		if err != nil {
			return nil, l.errIn(pathN, err, what+".path")
		}
		target = concat(literal(strings.TrimSuffix(s.Base.EscapedPath(), "/")), t)
		targetNode = pathN
		host = s.Base.Host
		st.Target = p
	default:
		raw, err := l.str(urlN, what+".url")
		if err != nil {
			return nil, err
		}
		origin, rest := splitURL(raw)
		if strings.Contains(origin, "{{") {
			return nil, l.errAt(urlN, "%s.url: the scheme, host and port must be written out (hail connects to one origin): expected templates only in the path, found %q", what, origin)
		}
		u, err := parseOrigin(origin)
		if err != nil {
			return nil, l.errAt(urlN, "%s.url: %v", what, err)
		}
		if s.Base == nil {
			s.Base = &url.URL{Scheme: u.Scheme, Host: u.Host}
		} else if u.Scheme != s.Base.Scheme || u.Host != s.Base.Host {
			return nil, l.errAt(urlN, "%s.url: expected the origin %s://%s of the run (one origin per run), found %s://%s", what, s.Base.Scheme, s.Base.Host, u.Scheme, u.Host)
		}
		t, err := compileTemplate(rest, &env, escTarget)
		if err != nil {
			te := err.(*tmplError)
			te.off += len(origin)
			return nil, l.errIn(urlN, te, what+".url")
		}
		target = t
		targetNode = urlN
		host = u.Host
		st.Target = raw
	}
	for _, sg := range target.segs {
		if sg.kind != segLit {
			continue
		}
		if i := bytes.IndexFunc(sg.lit, func(r rune) bool { return r <= 0x20 || r >= 0x7f }); i >= 0 {
			return nil, l.errAt(targetNode, "%s: the request target may not contain %q: expected it percent-encoded (%%%02X)", what, sg.lit[i], sg.lit[i])
		}
	}

	// Headers: the file's, then the step's (a step's header replaces the
	// file's of the same name); then User-Agent unless given.
	var hs []headerNode
	if n, ok := l.nodes["headers"]; ok {
		g, err := l.headerNodes(n, "headers", true)
		if err != nil {
			return nil, err
		}
		hs = g
	}
	if n, ok := nodes["headers"]; ok {
		own, err := l.headerNodes(n, what+".headers", false)
		if err != nil {
			return nil, err
		}
		for _, h := range own {
			kept := hs[:0]
			for _, g := range hs {
				if !strings.EqualFold(g.name, h.name) {
					kept = append(kept, g)
				}
			}
			hs = append(kept, h)
		}
	}
	parts := []*Template{literal(st.Method + " "), target, literal(" HTTP/1.1\r\n")}
	hasHost, hasUA := false, false
	for _, h := range hs {
		hasHost = hasHost || strings.EqualFold(h.name, "host")
		hasUA = hasUA || strings.EqualFold(h.name, "user-agent")
	}
	if !hasHost {
		parts = append(parts, literal("Host: "+http1.StripZone(host)+"\r\n"))
	}
	for _, h := range hs {
		t, err := compileTemplate(h.v.Value, &env, escHeader)
		if err != nil {
			w := what + ".headers." + h.name
			if h.global {
				w = "headers." + h.name
			}
			return nil, l.errIn(h.v, err, w)
		}
		parts = append(parts, literal(h.name+": "), t, literal("\r\n"))
	}
	if !hasUA {
		parts = append(parts, literal("User-Agent: hail/"+plan.Version+"\r\n"))
	}
	st.head = concat(parts...)

	// The body.
	nb := 0
	for _, k := range []string{"body", "body_file", "body_lines"} {
		if nodes[k] != nil {
			nb++
			if nb > 1 {
				return nil, l.errAt(keys[k], "%s: give one of body, body_file and body_lines, found more", what)
			}
		}
	}
	if v := nodes["body"]; v != nil {
		b, err := l.str(v, what+".body")
		if err != nil {
			return nil, err
		}
		t, err := compileTemplate(b, &env, escNone)
		if err != nil {
			return nil, l.errIn(v, err, what+".body")
		}
		if t.Static() {
			st.bodyLit = t.Literal()
		} else {
			st.body = t
		}
	}
	if v := nodes["body_file"]; v != nil {
		p, err := l.str(v, what+".body_file")
		if err != nil {
			return nil, err
		}
		b, err := bodyfile.Read(l.path(p), l.o.FileLimit)
		if err != nil {
			return nil, l.errAt(v, "%s.body_file: %v", what, err)
		}
		st.bodyLit = b
	}
	if v := nodes["body_lines"]; v != nil {
		p, err := l.str(v, what+".body_lines")
		if err != nil {
			return nil, err
		}
		lines, err := bodyfile.Lines(l.path(p), l.o.FileLimit)
		if err != nil {
			return nil, l.errAt(v, "%s.body_lines: %v", what, err)
		}
		if len(lines) == 0 {
			return nil, l.errAt(v, "%s.body_lines: expected a file with one body per line, found an empty file", what)
		}
		st.lines = lines
	}

	// Captures.
	if n := nodes["capture"]; n != nil {
		if err := l.fields(n, what+".capture", nil, func(name string, k, v *yaml.Node) error {
			c, err := l.capture(what+".capture."+name, v)
			if err != nil {
				return err
			}
			c.name, c.id = name, l.capIdx[name]
			c.pool = s.Pools[l.poolIdx[name]]
			st.captures = append(st.captures, c)
			return nil
		}); err != nil {
			return nil, err
		}
	}

	// Yield reasons, in the order build checks them.
	for _, r := range st.refs {
		l.poolUsed[r.pool] = true
		st.reasons = append(st.reasons, fmt.Sprintf("pool `%s` empty", s.Pools[r.pool].Name))
	}
	for _, c := range st.lasts {
		st.reasons = append(st.reasons, fmt.Sprintf("no `%s` captured yet by this virtual user", s.captures[c]))
	}
	st.yields = make([]atomic.Int64, len(st.reasons))
	s.maxSlots = max(s.maxSlots, len(st.refs))
	needs := len(st.lasts) > 0
	for _, r := range st.refs {
		needs = needs || !l.seeded[r.pool]
	}
	l.firstNeeds = append(l.firstNeeds, needs)

	// Check a sample request as the engines would send it.
	// Captured values stand in as "/x": a path may start with one (a
	// captured Location header, say).
	v := newVU(&Scenario{maxSlots: len(st.refs), captures: s.captures, Pools: s.Pools}, 0)
	for k := range v.ctx.Slots {
		v.ctx.Slots[k] = "/x"
	}
	for k := range v.ctx.Last {
		v.ctx.Last[k] = []byte("/x")
	}
	sample := st.head.AppendTo(nil, &v.ctx)
	if err := checkSample(st, sample, host); err != nil {
		return nil, l.errAt(it, "%s: %v", what, err)
	}
	if st.head.Static() && st.body == nil && len(st.refs) == 0 && len(st.lasts) == 0 {
		bodies := st.lines
		if bodies == nil {
			bodies = [][]byte{st.bodyLit}
		}
		for _, b := range bodies {
			st.variants = append(st.variants, encodeTail(append([]byte(nil), st.head.Literal()...), b, st.sendsCL, st.close))
		}
	}
	return st, nil
}

// encodeTail finishes a request after its head: Content-Length (when there
// is a body or the method has one), Connection: close, the empty line and
// the body. It matches http1.AppendRequest byte for byte.
func encodeTail(b, body []byte, sendsCL, close bool) []byte {
	if sendsCL || len(body) > 0 {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	if close {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// checkSample validates an expanded request head with http1's rules.
func checkSample(st *Step, head []byte, host string) error {
	lines := strings.Split(strings.TrimSuffix(string(head), "\r\n"), "\r\n")
	first := strings.SplitN(lines[0], " ", 3)
	if len(first) != 3 {
		return fmt.Errorf("the request line %q is malformed", lines[0])
	}
	spec := http1.RequestSpec{Method: first[0], Target: first[1], Proto: first[2]}
	for _, h := range lines[1:] {
		name, val, _ := strings.Cut(h, ": ")
		if strings.EqualFold(name, "host") {
			spec.Host = val
			continue
		}
		spec.Header = append(spec.Header, [2]string{name, val})
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "http1: "))
	}
	return nil
}

// splitURL splits an absolute URL into its origin and its request target.
func splitURL(raw string) (origin, target string) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw, "/"
	}
	j := strings.IndexAny(raw[i+3:], "/?")
	if j < 0 {
		return raw, "/"
	}
	origin, target = raw[:i+3+j], raw[i+3+j:]
	if target[0] == '?' {
		target = "/" + target
	}
	return origin, target
}

func (l *loader) capture(what string, n *yaml.Node) (*capture, error) {
	c := &capture{}
	found := 0
	var first *yaml.Node
	err := l.fields(n, what, captureKeys, func(key string, k, v *yaml.Node) error {
		found++
		if found > 1 {
			return l.errAt(k, "%s: expected one of json, header, regex or status, found several", what)
		}
		first = k
		switch key {
		case "json":
			p, err := l.str(v, what+".json")
			if err != nil {
				return err
			}
			c.kind = capJSON
			if c.path, err = parseJSONPath(p); err != nil {
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
		return nil, l.errAt(n, "%s: expected one of json, header, regex or status, found none", what)
	}
	return c, nil
}

// flows reads the flows and settles the default weights: a step without
// a weight has weight 1, or 0 when it appears in a flow.
func (l *loader) flows() error {
	s := l.s
	l.stepInFlow = make([]bool, len(s.Steps))
	if n, ok := l.nodes["flows"]; ok {
		items, err := l.list(n, "flows")
		if err != nil {
			return err
		}
		names := map[string]*yaml.Node{}
		for i, it := range items {
			what := fmt.Sprintf("flows[%d]", i)
			f := &Flow{Weight: 1}
			var stepsN, nameN *yaml.Node
			if err := l.fields(it, what, flowKeys, func(key string, k, v *yaml.Node) error {
				var err error
				switch key {
				case "name":
					nameN = v
					f.Name, err = l.str(v, what+".name")
				case "weight":
					f.Weight, err = l.number(v, what+".weight")
				case "steps":
					stepsN = v
				}
				return err
			}); err != nil {
				return err
			}
			if nameN == nil {
				return l.errAt(it, "%s: expected a name, found none", what)
			}
			if prev, dup := names[f.Name]; dup {
				return l.errAt(nameN, "%s.name: duplicate flow name %q (first at line %d)", what, f.Name, prev.Line)
			}
			names[f.Name] = nameN
			what = "flow " + f.Name
			if stepsN == nil {
				return l.errAt(it, "%s: expected steps: [a list of step names], found none", what)
			}
			list, err := l.list(stepsN, what+".steps")
			if err != nil {
				return err
			}
			if len(list) == 0 {
				return l.errAt(stepsN, "%s.steps: expected at least one step name, found an empty list", what)
			}
			for _, sn := range list {
				name, err := l.str(sn, what+".steps")
				if err != nil {
					return err
				}
				idx, ok := l.stepIdx[name]
				if !ok {
					return l.errAt(sn, "%s.steps: undefined step %q: expected one of %s", what, name, keyList(l.stepIdx))
				}
				f.steps = append(f.steps, idx)
				l.stepInFlow[idx] = true
			}
			if f.Weight == 0 {
				return l.errAt(it, "%s never runs: expected a weight > 0", what)
			}
			s.Flows = append(s.Flows, f)
		}
		if len(s.Steps)+len(s.Flows) > maxActivities {
			return l.errAt(n, "flows: expected at most %d steps and flows in all", maxActivities)
		}
	}
	for i, st := range s.Steps {
		if !l.weightSet[i] && l.stepInFlow[i] {
			st.Weight = 0
		}
		if st.Weight == 0 && !l.stepInFlow[i] {
			return l.errAt(l.stepNodes[i], "step %s never runs: expected a weight > 0 or a place in a flow", st.Name)
		}
	}
	return nil
}

func (l *loader) stages(connSet bool) error {
	n, ok := l.nodes["stages"]
	if !ok {
		if l.s.Settings.Duration == 0 && l.s.Settings.Requests == 0 && !l.o.LengthGiven {
			return l.errAt(l.root, "scenario: expected duration, requests or stages: nothing says how long the run goes")
		}
		return nil
	}
	st := &l.s.Settings
	items, err := l.list(n, "stages")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return l.errAt(n, "stages: expected at least one stage, found an empty list")
	}
	var peak float64
	var total time.Duration
	for i, it := range items {
		what := fmt.Sprintf("stages[%d]", i)
		var sg Stage
		var durN *yaml.Node
		kind := ""
		if err := l.fields(it, what, stageKeys, func(key string, k, v *yaml.Node) error {
			var err error
			switch key {
			case "duration":
				durN = v
				sg.Duration, err = l.duration(v, what+".duration")
			case "connections", "rate":
				if kind != "" {
					return l.errAt(k, "%s: expected connections (closed model) or rate (open model), found both", what)
				}
				kind = key
				if key == "connections" {
					var c int64
					c, err = l.integer(v, what+".connections", 0, maxConnections)
					sg.Target = float64(c)
				} else {
					sg.Target, err = l.number(v, what+".rate")
				}
				if err == nil && st.StageKind != "" && st.StageKind != key {
					err = l.errAt(k, "%s: expected %s like the stages before it (one model per run), found %s", what, st.StageKind, key)
				}
			case "ramp":
				var r string
				r, err = l.str(v, what+".ramp")
				if err == nil && r != "linear" && r != "step" {
					err = l.errAt(v, "%s.ramp: expected linear or step, found %s", what, describe(v))
				}
				sg.Step = r == "step"
			}
			return err
		}); err != nil {
			return err
		}
		if durN == nil {
			return l.errAt(it, "%s: expected a duration, found none", what)
		}
		if kind == "" {
			return l.errAt(it, "%s: expected a target: connections (closed model) or rate (open model), found none", what)
		}
		st.StageKind = kind
		peak = math.Max(peak, sg.Target)
		total += sg.Duration
		st.Stages = append(st.Stages, sg)
	}
	if total <= 0 {
		return l.errAt(n, "stages: they last 0s in all: expected at least one stage with a duration > 0")
	}
	if peak <= 0 {
		if st.StageKind == "connections" {
			return l.errAt(n, "stages: no stage opens a connection: expected a connections target > 0")
		}
		return l.errAt(n, "stages: every rate is 0: expected a rate target > 0")
	}
	if d, ok := l.nodes["duration"]; ok {
		return l.errAt(d, "duration: the stages set the run's length (%s): expected one of duration and stages", total)
	}
	if st.StageKind == "connections" && connSet {
		return l.errAt(l.keys["connections"], "connections: the stages set the number of connections: expected one of connections and connection stages")
	}
	if st.StageKind == "connections" && st.Rate > 0 {
		return l.errAt(l.keys["rate"], "rate: connection stages are the closed model, rate the open one: expected rate stages instead")
	}
	if st.StageKind == "rate" && st.Rate > 0 {
		return l.errAt(l.keys["rate"], "rate: the stages set the rate: expected one of rate and rate stages")
	}
	return nil
}

func (l *loader) thresholds() error {
	n, ok := l.nodes["thresholds"]
	if !ok {
		return nil
	}
	items, err := l.list(n, "thresholds")
	if err != nil {
		return err
	}
	for i, it := range items {
		what := fmt.Sprintf("thresholds[%d]", i)
		var t *Threshold
		if it.Kind == yaml.ScalarNode {
			expr, err := l.str(it, what)
			if err != nil {
				return err
			}
			if t, err = ParseThreshold(expr); err != nil {
				return l.errAt(it, "%s: %v", what, err)
			}
		} else {
			var exprN, stepN *yaml.Node
			abort := false
			after := DefaultAbortAfter
			if err := l.fields(it, what, thresholdKeys, func(key string, k, v *yaml.Node) error {
				var err error
				switch key {
				case "expr":
					exprN = v
				case "step":
					stepN = v
				case "abort_on_fail":
					abort, err = l.boolean(v, what+".abort_on_fail")
				case "abort_after":
					after, err = l.duration(v, what+".abort_after")
				}
				return err
			}); err != nil {
				return err
			}
			if exprN == nil {
				return l.errAt(it, "%s: expected expr: such as \"p99 < 12ms\", found none", what)
			}
			expr, err := l.str(exprN, what+".expr")
			if err != nil {
				return err
			}
			if t, err = ParseThreshold(expr); err != nil {
				return l.errAt(exprN, "%s: %v", what, err)
			}
			t.AbortOnFail, t.AbortAfter = abort, after
			if stepN != nil {
				name, err := l.str(stepN, what+".step")
				if err != nil {
					return err
				}
				idx, ok := l.stepIdx[name]
				if !ok {
					return l.errAt(stepN, "%s.step: undefined step %q: expected one of %s", what, name, keyList(l.stepIdx))
				}
				t.Step, t.step = name, idx
			}
		}
		l.s.Thresholds = append(l.s.Thresholds, t)
	}
	return nil
}

// finish makes the final checks and builds the mix.
func (l *loader) finish() error {
	s := l.s
	if s.Base == nil {
		return l.errAt(l.root, "scenario: expected base: http://HOST:PORT (or a url in each step)")
	}
	canStart := false
	for i, st := range s.Steps {
		if st.Weight > 0 && !l.firstNeeds[i] {
			canStart = true
		}
	}
	for _, f := range s.Flows {
		if !l.firstNeeds[f.steps[0]] {
			canStart = true
		}
	}
	if !canStart {
		return l.errAt(l.nodes["steps"], "steps: every step needs a captured value before it can run, so none can start: expected a weighted step (or a flow starting with one) without {{pick}}, {{take}} or {{last}} of an unseeded pool")
	}
	for _, st := range s.Steps {
		for _, c := range st.captures {
			if !l.poolUsed[l.poolIdx[c.name]] {
				c.pool = nil // only {{last}} reads it: keep nothing shared
			}
		}
	}
	for i, p := range s.Pools {
		if l.poolUsed[i] || l.seeded[i] {
			s.reported = append(s.reported, p)
		}
	}
	for _, c := range l.env.counters {
		c.Store(0) // the sample requests checked at load count from 1 too
	}
	s.mix = newMix(s.Steps, s.Flows)
	s.seed = s.Settings.Seed
	if s.seed == 0 {
		s.seed = randomSeed()
	}
	if n, ok := l.nodes["headers"]; ok {
		hs, _ := l.headerNodes(n, "headers", true)
		for _, h := range hs {
			if !strings.Contains(h.v.Value, "{{") {
				s.Headers = append(s.Headers, [2]string{h.name, h.v.Value})
			}
		}
	}
	return nil
}
