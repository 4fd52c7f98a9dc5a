// The expressions inside {{ }}: splitting one into tokens, compiling each
// function (var., env., feed., counter, request, timestamp, uuid, int,
// choice, regex, pick, take, last) or quoted string into a template
// segment, and listing a source's expressions (Exprs) for the loader.

package template

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hail-loadgen/hail/internal/random"
)

// token is one word of an expression, or a quoted string (unquoted).
type token struct {
	s      string
	quoted bool
}

// tokens splits an expression into words and quoted strings.
func tokens(expr string, base int) ([]token, error) {
	var out []token
	i := 0
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			j := i + 1
			var b strings.Builder
			for j < len(expr) && expr[j] != '"' {
				if expr[j] == '\\' && j+1 < len(expr) {
					j++
				}
				b.WriteByte(expr[j])
				j++
			}
			out = append(out, token{b.String(), true})
			i = j + 1
		case c == '\'':
			j := strings.IndexByte(expr[i+1:], '\'')
			if j < 0 {
				j = len(expr) - i - 1
			}
			out = append(out, token{expr[i+1 : i+1+j], true})
			i = i + 2 + j
		default:
			j := i
			for j < len(expr) && !strings.ContainsRune(" \t\r\n\"'", rune(expr[j])) {
				j++
			}
			out = append(out, token{expr[i:j], false})
			i = j
		}
	}
	return out, nil
}

// functions lists the expressions for error messages.
const functions = `var.NAME, env.NAME, feed.NAME.COLUMN, counter, request, timestamp, int MIN MAX, uuid, choice A B …, regex "PATTERN", pick POOL, take POOL, last NAME or a "quoted string"`

// compileExpr compiles the expression inside one {{ }}; off is its offset
// in the template, for errors.
func compileExpr(expr string, off int, env *Env) (segment, error) {
	c := &exprCall{expr: strings.TrimSpace(expr), off: off, env: env}
	toks, _ := tokens(expr, off)
	if len(toks) == 0 {
		return c.fail("empty {{ }}: expected one of %s", functions)
	}
	head := toks[0]
	c.name, c.args = head.s, toks[1:]
	if head.quoted {
		if len(c.args) > 0 {
			return c.fail("{{%s}}: a quoted string stands alone; found more after it", c.expr)
		}
		return segment{kind: segLit, lit: []byte(head.s)}, nil
	}
	name := c.name
	switch {
	case strings.HasPrefix(name, "var."):
		return c.variable()
	case strings.HasPrefix(name, "env."):
		return c.environ()
	case strings.HasPrefix(name, "feed."):
		return c.feed()
	}
	switch name {
	case "counter":
		return c.counter()
	case "request":
		return c.noArgs(segHit)
	case "timestamp":
		return c.noArgs(segTime)
	case "uuid":
		return c.noArgs(segUUID)
	case "int":
		return c.randInt()
	case "choice":
		return c.choice()
	case "regex":
		if err := c.nargs(1, `regex "PATTERN"`); err != nil {
			return segment{}, err
		}
		g, err := random.CompileRegex(c.args[0].s, env.MaxRepeat)
		if err != nil {
			return c.fail("%v", err)
		}
		return segment{kind: segRegex, gen: g}, nil
	case "pick", "take":
		return c.poolRef()
	case "last":
		return c.last()
	}
	if _, ok := env.Vars[name]; ok {
		return c.fail("unknown expression %q: did you mean {{var.%s}}?", name, name)
	}
	return c.fail("unknown expression %q: expected one of %s", name, functions)
}

// exprCall is one {{ }} expression being compiled: its text (trimmed), its
// offset in the template, its function name and arguments.
type exprCall struct {
	expr string
	off  int
	env  *Env
	name string
	args []token
}

// fail is an error at the expression's offset.
func (c *exprCall) fail(format string, a ...any) (segment, error) {
	return segment{}, &Error{c.off, fmt.Sprintf(format, a...)}
}

// nargs checks the number of arguments; usage is the expected form.
func (c *exprCall) nargs(n int, usage string) error {
	if len(c.args) != n {
		_, err := c.fail("{{%s}}: expected {{%s}}", c.expr, usage)
		return err
	}
	return nil
}

// noArgs is a function without arguments: request, timestamp, uuid.
func (c *exprCall) noArgs(kind segKind) (segment, error) {
	if err := c.nargs(0, c.name); err != nil {
		return segment{}, err
	}
	return segment{kind: kind}, nil
}

// variable is {{var.NAME}}: a file (or --var) variable, not a list.
func (c *exprCall) variable() (segment, error) {
	if err := c.nargs(0, c.name); err != nil {
		return segment{}, err
	}
	name := c.name[4:]
	v, ok := c.env.Vars[name]
	if !ok {
		return c.fail("undefined variable %q: expected one of the file's variables (%s)", name, keyList(c.env.Vars))
	}
	if v.List != nil {
		return c.fail("variable %q is a list: use {{choice %s}} to pick one of its values", name, c.name)
	}
	return segment{kind: segLit, lit: []byte(v.Text)}, nil
}

// environ is {{env.NAME}}: an environment variable read at load.
func (c *exprCall) environ() (segment, error) {
	if err := c.nargs(0, c.name); err != nil {
		return segment{}, err
	}
	v, ok := c.env.LookupEnv(c.name[4:])
	if !ok {
		return c.fail("environment variable %s is not set: expected it to be defined when the scenario is loaded", c.name[4:])
	}
	return segment{kind: segLit, lit: []byte(v)}, nil
}

// counter is {{counter}} or {{counter NAME}}: named counters are shared
// by every template that names them.
func (c *exprCall) counter() (segment, error) {
	if len(c.args) > 1 {
		return c.fail("{{%s}}: expected {{counter}} or {{counter NAME}}", c.expr)
	}
	cname := ""
	if len(c.args) == 1 {
		cname = c.args[0].s
	}
	n := c.env.Counters[cname]
	if n == nil {
		n = new(atomic.Uint64)
		c.env.Counters[cname] = n
	}
	return segment{kind: segCounter, counter: n}, nil
}

// randInt is {{int MIN MAX}}.
func (c *exprCall) randInt() (segment, error) {
	if err := c.nargs(2, "int MIN MAX"); err != nil {
		return segment{}, err
	}
	args := c.args
	lo, err1 := strconv.ParseInt(args[0].s, 10, 64)
	hi, err2 := strconv.ParseInt(args[1].s, 10, 64)
	if err1 != nil || err2 != nil {
		return c.fail("{{%s}}: expected two whole numbers, found %q and %q", c.expr, args[0].s, args[1].s)
	}
	if hi < lo {
		return c.fail("{{%s}}: expected MIN ≤ MAX, found %d > %d", c.expr, lo, hi)
	}
	return segment{kind: segInt, lo: lo, span: uint64(hi-lo) + 1}, nil
}

// choice is {{choice a b c}} or {{choice var.LIST}}.
func (c *exprCall) choice() (segment, error) {
	args := c.args
	if len(args) == 0 {
		return c.fail("{{choice}}: expected at least one value, as {{choice a b c}} or {{choice var.LIST}}")
	}
	var cs [][]byte
	if len(args) == 1 && !args[0].quoted && strings.HasPrefix(args[0].s, "var.") {
		v, ok := c.env.Vars[args[0].s[4:]]
		if !ok {
			return c.fail("undefined variable %q: expected one of the file's variables (%s)", args[0].s[4:], keyList(c.env.Vars))
		}
		if v.List == nil {
			return segment{kind: segLit, lit: []byte(v.Text)}, nil
		}
		if len(v.List) == 0 {
			return c.fail("variable %q is an empty list: {{choice}} needs at least one value", args[0].s[4:])
		}
		for _, s := range v.List {
			cs = append(cs, []byte(s))
		}
	} else {
		for _, a := range args {
			cs = append(cs, []byte(a.s))
		}
	}
	if len(cs) == 1 {
		return segment{kind: segLit, lit: cs[0]}, nil
	}
	return segment{kind: segChoice, choices: cs}, nil
}

// poolRef is {{pick POOL}} or {{take POOL}}, allowed in steps only.
func (c *exprCall) poolRef() (segment, error) {
	if err := c.nargs(1, c.name+" POOL"); err != nil {
		return segment{}, err
	}
	env, pool := c.env, c.args[0].s
	p, ok := env.Pools[pool]
	if !ok {
		return c.fail("undefined pool %q: no step captures into it and the file does not seed it (known pools: %s)", pool, keyList(env.Pools))
	}
	if env.Refs == nil {
		return c.fail("{{%s %s}} is not allowed in %s: pool values belong to steps", c.name, pool, env.Where)
	}
	*env.Refs = append(*env.Refs, PoolRef{Pool: p, Take: c.name == "take"})
	return segment{kind: segSlot, idx: len(*env.Refs) - 1}, nil
}

// feed is {{feed.NAME.COLUMN}}: a column of the request's row of a feed,
// in steps only.
func (c *exprCall) feed() (segment, error) {
	if err := c.nargs(0, "feed.NAME.COLUMN"); err != nil {
		return segment{}, err
	}
	env := c.env
	name, col, ok := strings.Cut(c.name[len("feed."):], ".")
	if !ok {
		return c.fail("{{%s}}: expected {{feed.NAME.COLUMN}}, such as {{feed.users.email}}", c.expr)
	}
	i, ok := env.Feeds[name]
	if !ok {
		return c.fail("undefined feed %q: expected one of the file's feeds (%s)", name, keyList(env.Feeds))
	}
	f := env.FeedList[i]
	ci, ok := f.Column(col)
	if !ok {
		return c.fail("feed %q has no column %q: expected one of %s", name, col, strings.Join(f.Columns(), ", "))
	}
	if env.FeedRefs == nil {
		return c.fail("{{%s}} is not allowed in %s: feed rows belong to steps", c.name, env.Where)
	}
	if !slices.Contains(*env.FeedRefs, i) {
		*env.FeedRefs = append(*env.FeedRefs, i)
	}
	return segment{kind: segFeed, feed: f, idx: i, col: ci}, nil
}

// last is {{last NAME}}: this virtual user's latest capture, in steps only.
func (c *exprCall) last() (segment, error) {
	if err := c.nargs(1, "last NAME"); err != nil {
		return segment{}, err
	}
	env, name := c.env, c.args[0].s
	idx, ok := env.Captures[name]
	if !ok {
		return c.fail("undefined capture %q: no step captures into it (known captures: %s)", name, keyList(env.Captures))
	}
	if env.Lasts == nil {
		return c.fail("{{last %s}} is not allowed in %s: captured values belong to steps", name, env.Where)
	}
	*env.Lasts = append(*env.Lasts, idx)
	return segment{kind: segLast, idx: idx}, nil
}

// Expr is one {{ … }} expression of a source string.
type Expr struct {
	// Offset is where its "{{" is in the source (bytes).
	Offset int
	// Text is what lies between "{{" and "}}".
	Text string
}

// Exprs lists src's expressions, skipping quoted strings as Compile does;
// a malformed template yields what precedes the fault (compiling it
// reports the fault).
func Exprs(src string) []Expr {
	var out []Expr
	for i := 0; i < len(src); {
		j := strings.Index(src[i:], "{{")
		if j < 0 {
			break
		}
		open := i + j
		end, err := exprEnd(src, open+2)
		if err != nil {
			break
		}
		out = append(out, Expr{open, src[open+2 : end]})
		i = end + 2
	}
	return out
}

// VarRef is the variable e names ({{var.NAME}}), or "".
func (e Expr) VarRef() string {
	toks, _ := tokens(e.Text, 0)
	if len(toks) == 1 && !toks[0].quoted && strings.HasPrefix(toks[0].s, "var.") {
		return toks[0].s[len("var."):]
	}
	return ""
}
