// Package template is the template language of scenario files: text with
// {{ … }} expressions (variables, counters, random values, pool values,
// captures, feed columns), compiled once when the file is loaded and
// expanded per request into a caller's buffer without allocating. Values
// are made safe where they land (Escape): percent-encoded in a request
// target, control bytes blanked in a header, JSON-escaped in a JSON body.
// See Template for the expressions, docs/scenarios.md for the file.
package template

import (
	"iter"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/random"
	"github.com/hail-loadgen/hail/internal/scenario/values"
)

// A Template is a string with {{ … }} expressions, compiled once into
// segments: literal bytes (variables and environment variables are folded
// into them at load time), counters, the request number, random integers,
// UUIDs, choices, regex-generated strings, and values taken from pools or
// from this virtual user's last capture. AppendTo expands it into a
// caller-owned buffer without allocating (beyond growing that buffer).
//
// Expressions:
//
//	{{var.NAME}}            a variable of the file (or --var)
//	{{env.NAME}}            an environment variable, read at load time
//	{{counter}}             1, 2, 3, … shared by the whole run; {{counter NAME}} for a separate one
//	{{request}}             the request's number in the run (0-based)
//	{{timestamp}}           Unix time in milliseconds when the request is built
//	{{int MIN MAX}}         a random integer in [MIN, MAX]
//	{{uuid}}                a random UUID (version 4)
//	{{choice A B "C D"}}    one of the words (or of a list variable: {{choice var.LIST}})
//	{{regex "PATTERN"}}     a random string matching PATTERN (random.Regex)
//	{{pick POOL}}           a random live value of POOL (it stays in the pool)
//	{{take POOL}}           a random live value of POOL, removed from it (used once)
//	{{last NAME}}           the value this virtual user captured last into NAME
//	{{feed.NAME.COLUMN}}    a column of the request's row of feed NAME
//	{{"text"}}              the text itself (write {{"{{"}} for a literal "{{")
type Template struct {
	segs []segment
}

type segKind uint8

const (
	segLit segKind = iota
	segCounter
	segHit
	segTime
	segInt
	segUUID
	segChoice
	segRegex
	segSlot // a pool value resolved before expansion
	segLast
	segFeed // a column of the request's row of a feed
)

// Escape says how generated values are made safe where a template lands.
type Escape uint8

// Where templates land.
const (
	Raw       Escape = iota // bodies: as is
	Target                  // request targets: percent-encode bytes outside visible ASCII
	Header                  // header values: control bytes become spaces
	JSON                    // inside a JSON string (body_json): JSON-escaped
	JSONValue               // a whole JSON value (body_json): a number as is, anything else a JSON string
)

type segment struct {
	kind    segKind
	esc     Escape
	lit     []byte
	lo      int64
	span    uint64 // int: hi-lo+1 (0: the whole 64-bit range)
	choices [][]byte
	gen     *random.Regex
	counter *atomic.Uint64
	feed    *values.Feed
	idx     int // slot, last or feed index
	col     int // feed column
}

// Ctx is the per-request state a template expands with. One per worker.
type Ctx struct {
	// Rand draws the random values ({{int}}, {{uuid}}, {{choice}}, {{regex}}).
	Rand *random.Rand
	// Hit is the request's number in the run ({{request}}).
	Hit uint64
	// Slots are the pool values resolved for this request, in the order of
	// the step's Env.Refs.
	Slots []string
	// Last is, per capture name, the value this virtual user captured last.
	Last [][]byte
	// Rows is, per feed, the row this request (or flow iteration) uses; -1
	// none yet.
	Rows    []int32
	scratch []byte
}

// Static reports whether the template has no expression left after
// folding: it expands to the same bytes every time.
func (t *Template) Static() bool {
	return len(t.segs) == 0 || len(t.segs) == 1 && t.segs[0].kind == segLit
}

// Literal is the expansion of a static template.
func (t *Template) Literal() []byte {
	if len(t.segs) == 0 {
		return nil
	}
	return t.segs[0].lit
}

// AppendTo appends the expansion of t to dst. Generated values are made
// safe for where the template lands (percent-encoded in a request target,
// control bytes replaced in a header value, as they are in a body).
func (t *Template) AppendTo(dst []byte, c *Ctx) []byte {
	for i := range t.segs {
		s := &t.segs[i]
		if s.kind == segLit {
			dst = append(dst, s.lit...)
			continue
		}
		start := len(dst)
		switch s.kind {
		case segCounter:
			dst = strconv.AppendUint(dst, s.counter.Add(1), 10)
			continue
		case segHit:
			dst = strconv.AppendUint(dst, c.Hit, 10)
			continue
		case segTime:
			dst = strconv.AppendInt(dst, time.Now().UnixMilli(), 10)
			continue
		case segInt:
			var v uint64
			if s.span == 0 {
				v = c.Rand.Uint64()
			} else {
				v = c.Rand.Uint64n(s.span)
			}
			dst = strconv.AppendInt(dst, s.lo+int64(v), 10)
			continue
		case segUUID:
			dst = appendUUID(dst, c.Rand)
			if s.esc != JSONValue {
				continue
			}
		case segChoice:
			dst = append(dst, s.choices[c.Rand.Intn(len(s.choices))]...)
		case segRegex:
			dst = s.gen.AppendTo(dst, c.Rand)
		case segSlot:
			dst = append(dst, c.Slots[s.idx]...)
		case segLast:
			dst = append(dst, c.Last[s.idx]...)
		case segFeed:
			dst = append(dst, s.feed.Value(c.Rows[s.idx], s.col)...)
		}
		if s.esc != Raw {
			dst = c.escape(dst, start, s.esc)
		}
	}
	return dst
}

// Concat joins templates into one, merging adjacent literal bytes.
// It takes time linear in the parts' total size: the first merge into a
// literal copies it into a buffer of t's own (the parts' bytes are never
// written), later merges append to that buffer.
func Concat(parts ...*Template) *Template {
	t := &Template{}
	owned := false // t's last literal is t's own buffer
	for _, p := range parts {
		for _, s := range p.segs {
			n := len(t.segs)
			if s.kind != segLit || n == 0 || t.segs[n-1].kind != segLit {
				t.segs = append(t.segs, s)
				owned = false
				continue
			}
			last := &t.segs[n-1]
			if !owned {
				last.lit = append(make([]byte, 0, 2*(len(last.lit)+len(s.lit))), last.lit...)
				owned = true
			}
			last.lit = append(last.lit, s.lit...)
		}
	}
	for i := range t.segs { // nobody appending to a Literal writes into t
		t.segs[i].lit = t.segs[i].lit[:len(t.segs[i].lit):len(t.segs[i].lit)]
	}
	return t
}

// Text is a template of fixed text.
func Text(s string) *Template {
	if s == "" {
		return &Template{}
	}
	return &Template{segs: []segment{{kind: segLit, lit: []byte(s)}}}
}

// escape makes dst[start:] safe for mode, in place when nothing needs it.
func (c *Ctx) escape(dst []byte, start int, mode Escape) []byte {
	if mode == JSON || mode == JSONValue {
		return c.escapeJSON(dst, start, mode == JSONValue)
	}
	bad := func(b byte) bool {
		if mode == Target {
			return b <= 0x20 || b >= 0x7f
		}
		return b < 0x20 && b != '\t' || b == 0x7f
	}
	i := start
	for i < len(dst) && !bad(dst[i]) {
		i++
	}
	if i == len(dst) {
		return dst
	}
	c.scratch = append(c.scratch[:0], dst[i:]...)
	dst = dst[:i]
	const hex = "0123456789ABCDEF"
	for _, b := range c.scratch {
		switch {
		case !bad(b):
			dst = append(dst, b)
		case mode == Target:
			dst = append(dst, '%', hex[b>>4], hex[b&15])
		default:
			dst = append(dst, ' ')
		}
	}
	return dst
}

// escapeJSON JSON-escapes dst[start:] in place when nothing needs it; as
// a whole value, a JSON number stays as it is and anything else becomes a
// quoted JSON string.
func (c *Ctx) escapeJSON(dst []byte, start int, value bool) []byte {
	v := dst[start:]
	if value && IsJSONNumber(v) {
		return dst
	}
	i := 0
	for i < len(v) && v[i] >= 0x20 && v[i] != '"' && v[i] != '\\' {
		i++
	}
	if i == len(v) && !value {
		return dst
	}
	c.scratch = append(c.scratch[:0], v...)
	dst = dst[:start]
	if value {
		dst = append(dst, '"')
	}
	dst = AppendJSONEscaped(dst, c.scratch)
	if value {
		dst = append(dst, '"')
	}
	return dst
}

// AppendJSONEscaped appends s escaped for a JSON string (without quotes).
func AppendJSONEscaped(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	for _, b := range s {
		switch {
		case b == '"' || b == '\\':
			dst = append(dst, '\\', b)
		case b == '\n':
			dst = append(dst, '\\', 'n')
		case b == '\r':
			dst = append(dst, '\\', 'r')
		case b == '\t':
			dst = append(dst, '\\', 't')
		case b < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&15])
		default:
			dst = append(dst, b)
		}
	}
	return dst
}

// IsJSONNumber reports whether b is a number as JSON writes it:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func IsJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

func appendUUID(dst []byte, r *random.Rand) []byte {
	const hex = "0123456789abcdef"
	a, b := r.Uint64(), r.Uint64()
	a = a&^(0xf<<12) | 4<<12   // version 4 (bits 48-51 of the first 8 bytes)
	b = b&^(0x3<<62) | 0x2<<62 // variant 10
	var u [16]byte
	for i := range 8 {
		u[i] = byte(a >> (56 - 8*i))
		u[8+i] = byte(b >> (56 - 8*i))
	}
	for i, x := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[x>>4], hex[x&15])
	}
	return dst
}

// Value is a variable: a string, or a list (for choice).
type Value struct {
	// Text is a string variable's value.
	Text string
	// List is a list variable's values (nil for a string).
	List []string
}

// PoolRef is a pool value a step needs before it can be built: {{pick
// POOL}} or {{take POOL}}. The step resolves it into Ctx.Slots, in the
// order of its references.
type PoolRef struct {
	// Pool is the pool's index (Env.Pools).
	Pool int
	// Take removes the value from the pool ({{take}}); else it stays.
	Take bool
}

// Env is what templates compile against: the file's names, and where the
// step being compiled records what it needs per request. A nil Refs,
// Lasts or FeedRefs forbids that kind of expression (outside steps).
type Env struct {
	// Vars are the file's variables (and --var's), by name.
	Vars map[string]Value
	// LookupEnv reads an environment variable ({{env.NAME}}), at load.
	LookupEnv func(string) (string, bool)
	// Counters are the run's counters by name ("" for {{counter}}),
	// shared by every template that names them; Compile adds new ones.
	Counters map[string]*atomic.Uint64
	// MaxRepeat bounds {{regex}}'s unbounded repeats (random.CompileRegex).
	MaxRepeat int
	// Pools are the pools that are filled (by a capture or seeded), by
	// name: their index.
	Pools map[string]int
	// Captures are the capture names, for {{last}}: their index (Ctx.Last).
	Captures map[string]int
	// Refs collects the current step's pool references.
	Refs *[]PoolRef
	// Lasts collects the current step's {{last}} references (capture
	// indexes).
	Lasts *[]int
	// Feeds are the feeds by name: their index in FeedList (and Ctx.Rows).
	Feeds map[string]int
	// FeedList are the feeds, by index.
	FeedList []*values.Feed
	// FeedRefs collects the feeds the current step needs a row of.
	FeedRefs *[]int
	// Where is what is being compiled, for messages ("step create").
	Where string
}

// Error is a template problem at a byte offset of its source.
type Error struct {
	// Offset is where in the source the problem is (bytes).
	Offset int
	// Msg says what was wrong and what was expected.
	Msg string
}

// Error is the message; the loader adds where the template is.
func (e *Error) Error() string { return e.Msg }

// Compile compiles src; esc says where it lands.
func Compile(src string, env *Env, esc Escape) (*Template, error) {
	t := &Template{}
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			t.segs = append(t.segs, segment{kind: segLit, lit: lit})
			lit = nil
		}
	}
	i := 0
	for i < len(src) {
		j := strings.Index(src[i:], "{{")
		k := strings.Index(src[i:], "}}")
		if k >= 0 && (j < 0 || k < j) {
			return nil, &Error{i + k, "found \"}}\" without an opening \"{{\": write {{\"}}\"}} for the literal text"}
		}
		if j < 0 {
			lit = append(lit, src[i:]...)
			break
		}
		lit = append(lit, src[i:i+j]...)
		open := i + j
		end, err := exprEnd(src, open+2)
		if err != nil {
			return nil, err
		}
		seg, err := compileExpr(src[open+2:end], open, env)
		if err != nil {
			return nil, err
		}
		if seg.kind == segLit {
			lit = append(lit, seg.lit...)
		} else {
			flush()
			seg.esc = esc
			t.segs = append(t.segs, seg)
		}
		i = end + 2
	}
	flush()
	return t, nil
}

// exprEnd finds the "}}" closing the expression that starts at from,
// skipping quoted strings.
func exprEnd(src string, from int) (int, error) {
	var quote byte
	for i := from; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '}' && i+1 < len(src) && src[i+1] == '}':
			return i, nil
		}
	}
	if quote != 0 {
		return 0, &Error{from - 2, "unterminated quoted string in {{ … }}: expected a closing " + string(quote)}
	}
	return 0, &Error{from - 2, "unclosed \"{{\": expected \"}}\" after the expression"}
}

// Literals yields t's literal text piece by piece, in order: what lies
// outside its expressions, variables folded in.
func (t *Template) Literals() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for _, sg := range t.segs {
			if sg.kind == segLit && !yield(sg.lit) {
				return
			}
		}
	}
}

// CompileJSON compiles src, a string of a JSON document (body_json, gRPC
// data written as YAML), into its JSON text: a quoted string whose literal
// text and generated values are JSON-escaped. With number, a src that is
// one expression alone is a JSON number when what it yields is one.
func CompileJSON(src string, env *Env, number bool) (*Template, error) {
	t, err := Compile(src, env, JSON)
	if err != nil {
		return nil, err
	}
	if number && isOneExpr(src) {
		if t.Static() {
			if lit := t.Literal(); IsJSONNumber(lit) {
				return Text(string(lit)), nil
			}
		} else {
			t.segs[0].esc = JSONValue
			return t, nil
		}
	}
	for i := range t.segs {
		if s := &t.segs[i]; s.kind == segLit {
			s.lit = AppendJSONEscaped(nil, s.lit)
		}
	}
	return Concat(Text(`"`), t, Text(`"`)), nil
}

// isOneExpr reports whether src is exactly one {{ … }} expression.
func isOneExpr(src string) bool {
	if !strings.HasPrefix(src, "{{") {
		return false
	}
	end, err := exprEnd(src, 2)
	return err == nil && end == len(src)-2
}

// Fixed expands src, which may use variables, environment variables and
// quoted literals but nothing that varies per request: it returns src's
// text, or the first expression that varies (nil when none does).
func Fixed(src string, env *Env) (string, *Expr, error) {
	for _, e := range Exprs(src) {
		seg, err := compileExpr(e.Text, e.Offset, env)
		if err != nil {
			return "", nil, err
		}
		if seg.kind != segLit {
			return "", &e, nil
		}
	}
	t, err := Compile(src, env, Raw)
	if err != nil {
		return "", nil, err
	}
	return string(t.Literal()), nil, nil
}

// keyList lists a map's keys for messages.
func keyList[V any](m map[string]V) string {
	if len(m) == 0 {
		return "none"
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
