package random

import (
	"fmt"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// DefaultMaxRepeat is how many extra repeats x*, x+ and x{n,} may make in a
// generated string (oha's --max-repeat default).
const DefaultMaxRepeat = 4

// maxGenLen bounds the longest string a generator may produce.
const maxGenLen = 1 << 20

// Regex generates random strings that match a regular expression, as
// oha's --rand-regex-url does with the rand_regex crate: x* repeats 0 to
// max-repeat times, x+ 1 to 1+max-repeat, x{n,} n to n+max-repeat; bounded
// repeats keep their bounds. Anchors and word boundaries generate nothing.
// Classes that cover most of Unicode (., \W, \S, [^…]) generate printable
// ASCII, so that generated URLs and headers stay usable. It is compiled
// once; AppendTo allocates nothing beyond growing dst.
type Regex struct {
	pattern string
	root    *gnode
}

type gnode struct {
	op       syntax.Op
	runes    []rune // literal
	fold     bool   // literal: pick a random case
	class    []rune // char class: lo, hi pairs
	cum      []uint32
	total    uint32
	min, max int
	subs     []*gnode
}

// printable is the class that stands in for "almost anything".
var printable = []rune{0x20, 0x7e}

// CompileRegex compiles pattern (Go/RE2 syntax, Perl flags) into a
// generator. maxRepeat is the extra repeat count of unbounded repeats.
func CompileRegex(pattern string, maxRepeat int) (*Regex, error) {
	if maxRepeat < 0 || maxRepeat > 1000 {
		return nil, fmt.Errorf("max repeat %d: expected 0 to 1000", maxRepeat)
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("bad regex %q: %s", pattern, regexMessage(err))
	}
	root, err := buildGen(re, maxRepeat)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %v", pattern, err)
	}
	if n := maxLen(root); n > maxGenLen {
		return nil, fmt.Errorf("regex %q can generate strings of up to %d bytes: at most %d allowed (lower the repeat counts)", pattern, n, maxGenLen)
	}
	return &Regex{pattern: pattern, root: root}, nil
}

// regexMessage trims regexp/syntax's error into "what: where".
func regexMessage(err error) string {
	if e, ok := err.(*syntax.Error); ok {
		return fmt.Sprintf("%s at %q", e.Code, e.Expr)
	}
	return err.Error()
}

// Pattern is the source regular expression.
func (g *Regex) Pattern() string { return g.pattern }

func buildGen(re *syntax.Regexp, maxRepeat int) (*gnode, error) {
	n := &gnode{op: re.Op}
	switch re.Op {
	case syntax.OpNoMatch:
		return nil, fmt.Errorf("it matches nothing, so nothing can be generated")
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		n.op = syntax.OpEmptyMatch
	case syntax.OpLiteral:
		n.runes = append([]rune(nil), re.Rune...)
		n.fold = re.Flags&syntax.FoldCase != 0
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return nil, fmt.Errorf("it matches nothing (an empty character class), so nothing can be generated")
		}
		cls := re.Rune
		var size int64
		for i := 0; i+1 < len(cls); i += 2 {
			size += int64(cls[i+1]-cls[i]) + 1
		}
		if size > 0x10000 {
			if ascii := intersect(cls, printable); len(ascii) > 0 {
				cls = ascii
			}
		}
		n.setClass(cls)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		n.op = syntax.OpCharClass
		n.setClass(printable)
	case syntax.OpCapture:
		sub, err := buildGen(re.Sub[0], maxRepeat)
		if err != nil {
			return nil, err
		}
		return sub, nil
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		sub, err := buildGen(re.Sub[0], maxRepeat)
		if err != nil {
			return nil, err
		}
		n.op = syntax.OpRepeat
		n.subs = []*gnode{sub}
		switch re.Op {
		case syntax.OpStar:
			n.min, n.max = 0, maxRepeat
		case syntax.OpPlus:
			n.min, n.max = 1, 1+maxRepeat
		case syntax.OpQuest:
			n.min, n.max = 0, 1
		default:
			n.min, n.max = re.Min, re.Max
			if n.max < 0 {
				n.max = n.min + maxRepeat
			}
		}
	case syntax.OpConcat, syntax.OpAlternate:
		for _, s := range re.Sub {
			sub, err := buildGen(s, maxRepeat)
			if err != nil {
				if re.Op == syntax.OpAlternate && len(re.Sub) > 1 {
					continue // an impossible branch of an alternation is just never taken
				}
				return nil, err
			}
			n.subs = append(n.subs, sub)
		}
		if len(n.subs) == 0 {
			return nil, fmt.Errorf("no branch of the alternation can match")
		}
	default:
		return nil, fmt.Errorf("unsupported construct %v", re.Op)
	}
	return n, nil
}

func (n *gnode) setClass(cls []rune) {
	n.class = cls
	var t uint32
	for i := 0; i+1 < len(cls); i += 2 {
		t += uint32(cls[i+1]-cls[i]) + 1
		n.cum = append(n.cum, t)
	}
	n.total = t
}

// intersect returns the intersection of two sorted range lists.
func intersect(a, b []rune) []rune {
	var out []rune
	for i := 0; i+1 < len(a); i += 2 {
		for j := 0; j+1 < len(b); j += 2 {
			lo, hi := max(a[i], b[j]), min(a[i+1], b[j+1])
			if lo <= hi {
				out = append(out, lo, hi)
			}
		}
	}
	return out
}

// maxLen is the longest output of n in bytes, saturating above maxGenLen.
func maxLen(n *gnode) int {
	sat := func(x int) int { return min(x, maxGenLen+1) }
	switch n.op {
	case syntax.OpLiteral:
		l := 0
		for _, r := range n.runes {
			l += utf8.RuneLen(r) + 1 // folding may change the encoded length a little
		}
		return sat(l)
	case syntax.OpCharClass:
		return utf8.RuneLen(n.class[len(n.class)-1])
	case syntax.OpRepeat:
		return sat(n.max * maxLen(n.subs[0]))
	case syntax.OpConcat:
		l := 0
		for _, s := range n.subs {
			l = sat(l + maxLen(s))
		}
		return l
	case syntax.OpAlternate:
		l := 0
		for _, s := range n.subs {
			l = max(l, maxLen(s))
		}
		return l
	}
	return 0
}

// AppendTo appends one generated string to dst.
func (g *Regex) AppendTo(dst []byte, r *Rand) []byte { return g.root.gen(dst, r) }

// String returns one generated string (allocates; for tools and tests).
func (g *Regex) String(r *Rand) string { return string(g.AppendTo(nil, r)) }

func (n *gnode) gen(dst []byte, r *Rand) []byte {
	switch n.op {
	case syntax.OpLiteral:
		for _, c := range n.runes {
			if n.fold {
				c = randomFold(c, r)
			}
			dst = utf8.AppendRune(dst, c)
		}
	case syntax.OpCharClass:
		k := uint32(r.Uint64n(uint64(n.total)))
		i := 0
		for n.cum[i] <= k {
			i++
		}
		lo := n.cum[i] - (uint32(n.class[2*i+1]-n.class[2*i]) + 1)
		dst = utf8.AppendRune(dst, n.class[2*i]+rune(k-lo))
	case syntax.OpRepeat:
		count := n.min
		if n.max > n.min {
			count += r.Intn(n.max - n.min + 1)
		}
		for range count {
			dst = n.subs[0].gen(dst, r)
		}
	case syntax.OpConcat:
		for _, s := range n.subs {
			dst = s.gen(dst, r)
		}
	case syntax.OpAlternate:
		dst = n.subs[r.Intn(len(n.subs))].gen(dst, r)
	}
	return dst
}

// randomFold picks a random member of c's case-folding orbit.
func randomFold(c rune, r *Rand) rune {
	if c < utf8.RuneSelf {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			if r.Uint64()&1 == 0 {
				return unicode.ToUpper(c)
			}
			return unicode.ToLower(c)
		}
		return c
	}
	k := r.Intn(4)
	f := c
	for range k {
		f = unicode.SimpleFold(f)
	}
	return f
}
